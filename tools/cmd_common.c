/* Helpers shared by the subcommands (cmd_common.h): compile-and-report,
 * argument binding from NAME=SPEC strings to host inputs, and device upload.
 * `kforge run` and `kforge test` go through exactly the same binding code,
 * so a golden case means what the same arguments mean on the command line. */
#include "cmd_common.h"

#include <stdarg.h>
#include <string.h>

#include "../ir/numeric.h"
#include "fill.h"
#include "npy.h"

bool kf_cli_define_add(kf_cli_defines *defs, char *text, kf_error *err)
{
    char *eq = strchr(text, '=');
    if (!eq || eq == text || eq[1] == 0) {
        kf_error_set(err, KF_ERR_USAGE, "bad define '%s': expected -D NAME=VALUE (e.g. -D BLOCK=128)", text);
        return false;
    }
    *eq = 0;
    kf_define d = {text, eq + 1};
    if (!KF_VEC_PUSH(defs, d)) {
        kf_error_set(err, KF_ERR_NOMEM, "out of memory");
        return false;
    }
    return true;
}

int kf_cli_exit_for(kf_status st)
{
    switch (st) {
    case KF_OK: return KF_EXIT_OK;
    case KF_ERR_SOURCE: return KF_EXIT_FAIL;
    case KF_ERR_USAGE: case KF_ERR_IO: return KF_EXIT_USAGE;
    default: return KF_EXIT_RUNTIME;
    }
}

void kf_cli_print_diags(const kf_diags *d, const kf_module *m)
{
    if (!d->items.len) return;
    kf_buf b = {0};
    kf_diags_render(&b, d, m->source, m->source_len);
    if (b.len) fputs(b.data, stderr);
    kf_buf_free(&b);
}

/* Errors in -D overrides have no source position (line 0): when they are
 * the only errors, the command line is what is wrong (a usage error). */
static bool only_define_errors(const kf_diags *d)
{
    if (!d->nerrors || d->dropped) return false;
    for (size_t i = 0; i < d->items.len; i++)
        if (d->items.data[i].kind == KF_DIAG_ERROR && d->items.data[i].loc.line) return false;
    return true;
}

int kf_cli_compile(const char *cmd, const char *path, const kf_cli_defines *defs, kf_opt_level opt, kf_module **out)
{
    *out = NULL;
    char *src;
    size_t len;
    kf_error err = {0};
    if (kf_cli_read(path, KF_SOURCE_MAX, &src, &len, &err) != KF_OK) {
        fprintf(stderr, "kforge %s: error: %s\n", cmd, err.msg);
        return KF_EXIT_USAGE;
    }
    kf_compile_opts opts = {defs ? defs->data : NULL, defs ? (uint32_t)defs->len : 0, opt};
    kf_module *m = NULL;
    path = kf_cli_input_name(path);
    kf_status st = kf_compile(path, src, len, &opts, &m);
    free(src);
    if (!m) {
        fprintf(stderr, "kforge %s: error: out of memory compiling %s\n", cmd, path);
        return KF_EXIT_RUNTIME;
    }
    if (st == KF_ERR_SOURCE && only_define_errors(&m->diags)) {
        for (size_t i = 0; i < m->diags.items.len; i++)
            if (m->diags.items.data[i].kind == KF_DIAG_ERROR)
                fprintf(stderr, "kforge %s: error: %s\n", cmd, m->diags.items.data[i].msg);
        kf_module_free(m);
        return KF_EXIT_USAGE;
    }
    kf_cli_print_diags(&m->diags, m);
    if (st != KF_OK) {
        if (st != KF_ERR_SOURCE) fprintf(stderr, "kforge %s: error: compiling %s failed (out of memory)\n", cmd, path);
        kf_module_free(m);
        return st == KF_ERR_SOURCE ? KF_EXIT_FAIL : KF_EXIT_RUNTIME;
    }
    *out = m;
    return KF_EXIT_OK;
}

bool kf_cli_opt_level(const char *s, kf_opt_level *opt)
{
    if (!strcmp(s, "-O0")) *opt = KF_OPT_O0;
    else if (!strcmp(s, "-O1")) *opt = KF_OPT_O1;
    else return false;
    return true;
}

