/* The backend-independent half of the device interface (device.h): device
 * open/close, buffer and view bookkeeping, launch-shape resolution and the
 * validation every dispatch goes through before anything is launched.
 *
 * Validation is written once here so the CPU interpreter and the CUDA
 * backends reject the same inputs with the same messages: argument count,
 * buffer vs value, element and value types, `&mut` given a read-only
 * buffer, view alignment against the kernel's widest access, overlapping
 * views bound to a read-only and a writable parameter (the emitted code
 * assumes no aliasing), and block/grid/shared-memory limits of the device
 * (static + dynamic, the dynamic bytes from the launch or else from the
 * schedule's `shared = EXPR`).
 * Every error names the parameter or the limit. A plan holds what creation
 * validated (the arguments, each buffer's size, the launch as given), so
 * re-targeting one argument (kf_plan_set_value / _buffer) checks only that
 * argument, evaluates the grid again only when the schedule reads it, and
 * allocates nothing. While a graph is recorded (runtime/graph.c) the calls
 * a graph cannot hold are refused here. */
#include "rt_impl.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* ---- the one allocation function ---------------------------------------- */
static atomic_uint_fast64_t alloc_calls;

void *kf_rt_alloc(size_t size)
{
    atomic_fetch_add_explicit(&alloc_calls, 1, memory_order_relaxed);
    if (size > SIZE_MAX - 63) return NULL;
    size_t rounded = (size + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, rounded ? rounded : 64);
    if (p) memset(p, 0, rounded ? rounded : 64);
    return p;
}

void kf_rt_free(void *p) { free(p); }

char *kf_rt_strdup(const char *s)
{
    size_t n = strlen(s);
    char *d = kf_rt_alloc(n + 1);
    if (d) memcpy(d, s, n);
    return d;
}

uint64_t kf_rt_alloc_count(void) { return atomic_load(&alloc_calls); }

/* ---- devices ------------------------------------------------------------- */
kf_status kf_device_open(kf_backend backend, int ordinal, kf_device **out, kf_error *err)
{
    KF_NEED(out, err, "out (where the device goes)");
    *out = NULL;
    if (backend != KF_BACKEND_CPU && backend != KF_BACKEND_CUDA && backend != KF_BACKEND_PTX)
        return kf_error_set(err, KF_ERR_USAGE, "unknown backend %d", (int)backend);
    if (ordinal < 0) return kf_error_set(err, KF_ERR_USAGE, "device ordinal %d: ordinals count from 0", ordinal);
    kf_device *dev = kf_rt_alloc(sizeof *dev);
    if (!dev) return kf_error_set(err, KF_ERR_NOMEM, "out of memory opening a device");
    dev->backend = backend;
    dev->props.backend = backend;
    dev->props.ordinal = ordinal;
    kf_status st = backend == KF_BACKEND_CPU ? kf_cpu_open(dev, err) : kf_cuda_open(dev, ordinal, err);
    if (st != KF_OK) {
        kf_rt_free(dev);
        return st;
    }
    *out = dev;
    return KF_OK;
}

void kf_device_close(kf_device *dev)
{
    if (!dev) return;
    kf_rt_rec_abandon(dev, "the device was closed");
    dev->ops->close(dev);
    kf_rt_free(dev);
}

const char *kf_device_name(const kf_device *dev) { return dev ? dev->props.name : ""; }

void kf_device_props_get(const kf_device *dev, kf_device_props *out) { *out = dev->props; }

bool kf_device_pdl(const kf_device *dev) { return dev->pdl; }

bool kf_device_set_pdl(kf_device *dev, bool on)
{
    dev->pdl = on && dev->pdl_able;
    return dev->pdl;
}

kf_status kf_device_sync(kf_device *dev, kf_error *err)
{
    kf_status st = kf_rt_rec_refuse(dev, "kf_device_sync", err);
    return st == KF_OK ? dev->ops->sync(dev, err) : st;
}

kf_status kf_device_set_stream(kf_device *dev, void *stream, kf_error *err)
{
    if (!dev->ops->stream)
        return kf_error_set(err, KF_ERR_USAGE, "the %s device has no streams (a CUDA device has)", dev->props.name);
    return dev->ops->stream(dev, true, stream, err);
}

kf_status kf_device_reset_stream(kf_device *dev, kf_error *err)
{
    if (!dev->ops->stream) return KF_OK;
    return dev->ops->stream(dev, false, NULL, err);
}

/* ---- buffers --------------------------------------------------------------- */
static bool elem_ok(kf_type t)
{
    if (t.kind != KF_TK_SCALAR && t.kind != KF_TK_VECTOR) return false;
    if (t.scalar == KF_S_NONE || t.scalar >= KF_S_UINT) return false;
    if (t.kind == KF_TK_SCALAR) return t.lanes == 1;
    return (t.lanes == 2 || t.lanes == 4 || t.lanes == 8 || t.lanes == 16) && kf_type_elem_bytes(t) <= 16;
}

