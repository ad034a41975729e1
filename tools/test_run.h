/* Running one golden-output case (tools/test_run.c) for `kforge test`
 * (tools/cmd_test.c): the options every case shares, and a worker that
 * holds its own devices and writes each case's lines to its own stream. */
#ifndef KF_TEST_RUN_H
#define KF_TEST_RUN_H

#include "cmd_common.h"

typedef struct {
    unsigned only;          /* --backend mask (bit per kf_backend); 0 = all */
    kf_opt_level opt;       /* -O0 / -O1 */
    bool same_as_O0;        /* --same-as-O0 */
    bool available[3];      /* the backends that opened */
} kf_test_opts;

/* What the cases of a run counted. */
typedef struct {
    unsigned passed, failed;
    unsigned skipped;       /* runs not made: the backend is unavailable, or not applicable (raw kernels) */
    bool bad_input;         /* a case or .npy file was unusable: exit 2 */
} kf_test_counts;

typedef struct {
    const kf_test_opts *o;
    kf_device *dev[3];      /* this worker's devices, opened on first use */
    FILE *out;              /* where the case's PASS / FAIL / SKIP lines go */
    kf_test_counts *n;      /* where the case counts */
} kf_test_worker;

/* Runs the case at path on every backend it asks for that o allows: one
 * line per backend (PASS, FAIL, SKIP ... not applicable), counted in *w->n. */
void kf_test_case_run(kf_test_worker *w, const char *path);
/* Closes the worker's devices. */
void kf_test_worker_close(kf_test_worker *w);

#endif
