/* Internals shared by the interpreter's files: ir/interp.c (launch set-up,
 * block scheduler, barriers, warp operations, error reports), ir/interp_run.c
 * (decoding core IR once into a compact form, and running one thread up to
 * its next synchronisation point), ir/interp_ops.c (the lane-by-lane
 * semantics of every arithmetic, conversion, math and atomic operation) and
 * ir/interp_tensor.c (mma and ldmatrix over a whole warp with PTX's
 * fragment layouts, and the cp.async copies each thread keeps pending).
 *
 * Values live in 16-byte slots, one per IR value per thread, in the natural
 * packed layout of their type (an f32x4 is four floats, an i8 is one byte);
 * every read uses exactly the type's width, so stale upper bytes never
 * matter. A buffer value holds its host pointer in u64[0] and its size in
 * bytes in u64[1]. */
#ifndef KF_INTERP_IMPL_H
#define KF_INTERP_IMPL_H

#include "interp.h"

typedef union {
    uint64_t u64[2];
    int64_t i64[2];
    uint32_t u32[4];
    int32_t i32[4];
    uint16_t u16[8];
    uint8_t u8[16];
    float f32[4];
    double f64[2];
} kf_islot;

/* Decoded handlers. Generic ones work for every type lane by lane; the
 * others are fast paths for scalar types chosen at decode time. */
#define KF_IH(X) \
    X(IH_NOP) X(IH_END) X(IH_RET) X(IH_JUMP) X(IH_LOOPJUMP) X(IH_IF) \
    X(IH_CONST) X(IH_PARAM) X(IH_MOV) X(IH_SREG) \
    X(IH_BINOP) X(IH_CMP) X(IH_UNOP) X(IH_CVT) X(IH_SELECT) X(IH_MATH) \
    X(IH_SPLAT) X(IH_EXTRACT) X(IH_INSERT) \
    X(IH_LOAD) X(IH_STORE) X(IH_ALOAD) X(IH_ASTORE) X(IH_ATOMIC) \
    X(IH_SHFL) X(IH_VOTE) X(IH_BARRIER) X(IH_INTRIN) \
    X(IH_MMA) X(IH_LDSM) X(IH_CPASYNC) X(IH_CPCOMMIT) X(IH_CPWAIT) X(IH_PREFETCH) \
    X(IH_ADD_W32) X(IH_SUB_W32) X(IH_MUL_W32) X(IH_AND_W32) X(IH_OR_W32) X(IH_XOR_W32) \
    X(IH_SHL_W32) X(IH_SHR_U32) X(IH_SHR_I32) \
    X(IH_ADD_W64) X(IH_SUB_W64) X(IH_MUL_W64) X(IH_AND_W64) X(IH_OR_W64) X(IH_XOR_W64) \
    X(IH_ADD_F32) X(IH_SUB_F32) X(IH_MUL_F32) X(IH_DIV_F32) \
    X(IH_ADD_F64) X(IH_SUB_F64) X(IH_MUL_F64) X(IH_DIV_F64) \
    X(IH_LT_U32) X(IH_LE_U32) X(IH_GT_U32) X(IH_GE_U32) X(IH_EQ_W32) X(IH_NE_W32) \
    X(IH_LT_I32) X(IH_LE_I32) X(IH_GT_I32) X(IH_GE_I32) \
    X(IH_LT_F32) X(IH_LE_F32) X(IH_GT_F32) X(IH_GE_F32) X(IH_EQ_F32) X(IH_NE_F32) \
    X(IH_CVT_F16_F32) X(IH_CVT_F32_F16) X(IH_CVT_U32_F32) X(IH_CVT_I32_F32) \
    X(IH_CVT_ZX_32_64) X(IH_CVT_SX_32_64) X(IH_CVT_W64_W32) \
    X(IH_MIN_F32) X(IH_MAX_F32) X(IH_FMA_F32) X(IH_MIN_U32) X(IH_MAX_U32) \
    X(IH_NOT) X(IH_LOAD_X32) X(IH_STORE_X32) \
    X(IH_MOV1) X(IH_MOV2) X(IH_MOV4) X(IH_MOV8) X(IH_SELECT4) X(IH_SELECT8) X(IH_MATH_F32) \
    X(IH_ADD_F32V) X(IH_SUB_F32V) X(IH_MUL_F32V) X(IH_DIV_F32V) X(IH_DIV_U32) X(IH_REM_U32) \
    X(IH_EXTRACT2) X(IH_EXTRACT4) X(IH_ALOAD_X32) X(IH_ASTORE_X32) X(IH_SLOAD) X(IH_SSTORE)

