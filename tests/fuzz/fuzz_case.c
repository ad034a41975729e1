/* libFuzzer target for the golden-case reader (tools/golden_case.c): any
 * byte string saved as a .case file and read by kf_case_load is either a
 * usage error naming the file, or a case with a kernel line and at least one
 * expect or error line whose `size` expressions evaluate (for argument
 * values taken from a small table of edge values: 0, 1, 3, 2^32, 2^64-1) to
 * a number or a clear error. Nothing may crash, leak or hit undefined
 * behaviour (the size evaluator's overflow checks included).
 *
 * Built by -DKF_FUZZ=ON (tests/fuzz/CMakeLists.txt); seeds (every case of
 * kernels/cases, and broken ones) in tests/fuzz/corpus/fuzz_case. */
#include <stdint.h>

#include "golden_case.h"
#include "fuzz_tmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Any name is a scalar argument; its value depends on its first letter. */
static bool lookup(void *ctx, const char *name, size_t len, uint64_t *value, kf_error *err)
{
    static const uint64_t table[5] = {0, 1, 3, UINT64_C(1) << 32, UINT64_MAX};
    if (len && name[0] == 'z') return kf_error_set(err, KF_ERR_USAGE, "no scalar argument '%.*s'", (int)len, name), false;
    *value = table[len ? (unsigned char)name[0] % 5 : 0];
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[300];
    if (!path[0]) {
        snprintf(path, sizeof path, "%s/cases", fuzz_tmpdir());
        mkdir(path, 0755);
        snprintf(path, sizeof path, "%s/cases/fuzz.case", fuzz_tmpdir());
    }
    if (!fuzz_write(path, data, size)) abort();
    kf_case c;
    kf_error err = {0};
    kf_status st = kf_case_load(path, &c, &err);
    if (st != KF_OK) {
        if (st != KF_ERR_USAGE || !strstr(err.msg, path)) abort();   /* errors name the file */
    } else {
        if (!c.kernel || !c.kf_file || (!c.expects.len && !c.error_text)) abort();
        for (size_t i = 0; i < c.sizes.len; i++) {
            uint64_t v;
            kf_error e = {0};
            if (kf_case_size_eval(c.sizes.data[i].expr, lookup, NULL, &v, &e) != KF_OK && !e.msg[0]) abort();
        }
        for (size_t i = 0; i < c.arg_names.len; i++)
            if (kf_case_arg(&c, c.arg_names.data[i]) == NULL) abort();
    }
    kf_case_free(&c);
    return 0;
}
