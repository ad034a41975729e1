/* kforge.h: the public API of kforge, a compiler for the .kf kernel
 * language and a GPU runtime (the CUDA driver, NVRTC, and a CPU reference
 * interpreter). This is the one installed header; nothing of the AST, the
 * core IR or the compiler passes is reachable through it. C11 and C++17.
 *
 *   kf_compile / kf_compile_file   .kf source -> kf_module (diagnostics, kernels)
 *   kf_module_kernel, kf_kernel_*  reflection: parameters in binding order, schedule
 *   kf_emit                        PTX, CUDA-C, core IR text, or a linked cubin
 *   kf_device_open                 cpu (interpreter), cuda (CUDA-C via NVRTC) or ptx
 *   kf_buffer_*                    device memory; views; memory the caller owns
 *   kf_pipeline_create*            a loaded kernel (.kf, a whole module, raw CUDA-C, PTX)
 *   kf_dispatch, kf_plan_*         launches: sync, async, timed; pre-bound plans
 *
 * A minimal program (error checks shortened):
 *
 *     kf_module *m;
 *     kf_compile("add.kf", src, strlen(src), NULL, &m);   // KF_ERR_SOURCE: kf_module_diagnostics(m)
 *     kf_device *dev;  kf_error err = {0};
 *     kf_device_open(KF_BACKEND_CPU, 0, &dev, &err);
 *     kf_pipeline *p;
 *     kf_pipeline_create(dev, m, kf_module_kernel(m, "add"), &p, &err);
 *     kf_buffer *y;
 *     kf_buffer_create(dev, kf_type_scalar(KF_S_F32), 1024, &y, &err);
 *     kf_arg args[] = {kf_arg_value(kf_value_f32(2.0f)), kf_arg_buffer(y), kf_arg_value(kf_value_u32(1024))};
 *     kf_dispatch(p, args, 3, NULL, KF_DISPATCH_SYNC, NULL, &err);
 *     kf_buffer_download(y, host, 1024 * sizeof(float), &err);
 *     kf_buffer_destroy(y); kf_pipeline_destroy(p); kf_device_close(dev); kf_module_free(m);
 *
 * Errors. Every fallible call returns a kf_status and, when it is not KF_OK,
 * fills the kf_error it was given (which may be NULL): the status, a message
 * naming the parameter, limit or file at fault and, for failures that map to
 * .kf source (an interpreter fault, a ptxas or NVRTC error on emitted code),
 * its file:line:col. Source errors of a compile are diagnostics on the
 * module instead. The library never prints, exits or aborts on bad input.
 *
 * Pointers: a handle or out-pointer may be NULL only where its call says
 * so. A fallible call given NULL where it needs one returns KF_ERR_USAGE
 * naming the argument (kf_compile, with no kf_error, returns KF_ERR_USAGE
 * when out is NULL); the accessors (kf_device_name, kf_buffer_bytes, ...)
 * give "", 0 or false for a NULL handle. A handle used after it was freed,
 * or freed twice, is undefined, as with free().
 *
 * Ownership, stated once:
 * - Texts and arrays the library allocates for the caller (kf_emit's
 *   output, kf_params_parse's list, kf_cache_verify's names) are freed with
 *   kf_free. kf_error.log is freed by kf_error_clear.
 * - Strings and arrays the caller passes in are copied when a call keeps
 *   them (defines, raw sources, parameter lists), except where noted.
 * - A kf_module owns its kernels, parameters and diagnostics; every
 *   kf_kernel, kf_param and string obtained from it lives until
 *   kf_module_free. A pipeline of a .kf kernel refers to the module: free
 *   the module after its pipelines.
 * - A device outlives everything created on it (buffers, pipelines, plans):
 *   destroy those first, then kf_device_close.
 * - Buffers are reference-counted through their views: a view keeps its
 *   parent's storage alive, so views and parents may be destroyed in any
 *   order; the storage is released when the buffer and all its views are.
 *   A buffer made by kf_buffer_wrap never releases the memory it wraps.
 * - A plan refers to the buffers bound in it: they must outlive the plan.
 *
 * Compatibility: the version macros below are the header's, kf_version()
 * the library's. While the major version is 0 the ABI (function signatures,
 * structure layouts, enum values) is kept within a minor version (the
 * shared library's soname is libkforge.so.0.MINOR), then within a major
 * version. Option structures are zero-initialised by callers, and later
 * versions add fields at their end only.
 *
 * Threads: compiling is re-entrant (one module per thread at a time); a
 * device, and everything on it, is driven from one thread at a time. The
 * compiled-code cache is shared and safe under threads.
 *
 * Environment variables read by the library: KFORGE_CACHE_DIR,
 * KFORGE_CACHE, KFORGE_LINEINFO, KFORGE_INTERP_MAX_STEPS, KFORGE_JIT,
 * KFORGE_PDL, KFORGE_PDL_TRIGGER, CUDA_HOME, KF_LIBCUDA, KF_LIBNVRTC,
 * KF_LIBNVJITLINK, and XDG_CACHE_HOME or HOME for the cache's default place
 * (README.md, "Environment variables"). */
#ifndef KFORGE_H
#define KFORGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KF_VERSION_MAJOR 0
#define KF_VERSION_MINOR 1
#define KF_VERSION_PATCH 0
#define KF_VERSION "0.1.0"
/* major * 10000 + minor * 100 + patch, for #if comparisons. */
#define KF_VERSION_NUMBER (KF_VERSION_MAJOR * 10000 + KF_VERSION_MINOR * 100 + KF_VERSION_PATCH)