kf_status kf_buffer_create(kf_device *dev, kf_type elem, size_t count, kf_buffer **out, kf_error *err)
{
    KF_NEED(out, err, "out (where the buffer goes)");
    *out = NULL;
    kf_status rs = kf_rt_rec_refuse(dev, "kf_buffer_create", err);
    if (rs != KF_OK) return rs;
    if (!elem_ok(elem))
        return kf_error_set(err, KF_ERR_USAGE, "buffer element type must be a scalar or vector type");
    elem.flags = 0;
    elem.len = 0;
    size_t esz = kf_type_elem_bytes(elem);
    if (count > SIZE_MAX / esz)
        return kf_error_set(err, KF_ERR_USAGE, "buffer of %zu elements overflows the address space", count);
    kf_buffer *b = kf_rt_alloc(sizeof *b);
    if (!b) return kf_error_set(err, KF_ERR_NOMEM, "out of memory creating a buffer");
    *b = (kf_buffer){.dev = dev, .elem = elem, .count = count, .bytes = count * esz, .refs = 1};
    b->root = b;
    if (b->bytes) {
        kf_status st = dev->ops->alloc(dev, b->bytes, &b->addr, err);
        if (st != KF_OK) {
            kf_rt_free(b);
            return st;
        }
    }
    *out = b;
    return KF_OK;
}

kf_status kf_buffer_wrap(kf_device *dev, kf_type elem, size_t count, void *ptr, kf_buffer **out, kf_error *err)
{
    *out = NULL;
    if (!elem_ok(elem))
        return kf_error_set(err, KF_ERR_USAGE, "buffer element type must be a scalar or vector type");
    size_t esz = kf_type_elem_bytes(elem);
    if (count > SIZE_MAX / esz)
        return kf_error_set(err, KF_ERR_USAGE, "buffer of %zu elements overflows the address space", count);
    if (count && !ptr) return kf_error_set(err, KF_ERR_USAGE, "wrapping %zu elements at a NULL pointer", count);
    if ((uintptr_t)ptr % esz)
        return kf_error_set(err, KF_ERR_USAGE, "wrapped memory at %p is not aligned to its %zu-byte elements", ptr,
                            esz);
    kf_buffer *b = kf_rt_alloc(sizeof *b);
    if (!b) return kf_error_set(err, KF_ERR_NOMEM, "out of memory creating a buffer");
    elem.flags = 0;
    elem.len = 0;
    *b = (kf_buffer){.dev = dev, .elem = elem, .count = count, .bytes = count * esz, .refs = 1,
                     .addr = (uint64_t)(uintptr_t)ptr, .external = true};
    b->root = b;
    *out = b;
    return KF_OK;
}

kf_status kf_buffer_view(kf_buffer *parent, size_t offset, size_t count, kf_buffer **out, kf_error *err)
{
    KF_NEED(out, err, "out (where the view goes)");
    *out = NULL;
    KF_NEED(parent, err, "the parent buffer");
    if (offset > parent->count || count > parent->count - offset)
        return kf_error_set(err, KF_ERR_USAGE, "view of %zu elements at offset %zu is outside the buffer of %zu elements",
                            count, offset, parent->count);
    kf_buffer *v = kf_rt_alloc(sizeof *v);
    if (!v) return kf_error_set(err, KF_ERR_NOMEM, "out of memory creating a view");
    size_t esz = kf_type_elem_bytes(parent->elem);
    *v = (kf_buffer){.dev = parent->dev, .parent = parent, .root = parent->root, .elem = parent->elem,
                     .count = count, .offset = parent->offset + offset * esz, .bytes = count * esz,
                     .refs = 1};
    v->addr = parent->root->addr + v->offset;
    parent->refs++;
    *out = v;
    return KF_OK;
}

static kf_status transfer_check(const kf_buffer *b, size_t bytes, const char *what, kf_error *err)
{
    if (bytes > b->bytes)
        return kf_error_set(err, KF_ERR_USAGE, "%s of %zu bytes does not fit a buffer of %zu bytes (%zu elements)",
                            what, bytes, b->bytes, b->count);
    return KF_OK;
}

kf_status kf_buffer_upload(kf_buffer *b, const void *src, size_t bytes, kf_error *err)
{
    if (!b || (!src && bytes)) return kf_error_set(err, KF_ERR_USAGE, "kf_buffer_upload: the %s is NULL", b ? "source" : "buffer");
    kf_status st = kf_rt_rec_refuse(b->dev, "kf_buffer_upload", err);
    if (st == KF_OK) st = transfer_check(b, bytes, "upload", err);
    if (st != KF_OK) return st;
    if (!bytes) return KF_OK;
    return b->dev->ops->upload(b->dev, b->addr, src, bytes, err);
}

kf_status kf_buffer_download(kf_buffer *b, void *dst, size_t bytes, kf_error *err)
{
    if (!b || (!dst && bytes))
        return kf_error_set(err, KF_ERR_USAGE, "kf_buffer_download: the %s is NULL", b ? "destination" : "buffer");
    kf_status st = kf_rt_rec_refuse(b->dev, "kf_buffer_download", err);
    if (st == KF_OK) st = transfer_check(b, bytes, "download", err);
    if (st != KF_OK) return st;
    if (!bytes) return KF_OK;
    return b->dev->ops->download(b->dev, b->addr, dst, bytes, err);
}

size_t kf_buffer_bytes(const kf_buffer *b) { return b ? b->bytes : 0; }
size_t kf_buffer_count(const kf_buffer *b) { return b ? b->count : 0; }
void *kf_buffer_address(const kf_buffer *b) { return b && b->bytes ? (void *)(uintptr_t)b->addr : NULL; }
kf_type kf_buffer_elem(const kf_buffer *b) { return b ? b->elem : (kf_type){0}; }

void kf_buffer_set_readonly(kf_buffer *b, bool readonly)
{
    if (!b) return;
    if (readonly && !b->readonly) b->dev->ro_gen++;   /* plans look at their bindings again */
    b->readonly = readonly;
}

bool kf_buffer_readonly(const kf_buffer *b)
{
    for (; b; b = b->parent)
        if (b->readonly) return true;
    return false;
}