const kf_ir_kernel *kf_cli_pick_kernel(const kf_module *m, const char *name, const char *cmd)
{
    const kf_ir_kernel *k = kf_module_kernel(m, name);
    if (k) return k;
    if (m->nkernels == 0) {
        fprintf(stderr, "kforge %s: error: %s has no kernel\n", cmd, m->file);
        return NULL;
    }
    if (name) {
        const char *names[64];
        uint32_t n = m->nkernels < 64 ? m->nkernels : 64;
        for (uint32_t i = 0; i < n; i++) names[i] = m->kernels[i].name;
        const char *near = kf_cli_suggest(name, names, n);
        fprintf(stderr, "kforge %s: error: %s has no kernel '%s'", cmd, m->file, name);
        if (near) fprintf(stderr, " (did you mean '%s'?)", near);
        fprintf(stderr, "; its kernels are:");
    } else
        fprintf(stderr, "kforge %s: error: %s has %u kernels; choose one with -k KERNEL:", cmd, m->file, m->nkernels);
    for (uint32_t i = 0; i < m->nkernels; i++) fprintf(stderr, " %s", m->kernels[i].name);
    fputc('\n', stderr);
    return NULL;
}

/* err->msg without the "file:line:col: " that repeats err->loc (the
 * interpreter names the location in its message so that it reads whole on
 * its own; the rendered diagnostic already starts with it). */
static void msg_without_loc(const kf_error *err, char *out, size_t size)
{
    char prefix[600];
    snprintf(prefix, sizeof prefix, "%s:%u:%u: ", err->loc.file ? err->loc.file : "", err->loc.line, err->loc.col);
    const char *at = err->loc.file ? strstr(err->msg, prefix) : NULL;
    if (!at) {
        snprintf(out, size, "%s", err->msg);
        return;
    }
    snprintf(out, size, "%.*s%s", (int)(at - err->msg), err->msg, at + strlen(prefix));
}

void kf_cli_print_error(const char *cmd, const kf_module *m, const kf_error *err)
{
    if (m && err->loc.line) {
        char msg[sizeof err->msg];
        msg_without_loc(err, msg, sizeof msg);
        kf_diag d = {KF_DIAG_ERROR, err->loc, msg};
        kf_buf b = {0};
        bool same = err->loc.file && m->file && strcmp(err->loc.file, m->file) == 0;
        kf_diag_render(&b, &d, same ? m->source : NULL, same ? m->source_len : 0);
        if (b.len) fputs(b.data, stderr);
        kf_buf_free(&b);
    } else {
        fprintf(stderr, "kforge %s: error: %s\n", cmd, err->msg);
    }
    if (err->log && *err->log) fprintf(stderr, "%s%s", err->log, err->log[strlen(err->log) - 1] == '\n' ? "" : "\n");
}

void kf_cli_print_warning(const char *cmd, const kf_pipeline *p)
{
    const char *w = kf_pipeline_warning(p);
    if (w && *w) fprintf(stderr, "kforge %s: warning: %s\n", cmd, w);
}

bool kf_cli_raw_kind(const char *path, kf_src_kind *kind)
{
    size_t n = strlen(path);
    if (n > 3 && !strcmp(path + n - 3, ".cu")) *kind = KF_SRC_CUDA;
    else if (n > 4 && !strcmp(path + n - 4, ".ptx")) *kind = KF_SRC_PTX;
    else return false;
    return true;
}

/* The `// kforge: params LIST` line of a raw source, or NULL (LIST is
 * copied into buf). */
static const char *params_line(const char *src, char *buf, size_t size)
{
    for (const char *p = src; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        p += strspn(p, " \t");
        if (strncmp(p, "//", 2)) continue;
        p += 2 + strspn(p + 2, " \t");
        if (strncmp(p, "kforge:", 7)) continue;
        p += 7 + strspn(p + 7, " \t");
        if (strncmp(p, "params", 6) || (p[6] != ' ' && p[6] != '\t')) continue;
        p += 7;
        snprintf(buf, size, "%.*s", (int)strcspn(p, "\r\n"), p);
        return buf;
    }
    return NULL;
}