typedef enum {
#define X(e) e,
    KF_IH(X)
#undef X
    IH_COUNT
} kf_ih;

/* One decoded instruction. */
typedef struct {
    uint16_t h;          /* kf_ih */
    uint16_t sub;        /* kf_op / kf_builtin of the source instruction */
    uint8_t s;           /* result (or element) scalar */
    uint8_t lanes;       /* result lanes */
    uint8_t s_in;        /* operand scalar (CMP, CVT, MATH), index scalar (memory ops) */
    uint8_t eshift;      /* memory ops: log2 of the element size */
    uint32_t dst, a[4];
    uint32_t target;     /* jump target, const/param/array index, lane, sreg; cp_async_wait: N */
    uint32_t src;        /* index of the source instruction in kernel->ins */
} kf_idins;

/* Arrays (local or shared) as laid out by the interpreter. */
typedef struct {
    uint32_t off;        /* byte offset into the thread's locals or the block's shared */
    uint32_t woff;       /* first element's written flag (local) or kf_ishmeta (shared) */
    uint32_t len;        /* elements of the declared type (the dynamic array: for this launch) */
    uint32_t bytes;      /* len << eshift */
    uint8_t eshift;      /* log2 of the element size */
    uint8_t ushift;      /* shared: log2 of the bytes one kf_ishmeta covers, the smallest
                            element any access (view) of the array reads or writes */
    bool shared;
} kf_iarray;

/* Shared-memory checking. Time within a block is ordered by barrier epochs
 * (kf_ictx.epoch, advanced at each completed barrier) and, between lanes of
 * one warp, by the warp's count of completed warp builtins (SHFL, VOTE):
 * two accesses of one element by different threads are ordered when a
 * barrier separates them, or when both threads are in one warp and a warp
 * builtin separates them. Each shared element records its last write and
 * its unordered reads so far; a read or write that conflicts with them
 * (read/write, write/read, write/write) is a race. Elements written before
 * the block's first epoch (kf_ictx.epoch0) count as never written; a read
 * of one is reported as a race instead when another thread writes the
 * element later in the same epoch (a missing barrier, not a missing write). The
 * language has no atomics on shared memory, so every access counts; the
 * granularity is the smallest element any access to the array uses (an
 * f16 array also read as f16x8 is tracked per f16; an access through a view
 * checks every unit it covers). ldmatrix reads each row as the lane that
 * gives its address. A cp_async is checked as a write of its 16 bytes when
 * it is issued, and its units stay pending (`pend`) until the copying
 * thread's cp_async_wait completes it: then the bytes land and count as
 * written by that thread at that time; any access to a pending unit before
 * is an error. */
#define KF_SH_NONE 0xFFFFu
typedef struct {
    uint32_t wepoch;     /* epoch of the last write */
    uint32_t wops;       /* the writer's warp-op count at that write */
    uint32_t wins;       /* instruction of that write (for the report) */
    uint32_t repoch;     /* epoch of the reads below; other epochs: no reads */
    uint32_t rops;       /* warp rwarp's warp-op count at the reads in rmask */
    uint32_t rmask;      /* lanes of warp rwarp that read at (repoch, rops) */
    uint16_t writer;     /* linear thread id of the last writer */
    uint16_t rwarp;      /* warp of the first reader in repoch */
    uint16_t other;      /* a reader in another warp in repoch, or KF_SH_NONE */
    uint16_t pend;       /* 1 + linear id of the thread whose cp_async into it is pending, or 0 */
    bool landed;         /* the last write was a cp_async landing: another thread's read needs a
                            barrier after it, a warp builtin does not order it (LANGUAGE.md 8) */
} kf_ishmeta;