/* Drops one reference; storage goes when the allocation and all views have. */
static void buffer_unref(kf_buffer *b)
{
    while (b && --b->refs == 0) {
        kf_buffer *parent = b->parent;
        if (!parent && b->bytes && !b->external) b->dev->ops->free(b->dev, b->addr);
        kf_rt_free(b);
        b = parent;
    }
}

void kf_buffer_destroy(kf_buffer *b)
{
    if (!b) return;
    /* A recorded launch may use it: the recording cannot be trusted. */
    kf_rt_rec_abandon(b->dev, "a buffer was destroyed while recording");
    buffer_unref(b);
}

/* ---- pipelines ------------------------------------------------------------ */
static kf_pipeline *pipeline_new(kf_device *dev, const char *name, const kf_ir_param *params,
                                 uint32_t nparams)
{
    kf_pipeline *p = kf_rt_alloc(sizeof *p);
    if (!p) return NULL;
    p->dev = dev;
    p->name = kf_rt_strdup(name ? name : "");
    p->params = kf_rt_alloc((nparams ? nparams : 1) * sizeof *p->params);
    if (!p->name || !p->params) {
        kf_rt_free((void *)p->name);
        kf_rt_free(p->params);
        kf_rt_free(p);
        return NULL;
    }
    for (uint32_t i = 0; i < nparams; i++) {
        p->params[i] = params[i];
        p->params[i].name = NULL;
        p->params[i].loc = (kf_loc){0};
        if (!p->params[i].align) p->params[i].align = kf_type_elem_bytes(params[i].type);
    }
    for (uint32_t i = 0; i < nparams; i++) {
        p->params[i].name = kf_rt_strdup(params[i].name ? params[i].name : "?");
        if (!p->params[i].name) {
            p->nparams = i;
            kf_pipeline_destroy(p);
            return NULL;
        }
    }
    p->nparams = nparams;
    return p;
}

/* The pipeline of kernel k without its build. */
static kf_pipeline *kernel_pipeline_new(kf_device *dev, const kf_ir_kernel *k)
{
    kf_pipeline *p = pipeline_new(dev, k->name, k->params, k->nparams);
    if (!p) return NULL;
    p->k = k;
    memcpy(p->block, k->sched.block, sizeof p->block);
    return p;
}

kf_status kf_pipeline_create(kf_device *dev, const kf_module *m, const kf_ir_kernel *k,
                             kf_pipeline **out, kf_error *err)
{
    KF_NEED(out, err, "out (where the pipeline goes)");
    *out = NULL;
    kf_status rs = kf_rt_rec_refuse(dev, "kf_pipeline_create", err);
    if (rs != KF_OK) return rs;
    if (!k) return kf_error_set(err, KF_ERR_USAGE, "no kernel given to kf_pipeline_create");
    if (m && kf_module_check_kernel(m, k, "kf_pipeline_create", err) != KF_OK)   /* the pipeline refers to m's kernel */
        return KF_ERR_USAGE;
    kf_pipeline *p = kernel_pipeline_new(dev, k);
    if (!p) return kf_error_set(err, KF_ERR_NOMEM, "out of memory creating a pipeline");
    kf_status st = dev->ops->pipeline_create(p, m, err);
    if (st != KF_OK) {
        kf_pipeline_destroy(p);
        return st;
    }
    *out = p;
    return KF_OK;
}

kf_status kf_pipeline_create_module(kf_device *dev, const kf_module *m, kf_pipeline **out, kf_error *err)
{
    KF_NEED(m, err, "the module");
    if (m->diags.nerrors)
        return kf_error_set(err, KF_ERR_USAGE, "kf_pipeline_create_module: the module has %u error%s "
                            "(kf_module_diagnostics): compile it without errors first", m->diags.nerrors,
                            m->diags.nerrors == 1 ? "" : "s");
    if (!m->nkernels) return kf_error_set(err, KF_ERR_USAGE, "no kernel in the module given to kf_pipeline_create_module");
    uint32_t n = m->nkernels;
    memset(out, 0, n * sizeof *out);
    kf_status st = kf_rt_rec_refuse(dev, "kf_pipeline_create_module", err);
    for (uint32_t i = 0; i < n && st == KF_OK; i++)
        if (!(out[i] = kernel_pipeline_new(dev, &m->kernels[i])))
            st = kf_error_set(err, KF_ERR_NOMEM, "out of memory creating %u pipelines", n);
    if (st == KF_OK && dev->ops->module_create) st = dev->ops->module_create(out, n, m, err);
    for (uint32_t i = 0; i < n && st == KF_OK && !dev->ops->module_create; i++)
        st = dev->ops->pipeline_create(out[i], m, err);
    if (st == KF_OK) return KF_OK;
    for (uint32_t i = 0; i < n; i++) {
        kf_pipeline_destroy(out[i]);
        out[i] = NULL;
    }
    return st;
}