kf_status kf_cli_raw_load(const char *path, const char *entry, const char *list, const uint32_t block[3],
                          kf_cli_raw *out, kf_error *err)
{
    memset(out, 0, sizeof *out);
    if (!kf_cli_raw_kind(path, &out->kind)) out->kind = KF_SRC_CUDA;
    size_t len;
    kf_status st = kf_cli_read(path, KF_SOURCE_MAX, &out->source, &len, err);
    if (st != KF_OK) return st;
    char line[4096];
    if (!list) list = params_line(out->source, line, sizeof line);
    if (!list)
        return kf_error_set(err, KF_ERR_USAGE, "%s: give the kernel's parameters with --params 'x: &[f32], n: u32' (a "
                            "case: a 'params' line) or a '// kforge: params ...' line in the file", kf_cli_input_name(path));
    uint32_t n = 0;
    if ((st = kf_params_parse(list, &out->params, &n, err)) != KF_OK) return st;
    out->k = (kf_ir_kernel){.name = entry, .loc = {kf_cli_input_name(path), 0, 0}, .params = out->params, .nparams = n,
                            .sched = {.block = {block[0], block[1] ? block[1] : 1, block[2] ? block[2] : 1}}};
    return KF_OK;
}

kf_status kf_cli_raw_pipeline(kf_device *dev, const kf_cli_raw *r, kf_pipeline **out, kf_error *err)
{
    const uint32_t *b = r->k.sched.block;
    kf_raw_kernel rk = {r->kind, r->source, r->k.name, r->k.params, r->k.nparams, {b[0], b[1], b[2]}, 0, false};
    return kf_pipeline_create_raw(dev, &rk, out, err);
}

kf_status kf_cli_pipeline(kf_device *dev, const kf_module *m, const kf_ir_kernel *k, const kf_cli_raw *r,
                          kf_pipeline **out, kf_error *err)
{
    return r ? kf_cli_raw_pipeline(dev, r, out, err) : kf_pipeline_create(dev, m, k, out, err);
}

const char *kf_cli_raw_not_applicable(const kf_cli_raw *r, kf_backend b)
{
    if (r && r->kind == KF_SRC_CUDA && b != KF_BACKEND_CUDA) return "raw CUDA-C runs on the cuda backend (NVRTC) only";
    if (r && r->kind == KF_SRC_PTX && b != KF_BACKEND_PTX) return "raw PTX runs on the ptx backend (the driver) only";
    return NULL;
}

void kf_cli_raw_free(kf_cli_raw *r)
{
    free(r->source);
    kf_free(r->params);
    memset(r, 0, sizeof *r);
}

const char *kf_cli_backend_name(kf_backend b)
{
    return b == KF_BACKEND_CPU ? "cpu" : b == KF_BACKEND_CUDA ? "cuda" : "ptx";
}

bool kf_cli_backend_parse(const char *s, kf_backend *out)
{
    for (int b = KF_BACKEND_CPU; b <= KF_BACKEND_PTX; b++)
        if (strcmp(s, kf_cli_backend_name((kf_backend)b)) == 0) {
            *out = (kf_backend)b;
            return true;
        }
    return false;
}

/* ---- binding NAME=SPEC to inputs ----------------------------------------- */

/* Prefixes err's message with the parameter name (copying first: the
 * message is both source and destination). */
static kf_status param_error(kf_error *err, kf_status st, const char *param)
{
    char msg[sizeof err->msg];
    memcpy(msg, err->msg, sizeof msg);
    return kf_error_set(err, st, "parameter '%s': %s", param, msg);
}

int kf_cli_find_param(const kf_ir_kernel *k, const char *name)
{
    for (uint32_t i = 0; i < k->nparams; i++)
        if (!strcmp(k->params[i].name, name)) return (int)i;
    return -1;
}

static kf_type param_elem(const kf_ir_param *p) { return kf_type_vector((kf_scalar)p->type.scalar, p->type.lanes); }

static void list_params(const kf_ir_kernel *k, char *out, size_t size)
{
    size_t used = 0;
    out[0] = 0;
    for (uint32_t i = 0; i < k->nparams && used < size; i++) {
        char t[48];
        kf_type_str(k->params[i].type, t, sizeof t);
        int n = snprintf(out + used, size - used, "%s%s: %s", i ? ", " : "", k->params[i].name, t);
        if (n < 0) break;
        used += (size_t)n;
    }
}