/* One cp_async a thread has issued and not yet completed. */
typedef struct {
    uint32_t group;      /* the thread's commit count when issued: its group */
    uint32_t ins;        /* the cp_async instruction */
    uint32_t arr;        /* the shared array */
    uint32_t off;        /* byte offset in the block's shared memory */
    uint32_t unit;       /* kf_ishmeta index of its first unit */
    uint32_t idx;        /* element index in the array (the view's elements), for reports */
    uint8_t data[16];    /* the bytes read when issued, zero-filled */
} kf_icopy;

enum { KF_TS_RUN, KF_TS_WARP, KF_TS_BARRIER, KF_TS_DONE };

typedef struct {
    uint32_t pc;
    uint8_t state;       /* KF_TS_* */
    uint32_t tid[3];
    uint32_t lin;        /* linear id in the block, x fastest */
    kf_islot *R;         /* registers, nvals slots */
    uint8_t *local;      /* local arrays */
    uint8_t *written;    /* one flag per local array element */
    KF_VEC(kf_icopy) copies; /* cp_async copies pending, in issue order */
    uint32_t groups;     /* cp_async_commit calls so far: the open group's number */
} kf_ithread;

typedef struct {
    const kf_ir_kernel *k;
    kf_idins *code;      /* ncode = k->nins + 1 (a final IH_END) */
    kf_islot *consts;    /* one per CONST instruction */
    kf_islot *params;    /* one per parameter: the bound argument */
    kf_iarray *arrays;   /* one per kernel array, laid out */
    const kf_ir_param **bufparam;  /* per value: the buffer parameter it views, or NULL */
    uint32_t local_bytes;  /* per thread: local array bytes */
    uint32_t local_flags;  /* per thread: local array elements (written flags) */
    uint32_t shared_bytes;
    uint32_t dyn_shared;   /* bytes of dynamic shared memory of the launch */
    uint32_t grid[3], block[3], ctaid[3];
    uint32_t nthreads;     /* per block */
    kf_ithread *th;        /* the block's threads, linear order */
    kf_islot *regs;        /* nthreads * (nvals + 1) slots, per thread in a row */
    uint8_t *local, *written;  /* nthreads * local_bytes / local_flags */
    uint8_t *shared;       /* the current block's shared arrays */
    kf_ishmeta *shmeta;  /* one per shared element, all shared arrays */
    uint32_t shared_elems;
    uint32_t *warpops;   /* per warp: warp builtins completed (never reset) */
    uint32_t epoch;      /* current barrier epoch, increasing over the launch */
    uint32_t epoch0;     /* epoch at which the current block started */
    bool race_pending;   /* a race or unwritten shared read is in c->err, reported at the
                            block's next sync check; later faults do not replace it */
    uint32_t unwritten_at; /* 1 + kf_ishmeta index when that is an unwritten read, else 0 */
    uint64_t steps;      /* instructions executed */
    uint64_t blocks_run; /* blocks started */
    uint64_t budget;     /* the launch fails past this much work: steps + started */
    uint64_t started;    /* work charged for starting blocks and threads */
    uint64_t limit;      /* budget - started: what steps may reach in this block */
    kf_error *err;
} kf_ictx;

/* interp_run.c */
kf_status kf_interp_decode(kf_ictx *c);
/* Runs thread t until it waits at a barrier or warp op, ends, or faults
 * (KF_ERR_RUNTIME, c->err filled). */
kf_status kf_interp_thread(kf_ictx *c, kf_ithread *t);