kf_status kf_pipeline_create_raw(kf_device *dev, const kf_raw_kernel *rk, kf_pipeline **out, kf_error *err)
{
    *out = NULL;
    kf_status rs = kf_rt_rec_refuse(dev, "kf_pipeline_create_raw", err);
    if (rs != KF_OK) return rs;
    if (!rk || !rk->source || !rk->entry || (rk->nparams && !rk->params))
        return kf_error_set(err, KF_ERR_USAGE, "raw kernel needs source text, an entry point and its binding list");
    if (!dev->ops->pipeline_create_raw)
        return kf_error_set(err, KF_ERR_USAGE, "the %s device cannot run raw %s kernels (a CUDA device can)",
                            dev->props.name, rk->kind == KF_SRC_PTX ? "PTX" : "CUDA-C");
    for (uint32_t i = 0; i < rk->nparams; i++) {
        kf_type t = rk->params[i].type;
        bool ok = t.kind == KF_TK_BUFFER ? elem_ok(kf_type_vector((kf_scalar)t.scalar, t.lanes)) : elem_ok(t);
        if (!ok)
            return kf_error_set(err, KF_ERR_USAGE, "binding %u '%s' of '%s' is neither a buffer nor a scalar/vector type",
                                i, rk->params[i].name ? rk->params[i].name : "?", rk->entry);
    }
    kf_pipeline *p = pipeline_new(dev, rk->entry, rk->params, rk->nparams);
    if (!p) return kf_error_set(err, KF_ERR_NOMEM, "out of memory creating a pipeline");
    memcpy(p->block, rk->block, sizeof p->block);
    kf_status st = dev->ops->pipeline_create_raw(p, rk, err);
    if (st != KF_OK) {
        kf_pipeline_destroy(p);
        return st;
    }
    *out = p;
    return KF_OK;
}

void kf_pipeline_destroy(kf_pipeline *p)
{
    if (!p) return;
    if (p->impl) p->dev->ops->pipeline_destroy(p);
    for (uint32_t i = 0; i < p->nparams; i++) kf_rt_free((void *)p->params[i].name);
    kf_rt_free(p->params);
    kf_rt_free((void *)p->name);
    kf_rt_free(p);
}

kf_code_origin kf_pipeline_origin(const kf_pipeline *p) { return p->origin; }
const char *kf_pipeline_warning(const kf_pipeline *p) { return p->warning[0] ? p->warning : NULL; }

/* ---- validation -------------------------------------------------------------- */
static const char *tstr(kf_type t, char *buf, size_t n) { return kf_type_str(t, buf, n); }

static kf_status check_buffer_arg(const kf_pipeline *p, uint32_t i, const kf_buffer *b, kf_error *err)
{
    const kf_ir_param *pa = &p->params[i];
    char want[64], have[64];
    kf_type pe = kf_type_vector((kf_scalar)pa->type.scalar, pa->type.lanes);
    if (b->dev != p->dev)
        return kf_error_set(err, KF_ERR_USAGE, "argument %u '%s' of '%s': the buffer belongs to another device (%s)",
                            i, pa->name, p->name, b->dev->props.name);
    if (b->elem.scalar != pe.scalar || b->elem.lanes != pe.lanes)
        return kf_error_set(err, KF_ERR_USAGE,
                            "argument %u '%s' of '%s' is %s but the buffer holds %s elements: element types must match exactly",
                            i, pa->name, p->name, tstr(pa->type, want, sizeof want), tstr(b->elem, have, sizeof have));
    if ((pa->type.flags & KF_TF_MUT) && kf_buffer_readonly(b))
        return kf_error_set(err, KF_ERR_USAGE,
                            "argument %u '%s' of '%s' is %s (written by the kernel) but the buffer is read-only",
                            i, pa->name, p->name, tstr(pa->type, want, sizeof want));
    uint32_t align = pa->align ? pa->align : kf_type_elem_bytes(pe);
    if (b->addr % align != 0)
        return kf_error_set(err, KF_ERR_USAGE,
                            "argument %u '%s' of '%s': the view starts at byte offset %zu, not aligned to %u bytes "
                            "(the widest access the kernel makes to it); start the view at a multiple of %u elements",
                            i, pa->name, p->name, b->offset, align, align / kf_type_elem_bytes(pe) ? align / kf_type_elem_bytes(pe) : 1);
    return KF_OK;
}

static kf_status check_value_arg(const kf_pipeline *p, uint32_t i, const kf_value *v, kf_error *err)
{
    const kf_ir_param *pa = &p->params[i];
    char want[64], have[64];
    if (v->type.kind != pa->type.kind || v->type.scalar != pa->type.scalar || v->type.lanes != pa->type.lanes)
        return kf_error_set(err, KF_ERR_USAGE, "argument %u '%s' of '%s' has type %s but the value given is %s",
                            i, pa->name, p->name, tstr(pa->type, want, sizeof want), tstr(v->type, have, sizeof have));
    return KF_OK;
}

static kf_status check_args(const kf_pipeline *p, const kf_arg *args, uint32_t nargs, kf_error *err)
{
    if (nargs && !args)
        return kf_error_set(err, KF_ERR_USAGE, "kernel '%s': the argument array is NULL with %u arguments", p->name, nargs);
    if (nargs != p->nparams)
        return kf_error_set(err, KF_ERR_USAGE, "kernel '%s' takes %u argument%s, got %u", p->name, p->nparams,
                            p->nparams == 1 ? "" : "s", nargs);
    for (uint32_t i = 0; i < nargs; i++) {
        const kf_ir_param *pa = &p->params[i];
        char want[64];
        bool is_buf = pa->type.kind == KF_TK_BUFFER;
        if (is_buf && !args[i].buf)
            return kf_error_set(err, KF_ERR_USAGE, "argument %u '%s' of '%s' is a buffer %s: pass a buffer, not a value",
                                i, pa->name, p->name, tstr(pa->type, want, sizeof want));
        if (!is_buf && args[i].buf)
            return kf_error_set(err, KF_ERR_USAGE, "argument %u '%s' of '%s' is a value of type %s: pass a value, not a buffer",
                                i, pa->name, p->name, tstr(pa->type, want, sizeof want));
        kf_status st = is_buf ? check_buffer_arg(p, i, args[i].buf, err) : check_value_arg(p, i, &args[i].value, err);
        if (st != KF_OK) return st;
    }
    return KF_OK;
}