static kf_status check_names(const kf_ir_kernel *k, const kf_cli_binding *b, size_t nb, kf_error *err)
{
    for (size_t j = 0; j < nb; j++) {
        bool known = false;
        for (uint32_t i = 0; i < k->nparams; i++) known |= strcmp(k->params[i].name, b[j].name) == 0;
        for (size_t l = 0; l < j; l++)
            if (strcmp(b[l].name, b[j].name) == 0)
                return kf_error_set(err, KF_ERR_USAGE, "parameter '%s' is given twice", b[j].name);
        if (!known) {
            char ps[512], hint[160] = "";
            const char *names[64];
            uint32_t n = k->nparams < 64 ? k->nparams : 64;
            for (uint32_t i = 0; i < n; i++) names[i] = k->params[i].name;
            const char *near = kf_cli_suggest(b[j].name, names, n);
            if (near) snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
            list_params(k, ps, sizeof ps);
            return kf_error_set(err, KF_ERR_USAGE, "kernel '%s' has no parameter '%s'%s; its parameters are (%s)",
                                k->name, b[j].name, hint, ps);
        }
    }
    return KF_OK;
}

static kf_status bind_npy(const kf_ir_param *p, const char *path, const char *base_dir,
                          kf_cli_inputs *in, uint32_t i, kf_error *err)
{
    char full[4096];
    if (base_dir && path[0] != '/') snprintf(full, sizeof full, "%s/%s", base_dir, path);
    else snprintf(full, sizeof full, "%s", path);
    kf_npy n;
    kf_status st = kf_npy_read(full, &n, err);
    if (st != KF_OK) return param_error(err, st, p->name);
    st = kf_npy_match(&n, param_elem(p), p->name, &in->elems[i], err);
    if (st != KF_OK) {
        kf_npy_free(&n);
        return st;
    }
    in->host[i] = n.data;
    return KF_OK;
}

static kf_status bind_buffer(const kf_ir_param *p, const char *spec, const char *base_dir,
                             kf_cli_inputs *in, uint32_t i, kf_error *err)
{
    char t[48];
    kf_type_str(p->type, t, sizeof t);
    in->values[i].type = p->type;
    if (spec[0] == '@') return bind_npy(p, spec + 1, base_dir, in, i, err);
    kf_fill_spec fs;
    bool is_gen;
    if (!kf_fill_parse(spec, &fs, &is_gen, err)) {
        if (is_gen) return param_error(err, KF_ERR_USAGE, p->name);
        return kf_error_set(err, KF_ERR_USAGE,
                            "parameter '%s' is a buffer %s: give %s=@file.npy, %s=zeros(N), %s=rand(N,SEED) or %s=iota(N), not '%s'",
                            p->name, t, p->name, p->name, p->name, p->name, spec);
    }
    size_t eb = kf_type_elem_bytes(param_elem(p));
    if (fs.count > SIZE_MAX / eb / 2)
        return kf_error_set(err, KF_ERR_USAGE, "parameter '%s': %llu elements is too many", p->name, (unsigned long long)fs.count);
    if (in->gens) {   /* deferred: made on the device by kf_cli_buffer_make */
        in->gens[i] = fs;
        in->elems[i] = (size_t)fs.count;
        return KF_OK;
    }
    in->host[i] = malloc((size_t)fs.count * eb);
    if (!in->host[i])
        return kf_error_set(err, KF_ERR_USAGE, "parameter '%s': %llu elements (%llu bytes) do not fit in this machine's "
                            "memory (malloc failed)", p->name, (unsigned long long)fs.count,
                            (unsigned long long)fs.count * eb);
    in->elems[i] = (size_t)fs.count;
    kf_fill(in->host[i], param_elem(p), in->elems[i], &fs);
    return KF_OK;
}

static kf_status bind_scalar(const kf_ir_param *p, const char *spec, kf_cli_inputs *in, uint32_t i, kf_error *err)
{
    char t[48];
    kf_type_str(p->type, t, sizeof t);
    kf_fill_spec fs;
    bool is_gen;
    kf_error ignore = {0};
    if (spec[0] == '@' || kf_fill_parse(spec, &fs, &is_gen, &ignore) || is_gen)
        return kf_error_set(err, KF_ERR_USAGE, "parameter '%s' is a %s value, not a buffer: give %s=VALUE",
                            p->name, t, p->name);
    return kf_value_parse(spec, p->type, p->name, &in->values[i], err);
}