/* Marks the functions the shared library exports; everything else in it
 * is built with hidden visibility. */
#if defined(_WIN32)
#define KF_API
#elif defined(__GNUC__)
#define KF_API __attribute__((visibility("default")))
#else
#define KF_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version: KF_VERSION and KF_VERSION_NUMBER of the code
 * actually linked (compare them with the macros to catch a mismatch). */
KF_API const char *kf_version(void);
KF_API int kf_version_number(void);

/* ======================================================================
 * Errors
 * ====================================================================== */
typedef enum {
    KF_OK = 0,
    KF_ERR_SOURCE,   /* the .kf program is invalid (see the module's diagnostics), or a
                        raw kernel's CUDA-C or PTX does not compile (err->log) */
    KF_ERR_USAGE,    /* the caller passed bad arguments (bindings, sizes, options, ...) */
    KF_ERR_RUNTIME,  /* the kernel faulted (interpreter report, launch error) */
    KF_ERR_DEVICE,   /* no driver, no GPU, NVRTC or the JIT missing or failing on
                        kforge's own code */
    KF_ERR_IO,       /* file or cache I/O */
    KF_ERR_NOMEM,
} kf_status;

/* "KF_OK", "KF_ERR_SOURCE", ...; "KF_ERR_?" for a value out of range. */
KF_API const char *kf_status_name(kf_status st);

/* A place in a source file: line and col are 1-based, col counts bytes;
 * line 0 means no place. */
typedef struct {
    const char *file;
    uint32_t line;
    uint32_t col;
} kf_loc;

typedef struct {
    kf_status status;
    char msg[1024];    /* NUL-terminated; a longer message is cut short */
    kf_loc loc;        /* set when the failure maps to .kf source; loc.file points into
                          the module (valid while it lives) */
    char *log;         /* NVRTC / JIT / ptxas log when there is one (kf_error_clear frees it) */
} kf_error;

/* Frees err->log and resets err to {0}; NULL is allowed. */
KF_API void kf_error_clear(kf_error *err);
/* Frees what the library allocated for the caller (see Ownership). */
KF_API void kf_free(void *p);

/* ======================================================================
 * Types (LANGUAGE.md section 3): scalar, vector and buffer types
 * ====================================================================== */
/* X(enum, name, bytes, class)   class: 'b' bool, 'i' signed, 'u' unsigned,
 * 'f' float; the last two are compile-time constants the API never returns. */
#define KF_SCALARS(X)                 \
    X(KF_S_BOOL, "bool", 1, 'b')      \
    X(KF_S_I8, "i8", 1, 'i')          \
    X(KF_S_U8, "u8", 1, 'u')          \
    X(KF_S_I16, "i16", 2, 'i')        \
    X(KF_S_U16, "u16", 2, 'u')        \
    X(KF_S_I32, "i32", 4, 'i')        \
    X(KF_S_U32, "u32", 4, 'u')        \
    X(KF_S_I64, "i64", 8, 'i')        \
    X(KF_S_U64, "u64", 8, 'u')        \
    X(KF_S_F16, "f16", 2, 'f')        \
    X(KF_S_BF16, "bf16", 2, 'f')      \
    X(KF_S_F32, "f32", 4, 'f')        \
    X(KF_S_F64, "f64", 8, 'f')        \
    X(KF_S_UINT, "untyped int", 8, 'I')   /* untyped integer constant (compiler only) */ \
    X(KF_S_UFLOAT, "untyped float", 8, 'F') /* untyped float constant (compiler only) */

typedef enum {
    KF_S_NONE = 0,
#define X(e, n, b, c) e,
    KF_SCALARS(X)
#undef X
    KF_S_COUNT
} kf_scalar;

typedef enum {
    KF_TK_VOID = 0,
    KF_TK_SCALAR,   /* scalar, lanes == 1 */
    KF_TK_VECTOR,   /* scalar x lanes, lanes in {2,4,8,16}, at most 16 bytes */
    KF_TK_BUFFER,   /* &[elem] or &mut [elem]; elem = (scalar, lanes) */
    KF_TK_ARRAY,    /* local or shared arrays (inside kernels only) */
    KF_TK_TYPE,     /* compiler only */
} kf_type_kind;

enum {
    KF_TF_MUT = 1,     /* buffer: &mut */
    KF_TF_SHARED = 2,  /* array: shared memory */
    KF_TF_DYN = 4,     /* array: the dynamic shared array */
};

/* A type is an 8-byte value, passed by value, never allocated. */
typedef struct {
    uint8_t kind;     /* kf_type_kind */
    uint8_t scalar;   /* kf_scalar of the (element) type */
    uint8_t lanes;    /* 1 for scalars */
    uint8_t flags;    /* KF_TF_* */
    uint32_t len;     /* array length */
} kf_type;

static inline kf_type kf_type_vector(kf_scalar s, unsigned lanes)
{
    kf_type t = {(uint8_t)(lanes == 1 ? KF_TK_SCALAR : KF_TK_VECTOR), (uint8_t)s, (uint8_t)lanes, 0, 0};
    return t;
}
static inline kf_type kf_type_scalar(kf_scalar s) { return kf_type_vector(s, 1); }
/* &[elem] or &mut [elem]. */
static inline kf_type kf_type_buffer(kf_type elem, bool mut)
{
    kf_type t = {(uint8_t)KF_TK_BUFFER, elem.scalar, elem.lanes, (uint8_t)(mut ? KF_TF_MUT : 0), 0};
    return t;
}