/* A read-only and a writable parameter must not see the same bytes:
 * argument i bound to bi against argument j bound to bj. */
static kf_status check_pair(const kf_pipeline *p, uint32_t i, const kf_buffer *bi, uint32_t j, const kf_buffer *bj,
                            kf_error *err)
{
    bool mi = (p->params[i].type.flags & KF_TF_MUT) != 0, mj = (p->params[j].type.flags & KF_TF_MUT) != 0;
    if (mi == mj || !bi || !bj) return KF_OK;
    uint32_t r = mi ? j : i, w = mi ? i : j;
    const kf_buffer *br = mi ? bj : bi, *bw = mi ? bi : bj;
    /* addr is the root's plus the offset: one test for views of one buffer and for wraps of one memory */
    if (!br->bytes || !bw->bytes || br->addr >= bw->addr + bw->bytes || bw->addr >= br->addr + br->bytes)
        return KF_OK;
    if (br->root == bw->root)
        return kf_error_set(err, KF_ERR_USAGE,
                            "arguments %u '%s' (read-only) and %u '%s' (writable) of '%s' overlap "
                            "(bytes [%zu, %zu) and [%zu, %zu) of one buffer): the kernel assumes they do not alias; "
                            "pass separate buffers",
                            r, p->params[r].name, w, p->params[w].name, p->name, br->offset,
                            br->offset + br->bytes, bw->offset, bw->offset + bw->bytes);
    return kf_error_set(err, KF_ERR_USAGE,   /* two buffers over one memory (kf_buffer_wrap of overlapping ranges) */
                        "arguments %u '%s' (read-only) and %u '%s' (writable) of '%s' are different buffers over "
                        "overlapping memory (wrapped: %zu bytes at 0x%llx and %zu at 0x%llx): the kernel assumes "
                        "they do not alias; pass separate memory",
                        r, p->params[r].name, w, p->params[w].name, p->name, br->bytes,
                        (unsigned long long)br->addr, bw->bytes, (unsigned long long)bw->addr);
}

static kf_status check_aliasing(const kf_pipeline *p, const kf_arg *args, uint32_t nargs, kf_error *err)
{
    for (uint32_t w = 0; w < nargs; w++) {
        if (!(p->params[w].type.flags & KF_TF_MUT)) continue;
        for (uint32_t r = 0; r < nargs; r++) {
            kf_status st = check_pair(p, w, args[w].buf, r, args[r].buf, err);
            if (st != KF_OK) return st;
        }
    }
    return KF_OK;
}

/* Block from the launch (zeros: the default), unused dimensions 1. */
static kf_status resolve_block(const kf_pipeline *p, const kf_launch *l, uint32_t block[3], kf_error *err)
{
    bool given = l && l->block[0];
    for (int d = 0; d < 3; d++) {
        block[d] = given ? l->block[d] : p->block[d];
        if (d > 0 && block[d] == 0) block[d] = 1;
    }
    if (block[0] == 0)
        return kf_error_set(err, KF_ERR_USAGE, "kernel '%s' has no default block: give one at dispatch", p->name);
    return KF_OK;
}

/* The kernel's scalar arguments as values (buffers: none), in vals[0..n). */
static void arg_values(const kf_pipeline *p, const kf_arg *args, kf_value *vals)
{
    for (uint32_t i = 0; i < p->nparams; i++) vals[i] = args[i].buf ? (kf_value){0} : args[i].value;
}

static kf_status resolve_grid(const kf_pipeline *p, const kf_value *vals, const kf_launch *l,
                              const uint32_t block[3], uint32_t grid[3], kf_error *err)
{
    if (l && l->grid[0]) {
        for (int d = 0; d < 3; d++) grid[d] = l->grid[d] ? l->grid[d] : (d ? 1 : 0);
        return KF_OK;
    }
    if (l && (l->grid[1] || l->grid[2]))   /* grid.x 0 means "the schedule's": y and z would be dropped */
        return kf_error_set(err, KF_ERR_USAGE, "kernel '%s': the launch grid (0, %u, %u) has x = 0; give x too, or "
                            "all three 0 for the schedule's grid", p->name, l->grid[1], l->grid[2]);
    uint64_t count = l ? l->count : 0;
    if (!p->k || p->k->sched.ngrid == 0) {
        if (!count)
            return kf_error_set(err, KF_ERR_USAGE,
                                "kernel '%s' has no grid expression: give an element count or an explicit grid", p->name);
        uint64_t g = count / block[0] + (count % block[0] != 0);
        if (g > UINT32_MAX)
            return kf_error_set(err, KF_ERR_USAGE, "count %llu needs %llu blocks, more than a grid can hold",
                                (unsigned long long)count, (unsigned long long)g);
        grid[0] = (uint32_t)g;
        grid[1] = grid[2] = 1;
        return KF_OK;
    }
    if (count)
        return kf_error_set(err, KF_ERR_USAGE, "kernel '%s': kf_launch.count %llu has no effect, the kernel's schedule has a "
                            "grid (leave count 0, or give kf_launch.grid to override the grid)", p->name,
                            (unsigned long long)count);
    return kf_schedule_grid(p->k, vals, count, grid, err);
}

/* Dynamic shared bytes: the launch's (kf_launch.dyn_shared), else the
 * schedule's `shared = EXPR`, else 0. */