static kf_status inputs_make(const kf_ir_kernel *k, const kf_cli_binding *b, size_t nb, const char *base_dir,
                             bool deferred, kf_cli_inputs *in, kf_error *err)
{
    memset(in, 0, sizeof *in);
    kf_status st = check_names(k, b, nb, err);
    if (st != KF_OK) return st;
    in->n = k->nparams;
    in->values = calloc(k->nparams + 1, sizeof *in->values);
    in->host = calloc(k->nparams + 1, sizeof *in->host);
    in->elems = calloc(k->nparams + 1, sizeof *in->elems);
    in->gens = deferred ? calloc(k->nparams + 1, sizeof *in->gens) : NULL;
    if (!in->values || !in->host || !in->elems || (deferred && !in->gens))
        return kf_error_set(err, KF_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < k->nparams && st == KF_OK; i++) {
        const kf_ir_param *p = &k->params[i];
        const kf_cli_binding *hit = NULL;
        for (size_t j = 0; j < nb; j++)
            if (strcmp(b[j].name, p->name) == 0) hit = &b[j];
        char t[48];
        kf_type_str(p->type, t, sizeof t);
        if (!hit) {
            st = kf_error_set(err, KF_ERR_USAGE, "missing argument for parameter '%s' (%s): give %s=%s",
                              p->name, t, p->name,
                              p->type.kind == KF_TK_BUFFER ? "@file.npy, zeros(N), rand(N,SEED) or iota(N)" : "VALUE");
        } else if (p->type.kind == KF_TK_BUFFER) {
            st = bind_buffer(p, hit->spec, base_dir, in, i, err);
        } else {
            st = bind_scalar(p, hit->spec, in, i, err);
        }
    }
    return st;
}

kf_status kf_cli_inputs_make(const kf_ir_kernel *k, const kf_cli_binding *b, size_t nb,
                             const char *base_dir, kf_cli_inputs *in, kf_error *err)
{
    return inputs_make(k, b, nb, base_dir, false, in, err);
}

kf_status kf_cli_inputs_make_deferred(const kf_ir_kernel *k, const kf_cli_binding *b, size_t nb,
                                      const char *base_dir, kf_cli_inputs *in, kf_error *err)
{
    return inputs_make(k, b, nb, base_dir, true, in, err);
}

void kf_cli_inputs_free(kf_cli_inputs *in)
{
    for (uint32_t i = 0; in->host && i < in->n; i++) free(in->host[i]);
    free(in->gens);
    free(in->host);
    free(in->values);
    free(in->elems);
    memset(in, 0, sizeof *in);
}

int kf_cli_scalar_u64(const kf_ir_kernel *k, const kf_cli_inputs *in, const char *name, size_t len, uint64_t *value,
                      kf_error *err)
{
    for (uint32_t i = 0; i < k->nparams; i++) {
        const kf_ir_param *p = &k->params[i];
        if (strlen(p->name) != len || strncmp(p->name, name, len)) continue;
        if (p->type.kind != KF_TK_SCALAR || !kf_type_is_int(p->type)) return 0;
        int64_t v = kf_bits_to_i64((kf_scalar)p->type.scalar, in->values[i].lane[0]);
        if (kf_type_is_signed(p->type) && v < 0) {
            kf_error_set(err, KF_ERR_USAGE, "'%s' is negative (%lld)", p->name, (long long)v);
            return -1;
        }
        *value = (uint64_t)v;
        return 1;
    }
    return 0;
}

kf_status kf_cli_launch_count(const kf_ir_kernel *k, const kf_cli_inputs *in, uint64_t given, const char *how,
                              uint64_t *count, kf_error *err)
{
    *count = k->sched.ngrid ? 0 : given;
    if (k->sched.ngrid || given) return KF_OK;
    for (uint32_t i = 0; i < k->nparams; i++) {
        if (k->params[i].type.kind != KF_TK_BUFFER) continue;
        *count = in->elems[i];
        if (*count) return KF_OK;
        return kf_error_set(err, KF_ERR_USAGE,
                            "kernel '%s' has no grid in its @schedule, so it runs over as many elements as its first "
                            "buffer '%s' holds, and that buffer is empty (0 elements): give a non-empty buffer or %s",
                            k->name, k->params[i].name, how);
    }
    return kf_error_set(err, KF_ERR_USAGE,
                        "kernel '%s' has no grid in its @schedule and no buffer parameter to count elements from: give %s",
                        k->name, how);
}

/* ---- device side --------------------------------------------------------- */

