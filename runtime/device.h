/* The device interface (DESIGN.md section 2): one vtable that the CPU
 * interpreter (runtime/cpu_device.c) and the CUDA runtime
 * (runtime/cuda_device.c) both implement, so `kforge run --backend
 * cpu|cuda|ptx`, the golden tests and the benchmarks share one path.
 *
 * The interface itself is public: devices, buffers, pipelines, dispatch,
 * plans and timing are declared in include/kforge.h, with the ownership
 * rules. This header adds what only the library, its tools and its tests
 * see. Lifecycle: kf_device_open -> buffers and pipelines -> dispatch ->
 * destroy everything -> kf_device_close. Nothing here prints, exits or
 * aborts. */
#ifndef KF_DEVICE_H
#define KF_DEVICE_H

#include "../include/kforge.h"
#include "../ir/module.h"

/* Benchmark reference: launches the plan n times straight through
 * cuLaunchKernel (nothing of kforge in between), waits, and gives host
 * microseconds per launch. CUDA devices only. */
kf_status kf_plan_bench_bare(kf_plan *plan, uint32_t n, double *us_per_launch, kf_error *err);

/* Calls made so far to the runtime's one allocation function (every
 * device, buffer, pipeline, plan and launch-data block goes through it;
 * only texts handed to the caller to kf_free are malloc'd); lets tests
 * prove a path allocates nothing. */
uint64_t kf_rt_alloc_count(void);

/* Benchmark reference, as nccl-tests measures NCCL: n in-place sum
 * all-reduces of bufs[i][0..count) straight through ncclAllReduce (one
 * ncclGroupStart/End per all-reduce, nothing of kforge in between), timed
 * with each rank's device events from before the first to after the last;
 * *us: the slowest rank's microseconds per all-reduce. A communicator over
 * several GPUs only (KF_ERR_USAGE otherwise: there is no NCCL to compare). */
kf_status kf_comm_bench_bare(kf_comm *c, kf_buffer *const *bufs, size_t count, uint32_t n, double *us,
                             kf_error *err);

#endif