static kf_status resolve_shared(const kf_pipeline *p, const kf_value *vals, const kf_launch *l, uint32_t *dyn,
                                kf_error *err)
{
    *dyn = l ? l->dyn_shared : 0;
    if (*dyn || !p->k || !p->k->sched.shared) return KF_OK;
    return kf_schedule_shared(p->k, vals, dyn, err);
}

/* from_launch: dyn is the launch's (kf_launch.dyn_shared), not the schedule's. */
static kf_status check_limits(const kf_pipeline *p, const uint32_t grid[3], const uint32_t block[3],
                              uint32_t dyn, bool from_launch, kf_error *err)
{
    const kf_device_props *dp = &p->dev->props;
    static const char axis[3] = {'x', 'y', 'z'};
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    for (int d = 0; d < 3; d++) {
        if (block[d] > dp->max_block[d])
            return kf_error_set(err, KF_ERR_USAGE, "block.%c = %u exceeds the device limit max_block_dim.%c = %u (%s)",
                                axis[d], block[d], axis[d], dp->max_block[d], dp->name);
        if (grid[d] > dp->max_grid[d])
            return kf_error_set(err, KF_ERR_USAGE, "grid.%c = %u exceeds the device limit max_grid_dim.%c = %u (%s)",
                                axis[d], grid[d], axis[d], dp->max_grid[d], dp->name);
    }
    if (threads > dp->max_threads_per_block)
        return kf_error_set(err, KF_ERR_USAGE,
                            "block (%u, %u, %u) has %llu threads, more than the device limit max_threads_per_block = %u (%s)",
                            block[0], block[1], block[2], (unsigned long long)threads, dp->max_threads_per_block, dp->name);
    if (p->max_threads && threads > p->max_threads)
        return kf_error_set(err, KF_ERR_USAGE,
                            "block (%u, %u, %u) has %llu threads, more than kernel '%s' can run per block "
                            "(%u: the launch bound of its code, from @schedule's block, or register use)",
                            block[0], block[1], block[2], (unsigned long long)threads, p->name, p->max_threads);
    uint64_t shared = (uint64_t)dyn + p->static_shared;
    if (shared > dp->shared_per_block_optin) {
        uint32_t room = p->static_shared < dp->shared_per_block_optin ? dp->shared_per_block_optin - p->static_shared : 0;
        return kf_error_set(err, KF_ERR_USAGE,
                            "kernel '%s': %u bytes of dynamic shared memory (%s) + %u static exceed the device limit "
                            "max_shared_per_block = %u bytes (%s): ask for at most %u",
                            p->name, dyn, from_launch ? "the launch's" : "its @schedule's shared = ...",
                            p->static_shared, dp->shared_per_block_optin, dp->name, room);
    }
    return KF_OK;
}

kf_status kf_rt_bind(kf_pipeline *p, const kf_arg *args, uint32_t nargs, const kf_launch *launch,
                     kf_plan *plan, kf_error *err)
{
    kf_status st = check_args(p, args, nargs, err);
    if (st == KF_OK) st = check_aliasing(p, args, nargs, err);
    if (st == KF_OK) arg_values(p, args, plan->vals);
    if (st == KF_OK) st = resolve_block(p, launch, plan->block, err);
    if (st == KF_OK) st = resolve_grid(p, plan->vals, launch, plan->block, plan->grid, err);
    if (st == KF_OK) st = resolve_shared(p, plan->vals, launch, &plan->dyn_shared, err);
    if (st == KF_OK) st = check_limits(p, plan->grid, plan->block, plan->dyn_shared, launch && launch->dyn_shared, err);
    if (st != KF_OK) return st;
    plan->p = p;
    plan->nargs = nargs;
    plan->ro_gen = p->dev->ro_gen;   /* check_args saw every &mut binding writable */
    plan->launch = launch ? *launch : (kf_launch){0};
    plan->empty = !plan->grid[0] || !plan->grid[1] || !plan->grid[2];
    for (uint32_t i = 0; i < nargs; i++) {
        plan->args[i] = args[i];
        plan->need[i] = args[i].buf ? args[i].buf->bytes : 0;
    }
    return KF_OK;
}

/* ---- dispatch and plans ------------------------------------------------------- */
static size_t round64(size_t n) { return (n + 63) & ~(size_t)63; }

kf_status kf_plan_create(kf_pipeline *p, const kf_arg *args, uint32_t nargs, const kf_launch *launch,
                         kf_plan **out, kf_error *err)
{
    *out = NULL;
    size_t n = nargs ? nargs : 1;
    size_t head = round64(sizeof(kf_plan)), argb = round64(n * sizeof(kf_arg));
    size_t needb = round64(n * sizeof(size_t)), valb = round64(n * sizeof(kf_value));
    kf_plan *plan = kf_rt_alloc(head + argb + needb + valb + p->dev->ops->plan_extra(nargs));
    if (!plan) return kf_error_set(err, KF_ERR_NOMEM, "out of memory binding arguments");
    plan->args = (kf_arg *)((char *)plan + head);
    plan->need = (size_t *)((char *)plan + head + argb);
    plan->vals = (kf_value *)((char *)plan + head + argb + needb);
    plan->extra = (char *)plan + head + argb + needb + valb;
    kf_status st = kf_rt_bind(p, args, nargs, launch, plan, err);
    if (st != KF_OK) {
        kf_rt_free(plan);
        return st;
    }
    for (uint32_t i = 0; i < nargs; i++) p->dev->ops->plan_pack(plan, i);
    *out = plan;
    return KF_OK;
}