/* "f32", ...; "none" for KF_S_NONE or a value out of range. */
KF_API const char *kf_scalar_name(kf_scalar s);
/* Bytes of one scalar (0 out of range). */
KF_API uint32_t kf_scalar_size(kf_scalar s);
/* Bytes of one value of a scalar or vector type, or of one element of a
 * buffer type. */
KF_API uint32_t kf_type_size(kf_type t);
/* Writes the source spelling ("f32x4", "&mut [f16]") into buf; returns buf. */
KF_API const char *kf_type_str(kf_type t, char *buf, size_t size);
/* Reads a scalar or vector type name ("f16x8", len bytes); KF_TK_VOID if
 * it is not one. */
KF_API kf_type kf_type_from_name(const char *name, size_t len);

/* ======================================================================
 * Values: scalar and vector arguments
 * ====================================================================== */
/* Lane bits as the kernel sees them: integers two's complement,
 * zero-extended; f16/bf16 their 16 bits; f32 and f64 their IEEE bits. */
typedef struct {
    kf_type type;
    uint64_t lane[16];
} kf_value;

KF_API kf_value kf_value_bool(bool x);
KF_API kf_value kf_value_i8(int8_t x);
KF_API kf_value kf_value_u8(uint8_t x);
KF_API kf_value kf_value_i16(int16_t x);
KF_API kf_value kf_value_u16(uint16_t x);
KF_API kf_value kf_value_i32(int32_t x);
KF_API kf_value kf_value_u32(uint32_t x);
KF_API kf_value kf_value_i64(int64_t x);
KF_API kf_value kf_value_u64(uint64_t x);
/* f16 and bf16 from a double, rounded once to nearest even (overflow gives
 * infinity); _bits takes the encoding as is. */
KF_API kf_value kf_value_f16(double x);
KF_API kf_value kf_value_bf16(double x);
KF_API kf_value kf_value_f16_bits(uint16_t bits);
KF_API kf_value kf_value_bf16_bits(uint16_t bits);
KF_API kf_value kf_value_f32(float x);
KF_API kf_value kf_value_f64(double x);
/* x in every lane of a vector of `lanes` (2, 4, 8, 16; at most 16 bytes);
 * lanes 1 gives x. An invalid width gives a value of type void, which
 * dispatch rejects naming the parameter. */
KF_API kf_value kf_value_splat(kf_value x, unsigned lanes);
/* A value of scalar or vector type t from text as the command line takes
 * it ("1024", "-3", "0x10", "1e-6", "true"; a vector gets it in every lane).
 * Errors name `param` (may be NULL). */
KF_API kf_status kf_value_parse(const char *text, kf_type t, const char *param, kf_value *out, kf_error *err);
/* Lane `lane` of v as a double (integers converted, f16/bf16 decoded). */
KF_API double kf_value_to_double(kf_value v, unsigned lane);

/* ======================================================================
 * Compiling
 * ====================================================================== */
typedef struct kf_module kf_module;   /* a compiled .kf file */
typedef struct kf_kernel kf_kernel;   /* one of its kernels */

typedef struct {
    const char *name;
    const char *value;   /* the text of a constant expression: "128", "1e-6" */
} kf_define;

typedef enum {
    KF_OPT_DEFAULT = 0,   /* = KF_OPT_O1 */
    KF_OPT_O0,            /* the IR as lowered (the reference an optimiser bug is caught against), but for
                             float operations on constants, replaced by their exact constants at every level */
    KF_OPT_O1,            /* constants, dead branches, copies, dead code, strength reduction */
} kf_opt_level;

/* Zero-initialise and set what you need: {0} compiles with no overrides at -O1. */
typedef struct {
    const kf_define *defines;  /* -D NAME=VALUE overrides of module `const`s (copied) */
    uint32_t ndefines;
    kf_opt_level opt;
} kf_compile_opts;

/* Compiles `source` (len bytes, need not be NUL-terminated) named `file`
 * in locations (NULL: "<input>"); opts may be NULL. *out always receives a
 * module, except when out of memory (KF_ERR_NOMEM, *out may be NULL): with
 * KF_ERR_SOURCE it holds the diagnostics and possibly no kernels (and with
 * KF_ERR_USAGE, for a NULL source of nonzero length, the one saying so). */
KF_API kf_status kf_compile(const char *file, const char *source, size_t len, const kf_compile_opts *opts,
                            kf_module **out);
/* Reads `path` (a regular file of at most 64 MiB) and compiles it as
 * kf_compile does. An unreadable file is KF_ERR_IO in err with *out NULL;
 * KF_ERR_SOURCE also puts the first diagnostic in err (message and loc). */
KF_API kf_status kf_compile_file(const char *path, const kf_compile_opts *opts, kf_module **out, kf_error *err);
/* NULL is allowed. */
KF_API void kf_module_free(kf_module *m);

/* The display name given to kf_compile (or the path). */
KF_API const char *kf_module_file(const kf_module *m);

/* ---- diagnostics ---- */
typedef enum { KF_DIAG_ERROR, KF_DIAG_WARNING, KF_DIAG_NOTE } kf_diag_kind;
typedef struct {
    kf_diag_kind kind;
    kf_loc loc;
    const char *message;   /* without the location; owned by the module */
} kf_diagnostic;

KF_API uint32_t kf_module_error_count(const kf_module *m);   /* errors, including any past the 50 kept */
KF_API uint32_t kf_module_diag_count(const kf_module *m);    /* diagnostics kept */
/* Diagnostic i (< kf_module_diag_count) into *out; false when i is out of range. */
KF_API bool kf_module_diag(const kf_module *m, uint32_t i, kf_diagnostic *out);
/* Every diagnostic rendered as the command line shows it:
 * `file:line:col: error: message`, the source line and a caret under the
 * column. "" when there are none. Owned by the module. */
