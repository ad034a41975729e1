/* The device interface (DESIGN.md section 2): one vtable that the CPU
 * interpreter (runtime/cpu_device.c) and the CUDA runtime
 * (runtime/cuda_device.c) both implement, so `kforge run --backend
 * cpu|cuda|ptx`, the golden tests and the benchmarks share one path.
 *
 * Lifecycle: kf_device_open -> buffers and pipelines -> dispatch -> destroy
 * everything -> kf_device_close. Nothing here prints, exits or aborts. */
#ifndef KF_DEVICE_H
#define KF_DEVICE_H

#include "../ir/kforge.h"

typedef enum { KF_BACKEND_CPU, KF_BACKEND_CUDA, KF_BACKEND_PTX } kf_backend;

typedef struct kf_device kf_device;
typedef struct kf_buffer kf_buffer;
typedef struct kf_pipeline kf_pipeline;

/* One argument in binding order: a buffer (a view of one) or a value. */
typedef struct {
    kf_buffer *buf;       /* NULL for scalars/vectors */
    kf_value value;
} kf_arg;

/* An explicit launch shape; zeros mean "from the schedule". */
typedef struct {
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t dyn_shared;  /* dynamic shared-memory bytes */
    uint64_t count;       /* element count for schedules without a grid */
} kf_launch;

typedef enum {
    KF_DISPATCH_SYNC = 0,  /* launch, wait, report faults */
    KF_DISPATCH_ASYNC,     /* no host fence; the next read or sync is the barrier */
    KF_DISPATCH_TIMED,     /* sync, and *ms receives the device time */
} kf_dispatch_mode;

/* Opens a device of the backend (ordinal: GPU index; ignored for CPU).
 * A missing driver, GPU or NVRTC is KF_ERR_DEVICE with a clear message. */
kf_status kf_device_open(kf_backend backend, int ordinal, kf_device **out, kf_error *err);
void kf_device_close(kf_device *dev);
const char *kf_device_name(const kf_device *dev);

/* Buffers: `count` elements of type elem (scalar or vector), zero-filled. */
kf_status kf_buffer_create(kf_device *dev, kf_type elem, size_t count, kf_buffer **out, kf_error *err);
/* A view of `count` elements starting at element `offset` (same element
 * type), sharing storage; destroy views before their parent. */
kf_status kf_buffer_view(kf_buffer *parent, size_t offset, size_t count, kf_buffer **out, kf_error *err);
kf_status kf_buffer_upload(kf_buffer *b, const void *src, size_t bytes, kf_error *err);
kf_status kf_buffer_download(kf_buffer *b, void *dst, size_t bytes, kf_error *err);
size_t kf_buffer_bytes(const kf_buffer *b);
kf_type kf_buffer_elem(const kf_buffer *b);
void kf_buffer_destroy(kf_buffer *b);

/* A compiled, loaded kernel of a module (the module must outlive it). */
kf_status kf_pipeline_create(kf_device *dev, const kf_module *m, const kf_ir_kernel *k,
                             kf_pipeline **out, kf_error *err);
void kf_pipeline_destroy(kf_pipeline *p);

/* Validates the arguments against the kernel's parameters and the launch
 * against device limits, then runs it. launch may be NULL (schedule +
 * count 0). ms may be NULL unless mode is TIMED. */
kf_status kf_dispatch(kf_pipeline *p, const kf_arg *args, uint32_t nargs, const kf_launch *launch,
                      kf_dispatch_mode mode, float *ms, kf_error *err);
/* Waits for all queued work; reports asynchronous faults. */
kf_status kf_device_sync(kf_device *dev, kf_error *err);

#endif