/* ---- re-targeting plans --------------------------------------------------------- */
int kf_pipeline_param_index(const kf_pipeline *p, const char *name)
{
    for (uint32_t i = 0; name && i < p->nparams; i++)
        if (!strcmp(p->params[i].name, name)) return (int)i;
    return -1;
}

/* Argument `index` exists and is a buffer (want_buf) or a value. */
static kf_status retarget_check(const kf_plan *plan, uint32_t index, bool want_buf, kf_error *err)
{
    const kf_pipeline *p = plan->p;
    if (index >= plan->nargs)
        return kf_error_set(err, KF_ERR_USAGE, "kernel '%s' has %u argument%s: there is no argument %u to re-target",
                            p->name, plan->nargs, plan->nargs == 1 ? "" : "s", index);
    bool is_buf = p->params[index].type.kind == KF_TK_BUFFER;
    if (is_buf != want_buf)
        return kf_error_set(err, KF_ERR_USAGE, "argument %u '%s' of '%s' is %s: re-target it with %s", index,
                            p->params[index].name, p->name, is_buf ? "a buffer" : "a value",
                            is_buf ? "kf_plan_set_buffer" : "kf_plan_set_value");
    return KF_OK;
}

/* The grid and dynamic shared bytes with argument `index` set to v: the
 * schedule evaluated again when it reads that parameter and the launch did
 * not fix them, and checked against the limits. */
static kf_status retarget_shape(kf_plan *plan, uint32_t index, const kf_value *v, uint32_t grid[3], uint32_t *dyn,
                                kf_error *err)
{
    kf_pipeline *p = plan->p;
    memcpy(grid, plan->grid, 3 * sizeof *grid);
    *dyn = plan->dyn_shared;
    bool fixed = plan->launch.grid[0] && plan->launch.dyn_shared;
    if (fixed || !p->k || !kf_schedule_uses_param(p->k, index)) return KF_OK;
    arg_values(p, plan->args, plan->vals);
    plan->vals[index] = *v;
    kf_status st = resolve_grid(p, plan->vals, &plan->launch, plan->block, grid, err);
    if (st == KF_OK) st = resolve_shared(p, plan->vals, &plan->launch, dyn, err);
    return st == KF_OK ? check_limits(p, grid, plan->block, *dyn, plan->launch.dyn_shared != 0, err) : st;
}

kf_status kf_plan_set_value(kf_plan *plan, uint32_t index, const kf_value *value, kf_error *err)
{
    uint32_t grid[3], dyn;
    kf_status st = retarget_check(plan, index, false, err);
    if (st != KF_OK) return st;
    KF_NEED(value, err, "the value");
    st = check_value_arg(plan->p, index, value, err);
    if (st == KF_OK) st = retarget_shape(plan, index, value, grid, &dyn, err);
    if (st != KF_OK) return st;
    plan->args[index].value = *value;
    memcpy(plan->grid, grid, sizeof grid);
    plan->dyn_shared = dyn;
    plan->empty = !grid[0] || !grid[1] || !grid[2];
    plan->p->dev->ops->plan_pack(plan, index);
    plan->gen++;
    return KF_OK;
}

kf_status kf_plan_set_buffer(kf_plan *plan, uint32_t index, kf_buffer *buf, kf_error *err)
{
    kf_pipeline *p = plan->p;
    kf_status st = retarget_check(plan, index, true, err);
    if (st == KF_OK && !buf)
        st = kf_error_set(err, KF_ERR_USAGE, "argument %u '%s' of '%s' is a buffer: pass a buffer, not NULL", index,
                          p->params[index].name, p->name);
    if (st == KF_OK) st = check_buffer_arg(p, index, buf, err);
    if (st == KF_OK && buf->bytes < plan->need[index])
        st = kf_error_set(err, KF_ERR_USAGE,
                          "argument %u '%s' of '%s': the buffer holds %zu bytes (%zu elements) but the plan was made "
                          "with %zu bytes, what the kernel was validated with; bind a buffer at least that large",
                          index, p->params[index].name, p->name, buf->bytes, buf->count, plan->need[index]);
    for (uint32_t j = 0; st == KF_OK && j < plan->nargs; j++)
        if (j != index) st = check_pair(p, index, buf, j, plan->args[j].buf, err);
    if (st != KF_OK) return st;
    plan->args[index].buf = buf;
    p->dev->ops->plan_pack(plan, index);
    plan->gen++;
    return KF_OK;
}

void kf_plan_shape(const kf_plan *plan, uint32_t grid[3], uint32_t block[3], uint32_t *dyn_shared)
{
    if (grid) memcpy(grid, plan->grid, sizeof plan->grid);
    if (block) memcpy(block, plan->block, sizeof plan->block);
    if (dyn_shared) *dyn_shared = plan->dyn_shared;
}

/* ---- launching ------------------------------------------------------------------- */
kf_status kf_rt_plan_writable(kf_plan *plan, kf_error *err)
{
    const kf_pipeline *p = plan->p;
    if (plan->ro_gen == p->dev->ro_gen) return KF_OK;
    for (uint32_t i = 0; i < plan->nargs; i++)
        if (plan->args[i].buf && (p->params[i].type.flags & KF_TF_MUT) && kf_buffer_readonly(plan->args[i].buf))
            return kf_error_set(err, KF_ERR_USAGE, "argument %u '%s' of '%s' is written by the kernel, but its buffer "
                                "was marked read-only after the plan was made", i, p->params[i].name, p->name);
    plan->ro_gen = p->dev->ro_gen;
    return KF_OK;
}