KF_API const char *kf_module_diagnostics(const kf_module *m);

/* ---- kernel reflection ---- */
/* A kernel parameter, in binding order. */
typedef struct {
    const char *name;
    kf_type type;        /* a buffer (KF_TK_BUFFER; KF_TF_MUT when written) or a scalar/vector */
    kf_loc loc;
    uint32_t align;      /* buffers: the byte alignment a bound view must have (the widest
                            element the kernel reads it as); 0: the element size */
} kf_param;

KF_API uint32_t kf_module_kernel_count(const kf_module *m);
/* Kernel i in source order; NULL when i is out of range. */
KF_API const kf_kernel *kf_module_kernel_at(const kf_module *m, uint32_t i);
/* The kernel named `name`; with name NULL the only kernel when there is
 * exactly one. NULL otherwise. */
KF_API const kf_kernel *kf_module_kernel(const kf_module *m, const char *name);

KF_API const char *kf_kernel_name(const kf_kernel *k);
KF_API kf_loc kf_kernel_loc(const kf_kernel *k);
KF_API uint32_t kf_kernel_param_count(const kf_kernel *k);
/* Parameter i in binding order; NULL when i is out of range. */
KF_API const kf_param *kf_kernel_param(const kf_kernel *k, uint32_t i);
/* Index of the parameter named `name`, or -1. */
KF_API int kf_kernel_param_index(const kf_kernel *k, const char *name);

/* The kernel's @schedule (LANGUAGE.md section 6). */
typedef struct {
    uint32_t block[3];     /* constant; 1 in unused dimensions */
    uint32_t grid_dims;    /* dimensions of the grid expression; 0: none (grid = cdiv(count, block.x)) */
    bool has_shared;       /* a `shared = EXPR` of dynamic shared-memory bytes */
    kf_loc loc;
    uint32_t min_blocks;   /* `min_blocks = N`: blocks an SM must hold at once; 0: none */
} kf_schedule_info;
KF_API void kf_kernel_schedule(const kf_kernel *k, kf_schedule_info *out);
/* Evaluates the grid for the given arguments (one value per parameter in
 * binding order; buffer entries are ignored). With no grid expression the
 * grid is cdiv(count, block.x) and count must be > 0. An integer operation
 * in the expression that would wrap is KF_ERR_USAGE naming it. */
KF_API kf_status kf_schedule_grid(const kf_kernel *k, const kf_value *args, uint64_t count, uint32_t grid[3],
                                  kf_error *err);
/* Evaluates `shared = EXPR` (u32 bytes) like the grid; 0 when there is none. */
KF_API kf_status kf_schedule_shared(const kf_kernel *k, const kf_value *args, uint32_t *bytes, kf_error *err);

/* ======================================================================
 * Emitting code (no GPU needed)
 * ====================================================================== */
typedef enum {
    KF_TARGET_PTX = 0,   /* PTX text of kforge's own emitter (the `ptx` backend's code) */
    KF_TARGET_CUDA,      /* CUDA-C for NVRTC (the `cuda` backend's source) */
    KF_TARGET_IR,        /* the core IR, one instruction a line with its source line */
    KF_TARGET_CUBIN,     /* the PTX linked for sm_<arch> by nvJitLink (needs libnvJitLink, not a GPU) */
} kf_target;

typedef struct {
    kf_target target;
    uint32_t arch;       /* SM version 80, 86, 89 or 90; 0: 90 */
    bool lineinfo;       /* PTX .loc / CUDA-C #line back to the .kf source */
    bool pdl_trigger;    /* sm_90: griddepcontrol.launch_dependents after the wait every
                            kernel opens with (README, programmatic dependent launch) */
} kf_emit_options;

/* Emits kernel k, or every kernel of m when k is NULL, into a new block
 * (*out, *len bytes; text targets are also NUL-terminated; kf_free it).
 * o may be NULL (PTX for sm_90). A feature the arch lacks is
 * KF_ERR_SOURCE with its file:line:col in err (every diagnostic in
 * err->log); a module without kernels is KF_ERR_SOURCE too. */
KF_API kf_status kf_emit(const kf_module *m, const kf_kernel *k, const kf_emit_options *o, void **out, size_t *len,
                         kf_error *err);

/* ======================================================================
 * Devices
 * ====================================================================== */
typedef enum {
    KF_BACKEND_CPU,      /* the reference interpreter: every fault reported at its .kf line */
    KF_BACKEND_CUDA,     /* CUDA-C through NVRTC, loaded by the driver */
    KF_BACKEND_PTX,      /* kforge's PTX, loaded by the driver (no NVRTC) */
} kf_backend;

typedef struct kf_device kf_device;

typedef struct {
    char name[256];
    kf_backend backend;
    int ordinal;
    int cc_major, cc_minor;          /* compute capability (0 for CPU) */
    uint32_t sm_count;
    uint64_t total_mem;              /* bytes */
    uint32_t max_threads_per_block;
    uint32_t max_block[3], max_grid[3];
    uint32_t shared_per_block;       /* static + dynamic without opt-in */
    uint32_t shared_per_block_optin; /* dynamic limit after opt-in (over 48 KiB) */
    uint32_t l2_bytes;
    int driver_version;              /* CUDA driver, major*1000 + minor*10; 0 for CPU */
    int nvrtc_version;               /* 0 when NVRTC is unavailable */
    uint32_t arch;                   /* the SM arch kforge compiles for (80..90); 0 for CPU */
} kf_device_props;

