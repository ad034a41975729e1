/* kforge emit: print the lowered core IR (--target ir), the PTX (--target
 * ptx, the default) or the CUDA-C (--target cuda) of a file's kernels, or of
 * the one chosen with -k, or write the cubin (--target cubin: the PTX linked
 * for --arch by nvJitLink, no GPU needed; `cuobjdump -sass` reads it). -g
 * adds line info (.loc / #line back to the .kf source). --verify assembles
 * the PTX with ptxas for --arch and reports its errors at .kf lines;
 * --stats also prints registers, shared memory and spills per kernel to
 * stderr. -O0 emits the IR as lowered (no optimiser). --pdl-trigger adds
 * griddepcontrol.launch_dependents after the sm_90 kernels' opening wait. A raw FILE.cu (NVRTC)
 * or FILE.ptx gives its PTX or cubin. Output goes to stdout (a cubin only
 * when it is not a terminal) or -o OUT ("-": stdout). */
#include <string.h>
#include <unistd.h>

#include "../emit/emit.h"
#include "../emit/ptx_hazards.h"
#include "../emit/ptxas.h"
#include "../runtime/nvjitlink.h"
#include "../runtime/nvrtc.h"
#include "cmd_common.h"

static const char usage[] =
    "kforge emit [--target ptx|cuda|ir|cubin] [--arch sm_90] [-D NAME=VALUE]... [-O0|-O1] [-g] [-k KERNEL] [-o OUT]\n"
    "            [--verify] [--stats] [--pdl-trigger] FILE          (FILE: .kf, or a raw .cu or .ptx for --target ptx|cubin)";

typedef enum { TARGET_PTX, TARGET_CUDA, TARGET_IR, TARGET_CUBIN } emit_target;

typedef struct {
    emit_target target;
    uint32_t arch;
    bool lineinfo, verify, stats, pdl_trigger;
    kf_opt_level opt;
    const char *kernel, *out, *file;
    kf_cli_defines defs;
} emit_args;

static bool parse_arch(const char *s, uint32_t *arch)
{
    if (!strncmp(s, "sm_", 3)) s += 3;
    static const char *const ok[] = {"80", "86", "89", "90"};
    for (size_t i = 0; i < 4; i++)
        if (!strcmp(s, ok[i])) {
            *arch = (uint32_t)atoi(ok[i]);
            return true;
        }
    return false;
}

static int parse_value_opt(void *args, const char *opt, char *val)
{
    emit_args *a = args;
    kf_error err = {0};
    if (!strcmp(opt, "--target")) {
        if (!strcmp(val, "ptx")) a->target = TARGET_PTX;
        else if (!strcmp(val, "cuda")) a->target = TARGET_CUDA;
        else if (!strcmp(val, "ir")) a->target = TARGET_IR;
        else if (!strcmp(val, "cubin")) a->target = TARGET_CUBIN;
        else return kf_cli_usage_error("emit", usage, "unknown target '%s': expected ptx, cuda, ir or cubin", val);
    } else if (!strcmp(opt, "--arch")) {
        if (!parse_arch(val, &a->arch))
            return kf_cli_usage_error("emit", usage, "unknown arch '%s': expected sm_80, sm_86, sm_89 or sm_90", val);
    } else if (!strcmp(opt, "-D")) {
        if (!kf_cli_define_add(&a->defs, val, &err)) return kf_cli_usage_error("emit", usage, "%s", err.msg);
    } else if (!strcmp(opt, "-k")) {
        a->kernel = val;
    } else {
        a->out = val;
    }
    return KF_EXIT_OK;
}

static int parse_args(int argc, char **argv, emit_args *a)
{
    static const char *const vopts[] = {"--target", "--arch", "-D", "-k", "-o"};
    for (int i = 0; i < argc;) {
        if (kf_cli_end_of_options(argv, &i)) continue;
        int matched = kf_cli_value_opts(argc, argv, &i, vopts, sizeof vopts / sizeof vopts[0], "emit", parse_value_opt, a);
        if (matched < 0) return KF_EXIT_USAGE;
        if (matched) continue;
        const char *s = argv[i++];
        if (!kf_cli_is_option(s) && a->file) return kf_cli_usage_error("emit", usage, "expected one FILE, got '%s' and '%s'", a->file, s);
        else if (!kf_cli_is_option(s)) a->file = s;
        else if (!strcmp(s, "-g") || !strcmp(s, "--lineinfo")) a->lineinfo = true;
        else if (!strcmp(s, "--verify")) a->verify = true;
        else if (!strcmp(s, "--pdl-trigger")) a->pdl_trigger = true;
        else if (kf_cli_opt_level(s, &a->opt)) continue;
        else if (!strcmp(s, "--stats")) a->stats = a->verify = true;
        else return kf_cli_usage_error("emit", usage, "unknown option '%s'", s);
    }
    if (!a->file) return kf_cli_usage_error("emit", usage, "expected a .kf FILE");
    if (a->verify && a->target != TARGET_PTX)
        return kf_cli_usage_error("emit", usage, "--verify and --stats need --target ptx");
    kf_src_kind raw;
    if (kf_cli_raw_kind(a->file, &raw) && a->target != TARGET_PTX && a->target != TARGET_CUBIN)
        return kf_cli_usage_error("emit", usage, "%s is raw %s: it has PTX and a cubin (--target ptx|cubin), not %s",
                                  a->file, raw == KF_SRC_CUDA ? "CUDA-C" : "PTX", a->target == TARGET_IR ? "kforge IR" : "CUDA-C");
    if (kf_cli_raw_kind(a->file, &raw) && (a->kernel || a->defs.len || a->verify || a->lineinfo))
        return kf_cli_usage_error("emit", usage, "-k, -D, -g, --verify and --stats apply to .kf files; %s is emitted whole",
                                  a->file);
    return KF_EXIT_OK;
}