kf_status kf_plan_launch(kf_plan *plan, kf_dispatch_mode mode, float *ms, kf_error *err)
{
    KF_NEED(plan, err, "the plan");
    kf_status st = KF_OK;
    if (mode != KF_DISPATCH_SYNC && mode != KF_DISPATCH_ASYNC && mode != KF_DISPATCH_TIMED)
        st = kf_error_set(err, KF_ERR_USAGE, "kf_plan_launch: unknown dispatch mode %d", (int)mode);
    else if (mode == KF_DISPATCH_TIMED && !ms)
        st = kf_error_set(err, KF_ERR_USAGE, "a timed dispatch needs somewhere to put the time (ms is NULL)");
    else
        st = kf_rt_plan_writable(plan, err);
    if (plan->p->dev->rec) return kf_rt_rec_launch(plan, mode, st, err);   /* a refusal abandons the recording */
    if (st != KF_OK) return st;
    if (plan->empty) {
        if (ms) *ms = 0;
        return KF_OK;
    }
    return plan->p->dev->ops->launch(plan, mode, ms, err);
}

void kf_plan_destroy(kf_plan *plan) { kf_rt_free(plan); }

kf_status kf_plan_bench_bare(kf_plan *plan, uint32_t n, double *us, kf_error *err)
{
    const kf_device_ops *ops = plan->p->dev->ops;
    kf_status rs = kf_rt_rec_refuse(plan->p->dev, "kf_plan_bench_bare", err);
    if (rs != KF_OK) return rs;
    if (!ops->bench_bare)
        return kf_error_set(err, KF_ERR_USAGE, "a bare cuLaunchKernel loop needs a CUDA device, not %s",
                            plan->p->dev->props.name);
    if (plan->empty) return kf_error_set(err, KF_ERR_USAGE, "the plan launches nothing (empty grid)");
    return ops->bench_bare(plan, n, us, err);
}

kf_status kf_buffer_copy(kf_buffer *dst, const kf_buffer *src, size_t bytes, kf_dispatch_mode mode, float *ms,
                         kf_error *err)
{
    if (dst->dev != src->dev)
        return kf_error_set(err, KF_ERR_USAGE, "copy between buffers of different devices");
    kf_status rs = kf_rt_rec_refuse(dst->dev, "kf_buffer_copy", err);
    if (rs != KF_OK) return rs;
    if (bytes > dst->bytes || bytes > src->bytes)
        return kf_error_set(err, KF_ERR_USAGE, "copy of %zu bytes does not fit (source %zu bytes, destination %zu)",
                            bytes, src->bytes, dst->bytes);
    if (mode == KF_DISPATCH_TIMED && !ms)
        return kf_error_set(err, KF_ERR_USAGE, "a timed copy needs somewhere to put the time (ms is NULL)");
    if (!bytes) return KF_OK;
    return dst->dev->ops->copy(dst->dev, dst->addr, src->addr, bytes, mode, ms, err);
}

kf_status kf_dispatch(kf_pipeline *p, const kf_arg *args, uint32_t nargs, const kf_launch *launch,
                      kf_dispatch_mode mode, float *ms, kf_error *err)
{
    kf_plan *plan;
    KF_NEED(p, err, "the pipeline");
    kf_status st = kf_rt_rec_refuse(p->dev, "kf_dispatch (its plan does not outlive the call; record a kf_plan)", err);
    if (st != KF_OK) return st;
    if (mode != KF_DISPATCH_SYNC && mode != KF_DISPATCH_ASYNC && mode != KF_DISPATCH_TIMED)
        return kf_error_set(err, KF_ERR_USAGE, "kf_dispatch: unknown dispatch mode %d", (int)mode);
    st = kf_plan_create(p, args, nargs, launch, &plan, err);
    if (st != KF_OK) return st;
    st = kf_plan_launch(plan, mode, ms, err);
    kf_plan_destroy(plan);
    return st;
}

/* ---- timed regions and resources ------------------------------------------------ */
/* A timer call abandons a recording on every device (first), whatever else
 * is wrong with it. */
kf_status kf_device_timer_start(kf_device *dev, kf_error *err)
{
    kf_status st = kf_rt_rec_refuse(dev, "kf_device_timer_start", err);
    if (st != KF_OK) return st;
    if (!dev->ops->timer)
        return kf_error_set(err, KF_ERR_USAGE, "timing a region of work needs a CUDA device, not %s", dev->props.name);
    return dev->ops->timer(dev, false, NULL, err);
}

kf_status kf_device_timer_stop(kf_device *dev, float *ms, kf_error *err)
{
    kf_status st = kf_rt_rec_refuse(dev, "kf_device_timer_stop", err);
    if (st != KF_OK) return st;
    if (!dev->ops->timer)
        return kf_error_set(err, KF_ERR_USAGE, "timing a region of work needs a CUDA device, not %s", dev->props.name);
    if (!ms) return kf_error_set(err, KF_ERR_USAGE, "a timed region needs somewhere to put the time (ms is NULL)");
    return dev->ops->timer(dev, true, ms, err);
}

kf_status kf_pipeline_resources(const kf_pipeline *p, kf_resources *out, kf_error *err)
{
    memset(out, 0, sizeof *out);
    if (!p->dev->ops->resources)
        return kf_error_set(err, KF_ERR_USAGE, "registers and local memory are known only on a CUDA device, not %s",
                            p->dev->props.name);
    return p->dev->ops->resources(p, out, err);
}