kf_status kf_cli_devargs_make(kf_device *dev, const kf_ir_kernel *k, const kf_cli_inputs *in,
                              kf_cli_devargs *out, kf_error *err)
{
    memset(out, 0, sizeof *out);
    out->args = calloc(in->n + 1, sizeof *out->args);
    if (!out->args) return kf_error_set(err, KF_ERR_NOMEM, "out of memory");
    out->n = in->n;
    for (uint32_t i = 0; i < in->n; i++) {
        const kf_ir_param *p = &k->params[i];
        out->args[i].value = in->values[i];
        if (p->type.kind != KF_TK_BUFFER) continue;
        kf_status st = kf_cli_buffer_make(dev, param_elem(p), in->elems[i], in->host[i], in->gens ? &in->gens[i] : NULL,
                                          &out->args[i].buf, err);
        if (st != KF_OK) return param_error(err, st, p->name);
    }
    return KF_OK;
}

/* Fills b (elems of elem) with rand(N, SEED): the first tile as kf_fill
 * makes it, uploaded, then doubled by device copies until b is full. */
static kf_status fill_tiled(kf_device *dev, kf_buffer *b, kf_type elem, size_t elems, const kf_fill_spec *gen, kf_error *err)
{
    size_t eb = kf_type_elem_bytes(elem), tile = KF_CLI_TILE_BYTES / eb;
    if (tile > elems) tile = elems;
    void *host = malloc(tile * eb);
    if (!host) return kf_error_set(err, KF_ERR_NOMEM, "out of memory for a %zu-byte tile", tile * eb);
    kf_fill(host, elem, tile, gen);
    kf_buffer *src = NULL, *dst = NULL;
    kf_status st = kf_buffer_view(b, 0, tile, &src, err);
    if (st == KF_OK) st = kf_buffer_upload(src, host, tile * eb, err);
    kf_buffer_destroy(src);
    free(host);
    size_t have = tile;
    while (st == KF_OK && have < elems) {
        size_t n = elems - have < have ? elems - have : have;
        src = dst = NULL;
        st = kf_buffer_view(b, 0, n, &src, err);
        if (st == KF_OK) st = kf_buffer_view(b, have, n, &dst, err);
        if (st == KF_OK) st = kf_buffer_copy(dst, src, n * eb, KF_DISPATCH_ASYNC, NULL, err);
        kf_buffer_destroy(dst);
        kf_buffer_destroy(src);
        have += n;
    }
    return st == KF_OK ? kf_device_sync(dev, err) : st;
}

kf_status kf_cli_buffer_make(kf_device *dev, kf_type elem, size_t elems, const void *host, const kf_fill_spec *gen,
                             kf_buffer **out, kf_error *err)
{
    *out = NULL;
    kf_buffer *b;
    kf_status st = kf_buffer_create(dev, elem, elems, &b, err);
    if (st != KF_OK || !elems) {
        *out = st == KF_OK ? b : NULL;
        return st;
    }
    size_t bytes = elems * kf_type_elem_bytes(elem);
    void *made = NULL;
    if (!host && gen && gen->count && gen->kind == KF_FILL_RAND) {
        st = fill_tiled(dev, b, elem, elems, gen, err);
    } else if (!host && gen && gen->count && gen->kind == KF_FILL_IOTA) {
        made = malloc(bytes);
        if (!made) st = kf_error_set(err, KF_ERR_NOMEM, "out of memory for %zu elements", elems);
        else kf_fill(made, elem, elems, gen);
        host = made;
    }
    if (st == KF_OK && host) st = kf_buffer_upload(b, host, bytes, err);
    free(made);
    if (st != KF_OK) {
        kf_buffer_destroy(b);
        return st;
    }
    *out = b;
    return KF_OK;
}

kf_status kf_cli_devargs_read(const kf_cli_devargs *a, uint32_t i, void **data, size_t *bytes, kf_error *err)
{
    *data = NULL;
    *bytes = kf_buffer_bytes(a->args[i].buf);
    *data = malloc(*bytes ? *bytes : 1);
    if (!*data) return kf_error_set(err, KF_ERR_NOMEM, "out of memory");
    if (!*bytes) return KF_OK;
    kf_status st = kf_buffer_download(a->args[i].buf, *data, *bytes, err);
    if (st != KF_OK) {
        free(*data);
        *data = NULL;
    }
    return st;
}

void kf_cli_devargs_free(kf_cli_devargs *a)
{
    for (uint32_t i = 0; a->args && i < a->n; i++)
        if (a->args[i].buf) kf_buffer_destroy(a->args[i].buf);
    free(a->args);
    memset(a, 0, sizeof *a);
}

/* ---- the arguments of commands that run a kernel (run, bench) -------------- */