static void print_stats(const kf_ptxas_result *r, uint32_t arch)
{
    for (size_t i = 0; i < r->kernels.len; i++) {
        const kf_ptxas_kernel_stats *s = &r->kernels.data[i];
        fprintf(stderr, "%s (sm_%u): %u registers, %u bytes shared, %u bytes stack, spills %u stores / %u loads\n",
                s->kernel, arch, s->registers, s->shared_bytes, s->stack_bytes, s->spill_stores, s->spill_loads);
    }
}

/* Runs ptxas over the emitted PTX; returns an exit status. */
static int verify(const emit_args *a, const kf_module *m, const kf_buf *ptx, const kf_linemap *lm)
{
    kf_ptxas_result res = {0};
    kf_diags diags = {0};
    kf_error err = {0};
    kf_status st = kf_ptxas_run(ptx->data, a->arch, lm, m->file, &res, &diags, &err);
    int rc = kf_cli_exit_for(st);
    if (st == KF_ERR_SOURCE) {
        kf_cli_print_diags(&diags, m);
    } else if (st != KF_OK) {
        kf_cli_print_error("emit", m, &err);
        rc = KF_EXIT_RUNTIME;
    } else {
        if (a->stats) print_stats(&res, a->arch);
        else fprintf(stderr, "ptxas sm_%u: ok\n", a->arch);
        if (res.nwarnings && res.log) fputs(res.log, stderr);
    }
    kf_diags_free(&diags);
    kf_error_clear(&err);
    kf_ptxas_result_free(&res);
    return rc;
}

/* A module without kernels has nothing to emit, whatever the target. */
static int no_kernel(const kf_module *m)
{
    kf_diags d = {0};
    kf_diag_error(&d, ((kf_loc){m->file, 1, 1}), "no kernel to emit: the module declares no `kernel`");
    kf_cli_print_diags(&d, m);
    kf_diags_free(&d);
    return KF_EXIT_FAIL;
}

static int generate(const emit_args *a, const kf_module *m, const kf_ir_kernel *k, kf_buf *out)
{
    if (m->nkernels == 0) return no_kernel(m);
    if (a->target == TARGET_IR) {
        for (uint32_t i = 0; i < m->nkernels; i++) {
            if (k && k != &m->kernels[i]) continue;
            if (out->len) kf_buf_puts(out, "\n");
            kf_ir_print(out, &m->kernels[i]);
        }
        return KF_EXIT_OK;
    }
    kf_emit_opts o = {a->arch, a->lineinfo, a->pdl_trigger};
    /* a cubin is the PTX, linked (link_cubin) */
    kf_linemap lm = {0};
    kf_diags diags = {0};
    kf_status st = a->target != TARGET_CUDA ? kf_ptx_emit(m, k, &o, out, &lm, &diags)
                                            : kf_cuda_emit(m, k, &o, out, &lm, &diags);
    int rc = kf_cli_exit_for(st);
    kf_cli_print_diags(&diags, m);
    if (st != KF_OK && !diags.items.len) fprintf(stderr, "kforge emit: error: emission failed\n");
    if (st == KF_OK && a->verify) rc = verify(a, m, out, &lm);
    kf_diags_free(&diags);
    kf_linemap_free(&lm);
    return rc;
}