/* Opens a device of the backend (ordinal: GPU index; ignored for CPU). A
 * CUDA device uses the GPU's primary context (the one the CUDA runtime and
 * PyTorch use) and a stream of its own. A missing driver or GPU is
 * KF_ERR_DEVICE with a clear message; NVRTC is needed only to build CUDA-C
 * (its absence is KF_ERR_DEVICE from that build). */
KF_API kf_status kf_device_open(kf_backend backend, int ordinal, kf_device **out, kf_error *err);
/* Waits for queued work and closes; NULL is allowed. */
KF_API void kf_device_close(kf_device *dev);
KF_API const char *kf_device_name(const kf_device *dev);
KF_API void kf_device_props_get(const kf_device *dev, kf_device_props *out);
/* Number of CUDA GPUs and the driver version, without opening one. A
 * missing driver is KF_ERR_DEVICE; no GPU is KF_OK with *count 0. */
KF_API kf_status kf_cuda_device_count(int *count, int *driver_version, kf_error *err);
/* Waits for all queued work; reports asynchronous faults. */
KF_API kf_status kf_device_sync(kf_device *dev, kf_error *err);
/* Makes later work on a CUDA device go to `stream`, a CUstream of the
 * device's primary context that the caller owns (NULL: the legacy default
 * stream), after the work already queued on the current stream has
 * finished; kf_device_reset_stream goes back to the device's own stream.
 * For interop with other CUDA code (PyTorch's current stream). KF_ERR_USAGE
 * on the CPU device. */
KF_API kf_status kf_device_set_stream(kf_device *dev, void *stream, kf_error *err);
KF_API kf_status kf_device_reset_stream(kf_device *dev, kf_error *err);
/* Programmatic dependent launch (PDL, sm_90 and later): a .kf kernel built
 * for sm_90 opens with griddepcontrol.wait, so the device launches it with
 * the programmatic-stream-serialization attribute (cuLaunchKernelEx): it may
 * start while the kernel before it in the stream finishes (its launch hides
 * behind that kernel's tail) and waits for that kernel's writes before it
 * reads anything. Results do not change; raw kernels never get it. On by
 * default where the device can (a CUDA device of sm_90 or later, a driver
 * with cuLaunchKernelEx) unless $KFORGE_PDL is 0 when the device is opened.
 * kf_device_pdl says whether launches use it now; kf_device_set_pdl turns
 * it on (where the device can) or off for later launches and recordings (a
 * recorded graph keeps what it was recorded with) and returns the new
 * state. The CPU device never uses it. */
KF_API bool kf_device_pdl(const kf_device *dev);
KF_API bool kf_device_set_pdl(kf_device *dev, bool on);
/* Times a region of queued work with the device's pair of events: start
 * records in stream order; stop records the end, waits for it and gives
 * the device milliseconds between the two. Queue the region's work with
 * KF_DISPATCH_ASYNC (a TIMED dispatch inside takes the same events). CUDA
 * devices only (KF_ERR_USAGE on the CPU device). */
KF_API kf_status kf_device_timer_start(kf_device *dev, kf_error *err);
KF_API kf_status kf_device_timer_stop(kf_device *dev, float *ms, kf_error *err);

/* ======================================================================
 * Buffers
 * ====================================================================== */
typedef struct kf_buffer kf_buffer;

/* `count` elements of type elem (a scalar or vector type), zero-filled. */
KF_API kf_status kf_buffer_create(kf_device *dev, kf_type elem, size_t count, kf_buffer **out, kf_error *err);
/* A buffer over memory the caller owns and keeps alive while the buffer
 * (or a plan binding it) is used: `ptr` is a device pointer (CUdeviceptr)
 * of dev's context on a CUDA device, a host pointer on the CPU device. It
 * must be aligned to the element size; kf_buffer_destroy never frees it.
 * For interop: PyTorch tensors, memory of other CUDA code. A kernel whose
 * cp_async reads a tail (fewer than 16 bytes) at the end of such memory
 * issues a 16-byte access: keep the allocation a multiple of 16 bytes (as
 * kforge's own buffers and PyTorch's are), or memcheck reports it. */
KF_API kf_status kf_buffer_wrap(kf_device *dev, kf_type elem, size_t count, void *ptr, kf_buffer **out,
                                kf_error *err);
/* Elements [offset, offset + count) of parent, sharing its storage and
 * element type (see Ownership: the view keeps the parent's storage alive). */
KF_API kf_status kf_buffer_view(kf_buffer *parent, size_t offset, size_t count, kf_buffer **out, kf_error *err);
/* Copies `bytes` (at most the buffer's) from host memory into the buffer's
 * start, or out of it; both wait for queued work first. */
KF_API kf_status kf_buffer_upload(kf_buffer *b, const void *src, size_t bytes, kf_error *err);
KF_API kf_status kf_buffer_download(kf_buffer *b, void *dst, size_t bytes, kf_error *err);
/* A device-to-device copy of `bytes` (a prefix of both), in stream order;
 * mode as for kf_dispatch (TIMED gives the device time in *ms). */
typedef enum {
    KF_DISPATCH_SYNC = 0,  /* launch, wait, report faults */
    KF_DISPATCH_ASYNC,     /* no host fence; the next read or sync is the barrier */
    KF_DISPATCH_TIMED,     /* sync, and *ms receives the device time */
} kf_dispatch_mode;
KF_API kf_status kf_buffer_copy(kf_buffer *dst, const kf_buffer *src, size_t bytes, kf_dispatch_mode mode,
                                float *ms, kf_error *err);
