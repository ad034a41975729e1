/* kforge check FILE...: parse and check each file, print its diagnostics
 * (file:line:col: error: message, the source line and a caret) to stderr,
 * and on success one "FILE: ok" line naming its kernels to stdout.
 * Exit 1 when any file has an error, 2 when a file cannot be read. */
#include <string.h>

#include "cmd_common.h"

static const char usage[] = "kforge check [-D NAME=VALUE]... FILE...";

static int check_one(const char *path, const kf_cli_defines *defs)
{
    kf_module *m;
    int rc = kf_cli_compile("check", path, defs, KF_OPT_O0, &m)   /* diagnostics only: nothing to optimise */;
    if (rc != KF_EXIT_OK) return rc;
    printf("%s: ok (%u kernel%s:", kf_cli_input_name(path), m->nkernels, m->nkernels == 1 ? "" : "s");
    for (uint32_t i = 0; i < m->nkernels; i++) printf(" %s", m->kernels[i].name);
    puts(")");
    kf_module_free(m);
    return KF_EXIT_OK;
}

int kf_cmd_check(int argc, char **argv)
{
    kf_cli_defines defs = {0};
    KF_VEC(char *) files = {0};
    if (kf_cli_help(argc, argv, usage)) return KF_EXIT_OK;
    int rc = KF_EXIT_OK;
    for (int i = 0; i < argc && rc == KF_EXIT_OK;) {
        if (kf_cli_end_of_options(argv, &i)) continue;
        char *val;
        kf_error err = {0};
        int o = kf_cli_opt(argc, argv, &i, "-D", &val, "check");
        if (o < 0) rc = KF_EXIT_USAGE;
        else if (o > 0 && !kf_cli_define_add(&defs, val, &err)) rc = kf_cli_usage_error("check", usage, "%s", err.msg);
        else if (o > 0) continue;
        else if (kf_cli_is_option(argv[i])) rc = kf_cli_usage_error("check", usage, "unknown option '%s'", argv[i]);
        else if (!KF_VEC_PUSH(&files, argv[i++])) rc = KF_EXIT_RUNTIME;
    }
    if (rc == KF_EXIT_OK && files.len == 0) rc = kf_cli_usage_error("check", usage, "expected at least one .kf FILE");
    int worst = KF_EXIT_OK;
    for (size_t f = 0; rc == KF_EXIT_OK && f < files.len; f++) {
        int r = check_one(files.data[f], &defs);
        if (r == KF_EXIT_USAGE || (r != KF_EXIT_OK && worst == KF_EXIT_OK)) worst = r;
    }
    if (rc == KF_EXIT_OK) rc = worst;
    KF_VEC_FREE(&defs);
    KF_VEC_FREE(&files);
    return rc;
}