/* interp.c */
/* kf_interp_run with an explicit work budget (tests of the runaway
 * report): IR instructions plus KF_INTERP_START_COST per block and per
 * thread started; kf_interp_run uses $KFORGE_INTERP_MAX_STEPS or 2^32. */
kf_status kf_interp_run_budget(const kf_ir_kernel *k, const kf_interp_arg *args, uint32_t nargs,
                               const kf_interp_launch *launch, uint64_t budget, kf_interp_stats *stats,
                               kf_error *err);
/* The runaway report (the work budget is spent), at instruction ins (or
 * the kernel, for UINT32_MAX) of thread t. */
kf_status kf_interp_over_budget(kf_ictx *c, const kf_ithread *t, uint32_t ins);
/* Fills c->err with a runtime error at instruction `ins` of thread t and
 * returns KF_ERR_RUNTIME; a pending race (c->race_pending) happened first
 * and is kept instead. */
kf_status kf_interp_fault(kf_ictx *c, const kf_ithread *t, uint32_t ins, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* interp_run.c: the checks of `units` consecutive kf_ishmeta units from
 * `unit` on, accessed by thread t at decoded instruction d (element idx of
 * arrays[d->target], for reports): a pending cp_async target is an error
 * now; unwritten reads and races are recorded (c->race_pending). */
kf_status kf_interp_shared_units(kf_ictx *c, kf_ithread *t, const kf_idins *d, uint64_t idx, uint32_t unit,
                                 uint32_t units, bool store);

/* interp_tensor.c */
/* Completes the mma or ldmatrix every lane of warp w (32 threads, all at
 * the same instruction) waits at: each lane's result, or a fault (a
 * misaligned or out-of-bounds ldmatrix row, a pending copy). */
kf_status kf_interp_tensor_warp(kf_ictx *c, kf_ithread *w);
/* cp_async, cp_async_commit, cp_async_wait of thread t. */
kf_status kf_interp_async(kf_ictx *c, kf_ithread *t, const kf_idins *d);
/* A thread that ends must have no copy pending: the fault, or KF_OK. */
kf_status kf_interp_async_end(kf_ictx *c, kf_ithread *t);

/* interp_ops.c: lane-wise semantics. They return 0, or IOP_DIV0 / IOP_REM0
 * when an integer division or remainder by zero was attempted, IOP_POS255 /
 * IOP_LEN255 when a bfe/bfi position or length is over 255 (undefined). */
enum { IOP_OK = 0, IOP_DIV0, IOP_REM0, IOP_POS255, IOP_LEN255 };
int kf_iop_binop(kf_op op, kf_scalar s, unsigned lanes, kf_islot *r, const kf_islot *a, const kf_islot *b);
void kf_iop_cmp(kf_op op, kf_scalar s, kf_islot *r, const kf_islot *a, const kf_islot *b);
void kf_iop_unop(kf_op op, kf_scalar s, unsigned lanes, kf_islot *r, const kf_islot *a);
void kf_iop_cvt(kf_scalar to, kf_scalar from, unsigned lanes, kf_islot *r, const kf_islot *a);
int kf_iop_math(kf_builtin fn, kf_scalar s, kf_scalar s_in, unsigned lanes, kf_islot *r,
                const kf_islot *a, const kf_islot *b, const kf_islot *c);
/* INTRIN (dot4, bfe, bfi, prmt): `a` its operands, their scalar types in s_in. */
int kf_iop_intrin(kf_builtin fn, kf_scalar s, kf_islot *r, const kf_islot *const a[4], const kf_scalar s_in[4]);
/* One-argument f32 math (exp, sqrt, floor, ...), as kf_iop_math computes it. */
float kf_iop_math_f32(kf_builtin fn, float x);
/* Reads lane i of size `bytes` (zero-extended) / writes it. */
uint64_t kf_iop_lane(const kf_islot *v, unsigned bytes, unsigned i);
void kf_iop_set_lane(kf_islot *v, unsigned bytes, unsigned i, uint64_t bits);

#endif