KF_API size_t kf_buffer_bytes(const kf_buffer *b);
KF_API size_t kf_buffer_count(const kf_buffer *b);
KF_API kf_type kf_buffer_elem(const kf_buffer *b);
/* The buffer's first element: a CUdeviceptr on a CUDA device, a host
 * pointer on the CPU device (NULL for an empty buffer). */
KF_API void *kf_buffer_address(const kf_buffer *b);
/* A buffer is read-only when it, or any buffer it is a view of, is marked
 * so (at any time, before or after the view was made); a read-only buffer
 * bound to a `&mut` parameter is rejected at dispatch. */
KF_API void kf_buffer_set_readonly(kf_buffer *b, bool readonly);
KF_API bool kf_buffer_readonly(const kf_buffer *b);
/* Drops this handle (see Ownership); NULL is allowed. */
KF_API void kf_buffer_destroy(kf_buffer *b);

/* ======================================================================
 * Pipelines: loaded kernels
 * ====================================================================== */
typedef struct kf_pipeline kf_pipeline;

/* Builds and loads kernel k of m (m must outlive the pipeline; a kernel of
 * another module is refused; m NULL takes k as a bare kernel, uncached). CUDA
 * devices build through the process and disk caches, keyed on the
 * module's file, source and options (and the kernel, arch, compiler build,
 * NVRTC and driver versions): a warm start loads the cached cubin with no
 * emit, NVRTC or JIT. KFORGE_LINEINFO=1 adds .kf line info. A JIT or NVRTC
 * error names the .kf line (err->loc). */
KF_API kf_status kf_pipeline_create(kf_device *dev, const kf_module *m, const kf_kernel *k, kf_pipeline **out,
                                    kf_error *err);
/* Pipelines of every kernel of m at once: out[i] (kf_module_kernel_count
 * entries) is kernel i's. A CUDA device builds the whole module once (one
 * NVRTC compile, one JIT) and its pipelines share one loaded module,
 * unloaded with the last of them. On failure every out[i] is NULL. */
KF_API kf_status kf_pipeline_create_module(kf_device *dev, const kf_module *m, kf_pipeline **out, kf_error *err);

/* A kernel not written in .kf: CUDA-C source for NVRTC (a WMMA tensor-core
 * GEMM, say) or PTX text. `params` is the binding list, one entry per
 * kernel parameter in order: a buffer for each pointer parameter (with
 * KF_TF_MUT on those written; align 0 means the element size), a scalar or
 * vector for each value. */
typedef enum { KF_SRC_CUDA, KF_SRC_PTX } kf_src_kind;
typedef struct {
    kf_src_kind kind;
    const char *source;             /* NUL-terminated text */
    const char *entry;              /* the extern "C" __global__ entry point (.entry in PTX) */
    const kf_param *params;
    uint32_t nparams;
    uint32_t block[3];              /* default block; zeros: give one at dispatch */
    uint32_t arch;                  /* 0: the device's (kf_device_props.arch) */
    bool uncached;                  /* skip the process and disk caches */
} kf_raw_kernel;
/* CUDA devices only (KF_ERR_USAGE on the CPU device). The raw kernel's
 * strings and params are copied. Source that NVRTC or the PTX compiler
 * refuses is KF_ERR_SOURCE (the first error line in err->msg); NVRTC and
 * JIT logs go to err->log. */
KF_API kf_status kf_pipeline_create_raw(kf_device *dev, const kf_raw_kernel *rk, kf_pipeline **out, kf_error *err);
/* Parses a parameter list in .kf syntax ("x: &[f16], y: &mut [f32], n: u32")
 * into a new array of *n kf_params (one block: kf_free it; the names are
 * inside it). A syntax or type error is KF_ERR_USAGE naming the column. */
KF_API kf_status kf_params_parse(const char *text, kf_param **params, uint32_t *n, kf_error *err);
/* NULL is allowed. */
KF_API void kf_pipeline_destroy(kf_pipeline *p);

/* Where a pipeline's code came from, and a warning, or NULL: the cache's
 * (a corrupt disk entry that was rebuilt, an unwritable cache directory),
 * or, for a raw CUDA-C kernel, NVRTC's PTX showing NVVM's misread merged
 * loads (its results may be wrong; kforge's own kernels are refused). */
typedef enum { KF_FROM_BUILD, KF_FROM_MEMORY, KF_FROM_DISK } kf_code_origin;
KF_API kf_code_origin kf_pipeline_origin(const kf_pipeline *p);
KF_API const char *kf_pipeline_warning(const kf_pipeline *p);

/* What the loaded code uses, as the driver reports it. */
typedef struct {
    int regs;                /* registers per thread */
    int local_bytes;         /* local memory per thread: spills and local arrays */
    uint32_t static_shared;  /* bytes of static shared memory */
    uint32_t max_threads;    /* the most threads per block the code allows */
} kf_resources;
/* CUDA devices only (KF_ERR_USAGE on the CPU device). */
KF_API kf_status kf_pipeline_resources(const kf_pipeline *p, kf_resources *out, kf_error *err);

/* ======================================================================
 * Dispatch
 * ====================================================================== */
/* One argument in binding order: a buffer (or view) or a value. */
typedef struct {
    kf_buffer *buf;       /* NULL for scalars and vectors */
    kf_value value;
} kf_arg;
KF_API kf_arg kf_arg_buffer(kf_buffer *b);
KF_API kf_arg kf_arg_value(kf_value v);