bool kf_cli_binding_split(char *s, kf_cli_binding *b)
{
    char *eq = strchr(s, '=');
    if (!eq || eq == s || !eq[1]) return false;
    *eq = 0;
    b->name = s;
    b->spec = eq + 1;
    return true;
}

bool kf_cli_dims_parse(const char *s, uint32_t out[3])
{
    out[0] = out[1] = out[2] = 1;
    for (int d = 0; d < 3; d++) {
        size_t n = strcspn(s, ",");
        uint64_t v;
        if (!kf_value_parse_u64(s, n, &v) || !v || v > UINT32_MAX) return false;
        out[d] = (uint32_t)v;
        if (!s[n]) return true;
        s += n + 1;
    }
    return false;
}

static bool options_ended;   /* a "--" was read (one command per process) */

typedef struct {
    kf_cli_kernel_args *a;
    const char *cmd, *usage;
} kernel_opt_ctx;

static int kernel_value_opt(void *ctx, const char *opt, char *val)
{
    kernel_opt_ctx *c = ctx;
    kf_cli_kernel_args *a = c->a;
    kf_error err = {0};
    uint64_t v = 0;
    if (!strcmp(opt, "-k")) {
        a->kernel = val;
    } else if (!strcmp(opt, "-D")) {
        if (!kf_cli_define_add(&a->defs, val, &err)) return kf_cli_usage_error(c->cmd, c->usage, "%s", err.msg);
    } else if (!strcmp(opt, "--count")) {
        if (!kf_value_parse_u64(val, strlen(val), &v) || !v)
            return kf_cli_usage_error(c->cmd, c->usage, "bad --count '%s': expected a positive integer (%s)", val,
                                      KF_NUMBER_SYNTAX);
        a->count = v;
    } else if (!strcmp(opt, "--shared")) {
        if (!kf_value_parse_u64(val, strlen(val), &v) || v > UINT32_MAX)
            return kf_cli_usage_error(c->cmd, c->usage, "bad --shared '%s': expected bytes of dynamic shared memory, "
                                      "0 to 4294967295 (%s)", val, KF_NUMBER_SYNTAX);
        a->launch.dyn_shared = (uint32_t)v;
    } else if (!kf_cli_dims_parse(val, !strcmp(opt, "--grid") ? a->launch.grid : a->launch.block)) {
        return kf_cli_usage_error(c->cmd, c->usage, "bad %s '%s': expected X[,Y[,Z]] with positive integers (%s)", opt,
                                  val, KF_NUMBER_SYNTAX);
    }
    return KF_EXIT_OK;
}

int kf_cli_kernel_arg(int argc, char **argv, int *i, kf_cli_kernel_args *a, const char *cmd, const char *usage)
{
    static const char *const vopts[] = {"-k", "-D", "--count", "--grid", "--block", "--shared"};
    kernel_opt_ctx ctx = {a, cmd, usage};
    int matched = kf_cli_value_opts(argc, argv, i, vopts, sizeof vopts / sizeof vopts[0], cmd, kernel_value_opt, &ctx);
    if (matched) return matched;
    char *s = argv[*i];
    if (!options_ended && kf_cli_opt_level(s, &a->opt)) {
        ++*i;
        return 1;
    }
    if (kf_cli_is_option(s) || !strchr(s, '=')) return 0;
    kf_cli_binding b;
    if (!kf_cli_binding_split(s, &b)) {
        kf_cli_usage_error(cmd, usage, "bad argument '%s': expected NAME=VALUE", s);
        return -1;
    }
    if (!KF_VEC_PUSH(&a->binds, b)) {
        fprintf(stderr, "kforge %s: error: out of memory\n", cmd);
        return -1;
    }
    ++*i;
    return 1;
}

int kf_cli_kernel_args_check(const kf_cli_kernel_args *a, const kf_ir_kernel *k, const char *cmd, const char *usage)
{
    bool grid = a->launch.grid[0] != 0;
    if (a->count && (k->sched.ngrid || grid))
        return kf_cli_usage_error(cmd, usage, "--count %llu has no effect: kernel '%s' has a grid %s",
                                  (unsigned long long)a->count, k->name, grid ? "from --grid" : "in its @schedule");
    return KF_EXIT_OK;
}

void kf_cli_kernel_args_free(kf_cli_kernel_args *a)
{
    KF_VEC_FREE(&a->defs);
    KF_VEC_FREE(&a->binds);
}