/* PTX text (NUL-terminated in ptx) replaced by its cubin for arch. */
static int link_cubin(kf_buf *ptx, uint32_t arch, const char *raw_file)
{
    void *cubin;
    size_t len;
    kf_error err = {0};
    kf_status st = kf_nvjitlink_ptx(ptx->data ? ptx->data : "", arch, false, &cubin, &len, &err);
    if (st != KF_OK) {
        /* a raw file's PTX that does not assemble is the file's error (exit 1), named */
        bool bad_ptx = raw_file && st == KF_ERR_SOURCE;
        if (bad_ptx) fprintf(stderr, "%s: error: its PTX does not assemble for sm_%u (ptxas's lines below)\n",
                             kf_cli_input_name(raw_file), arch);
        kf_cli_print_error("emit", NULL, &err);
        kf_error_clear(&err);
        return bad_ptx ? KF_EXIT_FAIL : KF_EXIT_RUNTIME;
    }
    kf_buf_reset(ptx);
    kf_buf_append(ptx, cubin, len);
    free(cubin);
    return KF_EXIT_OK;
}

/* A raw file's PTX: the file itself, or NVRTC's for a .cu. */
static int raw_ptx(const emit_args *a, kf_src_kind kind, kf_buf *out)
{
    char *src, *ptx = NULL;
    size_t len;
    kf_error err = {0};
    kf_status st = kf_cli_read(a->file, KF_SOURCE_MAX, &src, &len, &err);
    if (st == KF_OK && kind == KF_SRC_CUDA)
        st = kf_nvrtc_compile(src, kf_cli_input_name(a->file), a->arch, false, &ptx, NULL, &err);
    bool entry = st == KF_OK && strstr(ptx ? ptx : src, ".entry");
    if (entry) kf_buf_puts(out, ptx ? ptx : src);
    char why[320];
    if (entry && ptx && ptx_merged_lanes(ptx, why, sizeof why))   /* shown, as asked, with the reason */
        fprintf(stderr, "kforge emit: warning: %s: NVRTC miscompiled it: its PTX %s; its results may be wrong\n",
                kf_cli_input_name(a->file), why);
    if (st != KF_OK) kf_cli_print_error("emit", NULL, &err);
    else if (!entry)   /* as a .kf with no kernel (no_kernel), on every target */
        fprintf(stderr, "%s:1:1: error: no kernel to emit: the %s declares no %s\n", kf_cli_input_name(a->file),
                kind == KF_SRC_CUDA ? "CUDA-C" : "PTX", kind == KF_SRC_CUDA ? "__global__ function" : ".entry");
    free(src);
    free(ptx);
    kf_error_clear(&err);
    if (st == KF_OK) return entry ? KF_EXIT_OK : KF_EXIT_FAIL;
    return kf_cli_exit_for(st == KF_ERR_IO ? KF_ERR_USAGE : st);
}

/* To -o OUT as one step (no partial file on failure), or to stdout ("-",
 * or no -o; its write errors kforge's main reports). A cubin is not
 * written to a terminal. */
static int write_out(const emit_args *a, const kf_buf *b)
{
    kf_error err = {0};
    const char *path = a->out ? a->out : "-";
    if (a->target == TARGET_CUBIN && !strcmp(path, "-") && isatty(STDOUT_FILENO)) {
        fprintf(stderr, "kforge emit: error: a cubin is binary: give -o FILE (or -o - into a pipe)\n");
        return KF_EXIT_USAGE;
    }
    if (kf_cli_write(path, b->data ? b->data : "", b->len, &err) == KF_OK) return KF_EXIT_OK;
    fprintf(stderr, "kforge emit: error: %s\n", err.msg);
    return KF_EXIT_RUNTIME;
}

int kf_cmd_emit(int argc, char **argv)
{
    emit_args a = {.target = TARGET_PTX, .arch = 90};
    if (kf_cli_help(argc, argv, usage)) return KF_EXIT_OK;
    int rc = parse_args(argc, argv, &a);
    kf_module *m = NULL;
    kf_src_kind raw;
    bool is_raw = rc == KF_EXIT_OK && kf_cli_raw_kind(a.file, &raw);
    kf_buf out = {0};
    if (is_raw) rc = raw_ptx(&a, raw, &out);
    else if (rc == KF_EXIT_OK) rc = kf_cli_compile("emit", a.file, &a.defs, a.opt, &m);
    const kf_ir_kernel *k = NULL;
    if (rc == KF_EXIT_OK && m && a.kernel && !(k = kf_cli_pick_kernel(m, a.kernel, "emit"))) rc = KF_EXIT_USAGE;
    if (rc == KF_EXIT_OK && m) rc = generate(&a, m, k, &out);
    if (rc == KF_EXIT_OK && a.target == TARGET_CUBIN && !out.oom) rc = link_cubin(&out, a.arch, is_raw ? a.file : NULL);
    if (rc == KF_EXIT_OK && out.oom) {
        fprintf(stderr, "kforge emit: error: out of memory\n");
        rc = KF_EXIT_RUNTIME;
    }
    if (rc == KF_EXIT_OK) rc = write_out(&a, &out);
    kf_buf_free(&out);
    kf_module_free(m);
    KF_VEC_FREE(&a.defs);
    return rc;
}