/* An explicit launch shape; zeros mean "from the schedule". */
typedef struct {
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t dyn_shared;  /* dynamic shared-memory bytes; 0: the schedule's `shared = EXPR`, or none */
    uint64_t count;       /* element count for schedules without a grid */
} kf_launch;

/* Validates the arguments against the kernel's parameters (count, kinds,
 * element types, mutability, view alignment, aliasing) and the launch
 * against the device's limits, then runs it. launch may be NULL (the
 * schedule; count 0). ms may be NULL unless mode is TIMED. Every error
 * names the parameter or the limit, and then nothing was launched.
 * Buffer lengths are not checked against what the kernel indexes: a
 * parameter carries no length, so no call can know it. The cpu backend
 * reports an out-of-bounds access (KF_ERR_RUNTIME, with its file:line:col
 * and the thread); the GPU paths do not check. Run a new kernel on the
 * cpu backend first; golden cases state their sizes (`size` lines), which
 * `kforge test` checks before launching on every backend. */
KF_API kf_status kf_dispatch(kf_pipeline *p, const kf_arg *args, uint32_t nargs, const kf_launch *launch,
                             kf_dispatch_mode mode, float *ms, kf_error *err);

/* Plans: arguments already in binding order, validated and packed once
 * (grid evaluated, launch parameters built); kf_plan_launch then does no
 * allocation, sorting or search (a decode loop). */
typedef struct kf_plan kf_plan;
KF_API kf_status kf_plan_create(kf_pipeline *p, const kf_arg *args, uint32_t nargs, const kf_launch *launch,
                                kf_plan **out, kf_error *err);
KF_API kf_status kf_plan_launch(kf_plan *plan, kf_dispatch_mode mode, float *ms, kf_error *err);
/* NULL is allowed. */
KF_API void kf_plan_destroy(kf_plan *plan);

/* Re-targetable plans and graphs (a decode loop keeps one plan per kernel
 * and replays one graph per step). */
/* Index of the parameter called `name` in p's binding list, or -1. */
KF_API int kf_pipeline_param_index(const kf_pipeline *p, const char *name);

/* Re-targeting a plan: one argument changed in place, so that a loop keeps
 * one plan per kernel for its whole life (a decode step's position, a
 * layer's cache). Neither call allocates (the test suite counts the
 * runtime's allocations around them)
 * nor looks at the other arguments beyond what the change touches. On any
 * error the plan is left exactly as it was.
 *
 * kf_plan_set_value gives scalar/vector argument `index` a new value of the
 * parameter's exact type. When the plan's grid or dynamic shared bytes come
 * from the schedule (not from its kf_launch) and the schedule reads that
 * parameter, they are evaluated again for the new value and checked
 * against the device's limits, as at creation: a value whose grid is
 * empty, overflows or is over a limit is refused with the words creation
 * uses. */
KF_API kf_status kf_plan_set_value(kf_plan *plan, uint32_t index, const kf_value *value, kf_error *err);
/* kf_plan_set_buffer binds buffer argument `index` to buf, another buffer
 * or view: checked as creation checks it (same device, the parameter's
 * exact element type, not read-only for a `&mut` parameter, aligned to the
 * kernel's widest access, no overlap between it and a writable argument
 * when one of the two is read-only) and against the kernel's needs: it must
 * hold at least the bytes of the buffer the plan was created with (what
 * the plan was validated with). The buffer must outlive the plan. */
KF_API kf_status kf_plan_set_buffer(kf_plan *plan, uint32_t index, kf_buffer *buf, kf_error *err);
/* The launch shape the plan launches with now (after any re-target). */
KF_API void kf_plan_shape(const kf_plan *plan, uint32_t grid[3], uint32_t block[3], uint32_t *dyn_shared);

/* Graphs: a sequence of plan launches recorded once and replayed with one
 * call. On a CUDA device a graph is a CUDA graph (stream capture,
 * instantiated once); on the CPU device, a replay of the recorded launches.
 *
 * kf_graph_begin starts recording on dev. Until kf_graph_end, each
 * kf_plan_launch(plan, KF_DISPATCH_ASYNC, ...) on dev is recorded, not run.
 * Anything a graph cannot hold is refused with an error that names the
 * call and the last launch recorded, and abandons the recording (the CUDA
 * capture is ended and dropped, so the device works as before, eagerly):
 * a SYNC or TIMED launch, an invalid or refused launch (its error names
 * the launch's number and kernel), kf_dispatch (it destroys its plan),
 * kf_device_sync, upload, download, copy, timers, creating a buffer
 * (kf_buffer_create; kf_buffer_wrap and kf_buffer_view allocate nothing and
 * are allowed) or a pipeline, a nested kf_graph_begin or a kf_graph_launch.
 * Destroying a buffer abandons it too (kf_graph_end then says so).
 * Re-targeting plans is allowed at any time, also while recording: a launch
 * keeps the shape it was recorded with until the first replay, which
 * carries the plan as it is then. */
typedef struct kf_graph kf_graph;
KF_API kf_status kf_graph_begin(kf_device *dev, kf_error *err);
/* Ends dev's recording and makes it launchable (CUDA: cuStreamEndCapture,
 * cuGraphInstantiate; each launch's kernel node is the one the capture
 * made for it, read with cuStreamGetCaptureInfo as it was recorded, and
 * checked against the launch with cuGraphGetNodes /
 * cuGraphKernelNodeGetParams). An empty recording is refused. After an
 * abandoned recording it returns the reason the recording was abandoned
 * (once). */