/* ---- option scanning ----------------------------------------------------- */

bool kf_cli_end_of_options(char **argv, int *i)
{
    if (options_ended || strcmp(argv[*i], "--")) return false;
    options_ended = true;
    ++*i;
    return true;
}

bool kf_cli_is_option(const char *s) { return !options_ended && s[0] == '-' && s[1]; }

int kf_cli_opt(int argc, char **argv, int *i, const char *opt, char **val, const char *cmd)
{
    const char *a = argv[*i];
    if (options_ended) return 0;
    size_t n = strlen(opt);
    if (strncmp(a, opt, n) != 0) return 0;
    if (a[n] == 0) {
        if (*i + 1 >= argc) {
            fprintf(stderr, "kforge %s: error: option %s needs a value\n", cmd, opt);
            return -1;
        }
        *val = argv[++*i];
        ++*i;
        return 1;
    }
    bool short_opt = opt[1] != '-';
    if (a[n] == '=' && !short_opt) {
        *val = (char *)a + n + 1;
        ++*i;
        return 1;
    }
    if (short_opt) {
        *val = (char *)a + n;
        ++*i;
        return 1;
    }
    return 0;
}

int kf_cli_value_opts(int argc, char **argv, int *i, const char *const *opts, size_t nopts, const char *cmd,
                      kf_cli_value_fn fn, void *args)
{
    for (size_t v = 0; v < nopts; v++) {
        char *val;
        int matched = kf_cli_opt(argc, argv, i, opts[v], &val, cmd);
        if (matched < 0) return -1;
        if (matched > 0) return fn(args, opts[v], val) == KF_EXIT_OK ? 1 : -1;
    }
    return 0;
}

bool kf_cli_help(int argc, char **argv, const char *usage)
{
    for (int i = 0; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: %s\n", usage);
            return true;
        }
    return false;
}

int kf_cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kforge %s: error: ", cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nusage: %s\n", usage);
    return KF_EXIT_USAGE;
}

/* ---- standard input and output ------------------------------------------ */

const char *kf_cli_input_name(const char *path) { return strcmp(path, "-") ? path : "<stdin>"; }

static kf_status read_stdin(uint64_t max, char **data, size_t *len, kf_error *err)
{
    kf_buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0) {
        kf_buf_append(&b, chunk, n);
        if (b.len > max) {
            kf_buf_free(&b);
            return kf_error_set(err, KF_ERR_IO, "standard input holds more than %llu bytes", (unsigned long long)max);
        }
    }
    if (ferror(stdin) || b.oom) {
        kf_buf_free(&b);
        return kf_error_set(err, b.oom ? KF_ERR_NOMEM : KF_ERR_IO, "reading standard input failed");
    }
    *len = b.len;
    *data = kf_buf_take(&b);
    return *data ? KF_OK : kf_error_set(err, KF_ERR_NOMEM, "out of memory reading standard input");
}

kf_status kf_cli_read(const char *path, uint64_t max, char **data, size_t *len, kf_error *err)
{
    if (!strcmp(path, "-")) return read_stdin(max, data, len, err);
    return kf_read_file_max(path, max, data, len, err);
}

kf_status kf_cli_write(const char *path, const void *data, size_t len, kf_error *err)
{
    if (strcmp(path, "-")) return kf_write_file(path, data, len, err);
    if (len) fwrite(data, 1, len, stdout);
    return KF_OK;
}

/* ---- did you mean -------------------------------------------------------- */

/* Edits (insert, delete, replace, swap of neighbours) from a to b; stops
 * counting past limit. */
static size_t edit_distance(const char *a, const char *b, size_t limit)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 64 || m > 64) return limit + 1;
    size_t d[65][65];
    for (size_t i = 0; i <= n; i++) d[i][0] = i;
    for (size_t j = 0; j <= m; j++) d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

const char *kf_cli_suggest(const char *name, const char *const *cands, size_t n)
{
    size_t limit = strlen(name) / 3 ? strlen(name) / 3 : 1, best = limit + 1;
    const char *pick = NULL;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(name, cands[i], limit);
        /* (an edit that replaces a whole name, 'm' for 'a', suggests nothing) */
        size_t longer = strlen(name) > strlen(cands[i]) ? strlen(name) : strlen(cands[i]);
        if (d < best && d < longer) best = d, pick = cands[i];
    }
    return pick;
}
