/* The CPU interpreter of core IR: executes one kernel launch exactly as the
 * GPU would (LANGUAGE.md), reporting undefined behaviour instead of
 * computing garbage. It is the reference back end for the golden tests.
 *
 * Every thread of a block has its own registers and program counter into
 * kernel->ins; a block runs its threads in warps of 32 until each reaches a
 * barrier, a warp operation, or the end; barriers and warp ops then complete
 * together. Blocks run one after another. */
#ifndef KF_INTERP_H
#define KF_INTERP_H

#include "module.h"

/* One launch argument, in the kernel's binding order. */
typedef struct {
    bool is_buffer;
    kf_value value;      /* scalars/vectors */
    void *data;          /* buffers: host memory */
    size_t bytes;        /* buffers: size in bytes */
} kf_interp_arg;

typedef struct {
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t dyn_shared;     /* bytes of dynamic shared memory (the `shared s: T[]` array) */
} kf_interp_launch;

typedef struct {
    uint64_t instructions;   /* IR instructions executed, all threads */
    uint64_t threads;
} kf_interp_stats;

/* Runs the launch. On a reported error (out-of-bounds access, read of an
 * unwritten local array element, read of a shared array element no thread
 * of the block has written, a race on a shared element, divergent barrier,
 * incomplete warp op, integer division by zero, a bfe/bfi position or length
 * over 255; mma or ldmatrix not executed by a whole, full warp together, a
 * misaligned or out-of-bounds ldmatrix row or cp_async, an access to bytes
 * a cp_async is still copying, copies pending at a thread's end) returns
 * KF_ERR_RUNTIME with
 * err->msg naming the kernel, file:line:col, block and thread, and err->loc
 * set. Shared races: two accesses of one element by different threads, at
 * least one a write, with no barrier between (nor a warp builtin, for lanes
 * of one warp); the block's first race is reported, unless a divergent
 * barrier or incomplete warp op is found first. A read of an unwritten
 * shared element that another thread writes later in the same epoch is
 * reported as the race (a missing barrier). Global memory is not
 * race-checked. Buffers written before the error keep their writes. Shared
 * memory, static (each array from a 16-byte boundary) and dynamic together,
 * may hold KF_SHARED_LIMIT bytes, as on sm_90 (KF_ERR_USAGE otherwise, with
 * the sizes). stats may be NULL. A launch doing more work than
 * $KFORGE_INTERP_MAX_STEPS (default 2^32: IR instructions executed plus 8
 * per block and per thread started, about 30 s) is stopped with
 * KF_ERR_RUNTIME saying so and naming that variable; a bad value of it is
 * KF_ERR_USAGE. */
kf_status kf_interp_run(const kf_ir_kernel *k, const kf_interp_arg *args, uint32_t nargs,
                        const kf_interp_launch *launch, kf_interp_stats *stats, kf_error *err);

#endif