KF_API kf_status kf_graph_end(kf_device *dev, kf_graph **out, kf_error *err);
/* Replays g in stream order (mode as for kf_plan_launch: ASYNC queues it,
 * SYNC waits, TIMED waits and gives the device time). Each launch uses its
 * plan's arguments as they are now: a plan re-targeted since the last replay
 * is carried into the instantiated graph first (CUDA:
 * cuGraphExecKernelNodeSetParams on its node; no re-capture), so the
 * host's cost is one graph launch plus one update per changed plan, and
 * nothing is allocated. The plans must outlive the graph. */
KF_API kf_status kf_graph_launch(kf_graph *g, kf_dispatch_mode mode, float *ms, kf_error *err);
/* Number of launches recorded in g. */
KF_API uint32_t kf_graph_size(const kf_graph *g);
KF_API void kf_graph_destroy(kf_graph *g);

/* ======================================================================
 * Communicators and collectives (tensor parallelism over devices)
 * ====================================================================== */

/* A communicator over n devices of this process, all of one backend, rank i
 * being devs[i] (the devices must outlive it). Over several CUDA devices
 * it is one NCCL communicator per device made with ncclCommInitAll (NCCL is
 * loaded then, with dlopen: its absence is KF_ERR_DEVICE saying so); one
 * CUDA device needs no NCCL. Over CPU devices the collectives are host
 * loops. A device listed twice is a usage error. Destroy it after the
 * graphs that hold its collectives and before its devices. */
typedef struct kf_comm kf_comm;
KF_API kf_status kf_comm_create(kf_device *const *devs, uint32_t n, kf_comm **out, kf_error *err);
KF_API void kf_comm_destroy(kf_comm *c);
KF_API uint32_t kf_comm_size(const kf_comm *c);
/* NCCL's version (as ncclGetVersion: 22803 is 2.28.3) when the communicator
 * uses it, else 0. */
KF_API int kf_comm_nccl_version(const kf_comm *c);

/* Collectives, in stream order on every rank's device (the work queued on
 * each device before the call is complete before it reads, and work queued
 * after it sees its result). bufs[i] (send[i], recv[i]) is on rank i's
 * device; all have one element type. mode: ASYNC queues it, SYNC waits for
 * every device (TIMED is refused: time a region with the device timers).
 *
 * kf_comm_all_reduce: bufs[i][0..count) = the sum over the ranks, in place;
 * f32 or f16 elements. The CPU device adds in f32 in rank order, then
 * rounds once (every rank gets the same bits); NCCL's order is its own.
 *
 * kf_comm_all_gather: recv[i][r·count .. (r+1)·count) = send[r][0..count) for
 * every rank r and i; any element type; send[i] may be the view of recv[i]
 * at rank i's slot (in place).
 *
 * While the devices record graphs (kf_graph_begin on every rank's device)
 * a collective is recorded, as a launch is, into each device's graph (CUDA:
 * NCCL's work is captured on each stream); a graph holding one is replayed
 * with kf_comm_graph_launch. If only some of the devices record, the call
 * is refused and their recordings abandoned. Errors name the rank and the
 * argument; nothing is queued then. */
KF_API kf_status kf_comm_all_reduce(kf_comm *c, kf_buffer *const *bufs, size_t count, kf_dispatch_mode mode,
                                    kf_error *err);
KF_API kf_status kf_comm_all_gather(kf_comm *c, kf_buffer *const *send, kf_buffer *const *recv, size_t count,
                                    kf_dispatch_mode mode, kf_error *err);
/* Replays graphs[i] (recorded on rank i's device) on every rank: CUDA
 * launches each graph on its device's stream (NCCL joins them on the
 * devices); the CPU devices replay theirs in lockstep, each up to its next
 * collective, which then runs over all ranks (the graphs must hold the
 * same collectives in the same order, else KF_ERR_USAGE naming the node).
 * mode: ASYNC or SYNC. kf_graph_launch refuses a CPU graph that holds a
 * collective over several devices. */
KF_API kf_status kf_comm_graph_launch(kf_comm *c, kf_graph *const *graphs, kf_dispatch_mode mode,
                                      kf_error *err);

/* ======================================================================
 * The compiled-code cache (process memory + disk)
 * ====================================================================== */
/* Room for the cache directory's path and its NUL. */
#define KF_CACHE_DIR_MAX 4096
typedef struct {
    bool disk_enabled;                 /* false with KFORGE_CACHE=0 */
    char dir[KF_CACHE_DIR_MAX];
    uint64_t mem_entries, mem_bytes;
    uint64_t disk_entries, disk_bytes;   /* from a scan of the directory */
    uint64_t mem_hits, disk_hits, misses, stores, corrupt;   /* this process */
} kf_cache_stats;
/* An unusable directory (a path too long) is KF_ERR_USAGE in all three. */
KF_API kf_status kf_cache_stats_get(kf_cache_stats *out, kf_error *err);
/* Empties the memory cache and (disk true) removes every entry file;
 * removed (may be NULL) gets their number. */
KF_API kf_status kf_cache_clear(bool disk, uint64_t *removed, kf_error *err);
/* Checks every disk entry's header and checksums, removing bad ones when
 * `remove`; good, bad and bad_names may each be NULL; *bad_names gets the
 * bad entries' file names, one a line (kf_free it). */
KF_API kf_status kf_cache_verify(bool remove, uint64_t *good, uint64_t *bad, char **bad_names, kf_error *err);
/* The directory in use, into buf; false (buf "") when it does not fit. */
KF_API bool kf_cache_dir(char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
