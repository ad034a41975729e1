/* kforge-difftest (tools/difftest/): the generator is deterministic and
 * free of undefined behaviour by construction (every program compiles and
 * runs on the interpreter without a reported fault; every float bitcast
 * is NaN-guarded, every integer divisor nonzero, every global store goes
 * to the thread's own slot, approximate values reach only the
 * approximate-output buffer); the comparison is exact with NaN matching
 * NaN and bounded where an approximate function wrote; the shrinker keeps
 * programs valid and never edits an ownership slot; and the whole run,
 * with the mock CUDA driver (whose launches compute nothing, so every
 * program that writes an output mismatches), shrinks a mismatch and saves
 * a golden case that replays on the interpreter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dt_impl.h"

extern char **environ;

enum { ALL_AVOID = (1u << KF_DT_NAVOID) - 1 };

static void same_program_for_same_seed_and_index(void **state)
{
    kf_dt_prog *a = kf_dt_generate(7, 3, 0), *b = kf_dt_generate(7, 3, 0), *c = kf_dt_generate(7, 4, 0);
    char *sa = kf_dt_source(a), *sb = kf_dt_source(b), *sc = kf_dt_source(c);
    char *da = kf_dt_defines(a), *db = kf_dt_defines(b);
    assert_string_equal(sa, sb);
    assert_string_equal(da, db);
    assert_string_not_equal(sa, sc);
    assert_non_null(strstr(sa, "kforge-difftest program 3 of seed 7"));
    free(sa), free(sb), free(sc), free(da), free(db);
    kf_dt_prog_free(a), kf_dt_prog_free(b), kf_dt_prog_free(c);
}

/* The generator reaches LANGUAGE.md section 8: the dynamic shared array
 * (sized by the schedule or the launch), shared views, fn shared arrays and
 * shared T[] parameters, packed half math, dot4, bfe, bfi, prmt, rcp and
 * fast_div; and the contended atomic slots 6 and 7 only ever see
 * atomic_exch and atomic_cas of the program's one constant (pair). */
static bool contended_exch_cas_ok(const kf_dt_prog *p, const char *src)
{
    const dt_param *ab = NULL;
    for (uint32_t i = 0; i < p->nparams; i++)
        if (p->params[i].role == DT_R_ATOMIC) ab = &p->params[i];
    if (!ab) return true;
    char at6[96], at7[96];
    snprintf(at6, sizeof at6, "(%s, 6, ", ab->name);
    snprintf(at7, sizeof at7, "(%s, 7, ", ab->name);
    for (const char *q = src; (q = strstr(q, ab->name)); q++) {
        if (q - src < 12) continue;
        bool six = !strncmp(q - 1, at6, strlen(at6)), seven = !strncmp(q - 1, at7, strlen(at7));
        if ((six && strncmp(q - 12, "atomic_exch", 11)) || (seven && strncmp(q - 11, "atomic_cas", 10))) return false;
    }
    return true;
}

static void generated_programs_reach_section_8(void **state)
{
    static const char *const want[] = {"[];", "shared = ", "as shared ", ": shared ", "dot4(", "bfe(", "bfi(",
                                       "prmt(", "rcp(", "fast_div(", "fma((", "atomic_cas("};
    unsigned seen[sizeof want / sizeof *want] = {0}, launch = 0;
    (void)state;
    for (uint64_t k = 0; k < 400; k++) {
        kf_dt_prog *p = kf_dt_generate(1, k, 0);
        char *src = kf_dt_source(p);
        for (size_t w = 0; w < sizeof want / sizeof *want; w++) seen[w] += strstr(src, want[w]) != NULL;
        launch += p->dyn_launch != 0;
        if (!contended_exch_cas_ok(p, src)) fail_msg("program %llu: a contended slot mixes operations", (unsigned long long)k);
        free(src);
        kf_dt_prog_free(p);
    }
    for (size_t w = 0; w < sizeof want / sizeof *want; w++)
        if (seen[w] < 3) fail_msg("'%s' in only %u of 400 programs", want[w], seen[w]);
    assert_true(launch >= 3);   /* the launch gives the dynamic array's size */
}

/* The select forms of max(min(x, 1.0), 0.0) that ptxas 13 made a saturate
 * (gen_expr.c saturate_form): the min as a select, and the min written
 * twice, in a few programs of 200. */
static void generated_programs_reach_the_saturate_forms(void **state)
{
    unsigned nested = 0, twice = 0;
    (void)state;
    for (uint64_t k = 0; k < 200; k++) {
        kf_dt_prog *p = kf_dt_generate(1, k, 0);
        char *src = kf_dt_source(p);
        nested += strstr(src, "select((select(") != NULL;
        twice += strstr(src, "select((min(") || strstr(src, "0.0 < min(") || strstr(src, "0.0 >= min(");
        free(src);
        kf_dt_prog_free(p);
    }
    if (nested < 3 || twice < 3) fail_msg("saturate forms in %u and %u of 200 programs", nested, twice);
}

/* The interpreter reports out-of-bounds accesses, unwritten locals and
 * shared elements, shared races, divergent barriers, incomplete warp
 * operations and division by zero: none may happen. */
static void generated_programs_run_on_the_interpreter_without_a_fault(void **state)
{
    for (unsigned avoid = 0; avoid <= ALL_AVOID; avoid += ALL_AVOID)
        for (uint64_t k = 0; k < 60; k++) {
            kf_dt_prog *p = kf_dt_generate(11, k, avoid);
            kf_error e = {0};
            if (kf_dt_check_cpu(p, &e) != KF_OK) fail_msg("program %llu of seed 11: %s", (unsigned long long)k, e.msg);
            kf_error_clear(&e);
            kf_dt_prog_free(p);
        }
}

/* ---- properties the interpreter cannot check, on the tree ---------------------------- */
typedef struct {
    unsigned bitcasts, divisions, stores, approx, exchanges, warp_ops, mma, ldmatrix, cp_async;
    unsigned fences, triggers, waits, prefetches;   /* kforge's statement extensions (S_BUILTIN) */
    unsigned min_blocks, min_blocks_zero;   /* schedules with min_blocks = N > 0, = 0 */
    bool in_approx_store;
} census;

static bool is_float_type(kf_type t) { return kf_scalar_class[t.scalar] == 'f'; }
static bool is_int_type(kf_type t) { return kf_scalar_class[t.scalar] == 'i' || kf_scalar_class[t.scalar] == 'u'; }

/* A divisor that cannot be zero: a nonzero literal, a guard, or a
 * constructor of such lanes. */
static bool nonzero(const dt_node *d)
{
    if (d->kind == DT_E_LIT) return strcmp(d->text, "0") != 0;
    if (d->kind == DT_E_GUARD) return d->op == DT_G_NZ_OR1 || d->op == DT_G_NZ_FN;
    if (d->kind != DT_E_CTOR) return false;
    for (const dt_node *a = d->a[0]; a; a = a->next)
        if (!nonzero(a)) return false;
    return true;
}

/* An f16/bf16/f32 mma operand that is a small integer (a conversion from 8
 * or 16 bits): every summation order gives the same f32. */
static bool exact_operand(const dt_node *e)
{
    return e->kind == DT_E_CAST && is_int_type(e->a[0]->type) && kf_scalar_bytes[e->a[0]->type.scalar] <= 2;
}

/* A bitcast operand that cannot be NaN: the guard, maybe inside the
 * select() that keeps a constant from folding. */
static bool nan_guarded(const dt_node *e)
{
    if (e->kind == DT_E_CALL && !strcmp(e->text, "select")) return nan_guarded(e->a[0]->next);
    return e->kind == DT_E_GUARD && e->op == DT_G_NAN;
}

static void walk(census *c, const kf_dt_prog *p, const dt_node *n);

static void walk_list(census *c, const kf_dt_prog *p, const dt_node *n)
{
    for (; n; n = n->next) walk(c, p, n);
}

static const dt_param *param_named(const kf_dt_prog *p, const char *name)
{
    for (uint32_t i = 0; i < p->nparams; i++)
        if (!strcmp(p->params[i].name, name)) return &p->params[i];
    return NULL;
}

static void walk(census *c, const kf_dt_prog *p, const dt_node *n)
{
    if (!n) return;
    switch ((dt_kind)n->kind) {
    case DT_E_BITCAST:
        c->bitcasts++;
        if (is_float_type(n->a[0]->type)) assert_true(nan_guarded(n->a[0]));
        break;
    case DT_E_BIN:
        if ((n->op == DT_OP_DIV || n->op == DT_OP_REM) && is_int_type(n->type)) {
            c->divisions++;
            assert_true(nonzero(n->a[1]));
        }
        break;
    case DT_E_GUARD:
        if (n->op == DT_G_APPROX) {
            c->approx++;
            assert_true(c->in_approx_store);   /* an approximate value goes nowhere else */
        }
        break;
    case DT_E_CALL:
        if (!strncmp(n->text, "warp_", 5) || !strncmp(n->text, "shfl", 4)) c->warp_ops++;
        if (!strncmp(n->text, "ldmatrix_", 9)) c->ldmatrix++;
        if (!strcmp(n->text, "cp_async")) c->cp_async++;
        if (!strcmp(n->text, "mma")) {
            c->mma++;
            if (n->type.scalar == KF_S_F32)
                for (const dt_node *a = n->a[0]; a; a = a->next) assert_true(exact_operand(a));
        }
        break;
    case DT_S_ASSIGN: {
        const dt_node *lv = n->a[0];
        const dt_param *buf = lv->kind == DT_E_INDEX ? param_named(p, lv->text) : NULL;
        if (buf && buf->role != DT_R_IN) {   /* a kernel's global store: its own slot */
            c->stores++;
            assert_int_equal(lv->a[0]->kind, DT_E_SLOT);
            assert_true(lv->a[0]->n >= 0 && (uint32_t)lv->a[0]->n < buf->slots);
        }
        bool was = c->in_approx_store;
        c->in_approx_store = buf && buf->role == DT_R_APPROX;
        walk(c, p, n->a[1]);
        c->in_approx_store = was;
        return;
    }
    case DT_S_EXCHANGE:
        c->exchanges++;
        break;
    case DT_S_BUILTIN:
        c->fences += !strcmp(n->text, "fence()");
        c->triggers += !strcmp(n->text, "dep_trigger()");
        c->prefetches += !strncmp(n->text, "prefetch_l2(", 12);
        assert_true(strcmp(n->text, "dep_wait()") != 0);   /* only at the kernel's top level (below) */
        break;
    default: break;
    }
    for (int i = 0; i < 3; i++) walk(c, p, n->a[i]);
    if (n->kind == DT_E_CALL || n->kind == DT_E_CTOR) walk_list(c, p, n->a[0] ? n->a[0]->next : NULL);
    walk_list(c, p, n->body);
    walk_list(c, p, n->els);
}

static void programs_are_safe_where_the_interpreter_cannot_see(void **state)
{
    census c = {0};
    for (uint64_t k = 0; k < 300; k++) {
        kf_dt_prog *p = kf_dt_generate(5, k, 0);
        for (const dt_node *n = p->body; n; n = n->next)   /* dep_wait: once, in the kernel's own list */
            if (n->kind == DT_S_BUILTIN && !strcmp(n->text, "dep_wait()")) c.waits++;
        for (const dt_node *n = p->body; n; n = n->next)
            if (n->kind != DT_S_BUILTIN || strcmp(n->text, "dep_wait()")) walk(&c, p, n);
        for (uint32_t i = 0; i < p->nfns; i++) walk_list(&c, p, p->fns[i].body);
        c.min_blocks += p->min_blocks > 0;
        c.min_blocks_zero += p->min_blocks_zero;
        kf_dt_prog_free(p);
    }
    /* and the features are there to be checked */
    assert_true(c.bitcasts > 300 && c.divisions > 300 && c.stores > 1000);
    assert_true(c.approx > 50 && c.exchanges > 30 && c.warp_ops > 100);
    print_message("tensor operations in 300 programs: %u mma, %u ldmatrix, %u cp_async\n", c.mma, c.ldmatrix, c.cp_async);
    assert_true(c.mma > 20 && c.ldmatrix > 5 && c.cp_async > 10);
    print_message("extensions in 300 programs: %u fence, %u dep_trigger, %u dep_wait, %u prefetch_l2\n", c.fences,
                  c.triggers, c.waits, c.prefetches);
    assert_true(c.fences > 50 && c.triggers > 30 && c.waits > 30 && c.waits < 120 && c.prefetches > 20);
    print_message("schedules in 300 programs: %u min_blocks = N, %u min_blocks = 0\n", c.min_blocks, c.min_blocks_zero);
    assert_true(c.min_blocks > 30 && c.min_blocks_zero > 15);
}

/* With first-exit-loop avoided, no loop body ends in an unconditional
 * exit; without, some do (issue 7 bug 2's trigger). */
static unsigned first_exits(const dt_node *n, bool in_loop_tail)
{
    unsigned count = 0;
    for (; n; n = n->next) {
        bool last = !n->next;
        if (in_loop_tail && last && (n->kind == DT_S_BREAK || n->kind == DT_S_RETURN)) count++;
        if (in_loop_tail && last && n->kind == DT_S_IF && n->a[0]->kind == DT_E_NAME && n->body &&
            (n->body->kind == DT_S_BREAK || n->body->kind == DT_S_RETURN))
            count++;
        bool loop = n->kind == DT_S_FOR || n->kind == DT_S_WHILE;
        count += first_exits(n->body, loop) + first_exits(n->els, false);
    }
    return count;
}

static void avoiding_first_exit_loops_removes_them(void **state)
{
    unsigned with = 0, without = 0;
    for (uint64_t k = 0; k < 200; k++) {
        kf_dt_prog *a = kf_dt_generate(3, k, 0), *b = kf_dt_generate(3, k, KF_DT_AVOID_FIRST_EXIT);
        with += first_exits(a->body, false);
        without += first_exits(b->body, false);
        kf_dt_prog_free(a);
        kf_dt_prog_free(b);
    }
    assert_true(with > 5);
    assert_int_equal(without, 0);
}

/* ---- comparing ---------------------------------------------------------------------------- */
static void compare_is_exact_nan_aware_and_bounded_where_approximate(void **state)
{
    kf_dt_prog p = {0};
    uint8_t tol[1] = {DT_TOL_F32};
    p.nparams = 2;
    p.params[0] = (dt_param){.name = "o", .type = {KF_TK_BUFFER, KF_S_F32, 1, KF_TF_MUT, 0}, .role = DT_R_OUT, .count = 2, .slots = 1};
    p.params[1] = (dt_param){.name = "a", .type = {KF_TK_BUFFER, KF_S_F32, 1, KF_TF_MUT, 0}, .role = DT_R_APPROX, .count = 2,
                             .slots = 1, .tol = tol};
    float want_o[2] = {1.0f, 0.0f}, want_a[2] = {100.0f, 0.5f}, got_o[2], got_a[2];
    dt_outputs a = {{want_o, want_a}, {8, 8}}, b = {{got_o, got_a}, {8, 8}};
    dt_diff d;
    uint32_t qnan = 0x7fc00000, other_nan = 0xffc00001;
#define SET(o0, o1, a0, a1) (got_o[0] = (o0), got_o[1] = (o1), got_a[0] = (a0), got_a[1] = (a1))
    SET(1.0f, 0.0f, 100.0f, 0.5f);
    assert_true(dt_compare(&p, &a, &b, false, &d));
    SET(1.0f, -0.0f, 100.0f, 0.5f);   /* exact means the bits: -0 is not +0 */
    assert_false(dt_compare(&p, &a, &b, false, &d));
    assert_non_null(strstr(d.text, "o[1] (thread 1, slot 0)"));
    SET(nextafterf(1.0f, 2.0f), 0.0f, 100.0f, 0.5f);
    assert_false(dt_compare(&p, &a, &b, false, &d));
    SET(1.0f, 0.0f, 100.0f * (1 + 7e-6f), 0.5f + 4e-6f);   /* within abs 8e-6 + rel 8e-6 */
    assert_true(dt_compare(&p, &a, &b, false, &d));
    SET(1.0f, 0.0f, 100.002f, 0.5f);
    assert_false(dt_compare(&p, &a, &b, false, &d));
    assert_non_null(strstr(d.text, "a[0]"));
    memcpy(&want_o[0], &qnan, 4);   /* NaN matches any NaN */
    SET(1.0f, 0.0f, 100.0f, 0.5f);
    memcpy(&got_o[0], &other_nan, 4);
    assert_true(dt_compare(&p, &a, &b, false, &d));
    got_o[0] = 1.0f;
    assert_false(dt_compare(&p, &a, &b, false, &d));
    SET(1.0f, 0.0f, 100.0f * (1 + 7e-6f), 0.5f);   /* cpu-O1 against cpu: approximate slots exact too */
    memcpy(&got_o[0], &other_nan, 4);
    assert_false(dt_compare(&p, &a, &b, true, &d));
    assert_non_null(strstr(d.text, "a[0]"));
    SET(1.0f, 0.0f, 100.0f, 0.5f);
    memcpy(&got_o[0], &other_nan, 4);
    assert_true(dt_compare(&p, &a, &b, true, &d));   /* NaN still matches NaN */
#undef SET
}

/* ---- shrinking ------------------------------------------------------------------------------ */
static bool has_fixed_or_slot(const dt_node *n, uint32_t id)
{
    for (; n; n = n->next) {
        if (n->id == id) return (n->flags & DT_F_FIXED) || n->kind == DT_E_SLOT;
        for (int i = 0; i < 3; i++)
            if (n->a[i] && has_fixed_or_slot(n->a[i], id)) return true;
        if (has_fixed_or_slot(n->body, id) || has_fixed_or_slot(n->els, id)) return true;
    }
    return false;
}

static void shrinking_edits_never_touch_ownership_slots(void **state)
{
    dt_edit edits[4096];
    for (uint64_t k = 0; k < 20; k++) {
        kf_dt_prog *p = kf_dt_generate(9, k, 0);
        size_t n = dt_edits(p, edits, 4096);
        assert_true(n > 20);
        for (size_t i = 0; i < n; i++)
            if (edits[i].id) assert_false(has_fixed_or_slot(p->body, edits[i].id));
        kf_dt_prog_free(p);
    }
}

/* Program k of seed 13 with the accepted edits and then `cand` applied
 * (node ids are the same in every generation of a program). */
static kf_dt_prog *edited(uint64_t k, const dt_edit *acc, size_t nacc, const dt_edit *cand)
{
    kf_dt_prog *p = kf_dt_generate(13, k, 0);
    for (size_t i = 0; i < nacc; i++) dt_apply(p, &acc[i]);
    if (cand) dt_apply(p, cand);
    return p;
}

/* Greedy shrinking with the interpreter as the validity check (as
 * reduce.c does) and "still has a barrier" as the failure: it ends small,
 * valid, with its barrier. */
static void shrinking_keeps_programs_valid_and_reaches_a_small_one(void **state)
{
    dt_edit edits[4096], acc[512];
    size_t nacc = 0;
    uint64_t k = 0;
    char *src = NULL;
    for (;; k++) {   /* the first program with a barrier */
        kf_dt_prog *p = kf_dt_generate(13, k, 0);
        src = kf_dt_source(p);
        kf_dt_prog_free(p);
        if (strstr(src, "barrier();")) break;
        free(src);
    }
    free(src);
    kf_dt_prog *p = edited(k, acc, 0, NULL);
    uint32_t before = dt_size(p);
    for (bool progress = true; progress && nacc < 512;) {
        progress = false;
        size_t n = dt_edits(p, edits, 4096);
        for (size_t i = 0; i < n && !progress; i++) {
            kf_dt_prog *q = edited(k, acc, nacc, &edits[i]);
            char *text = kf_dt_source(q);
            kf_error e = {0};
            if (strstr(text, "barrier();") && kf_dt_check_cpu(q, &e) == KF_OK) {
                acc[nacc++] = edits[i];
                kf_dt_prog_free(p);
                p = q;
                q = NULL;
                progress = true;
            }
            kf_error_clear(&e);
            free(text);
            kf_dt_prog_free(q);
        }
    }
    assert_true(dt_size(p) < before / 4);
    assert_true(dt_size(p) < 40);
    kf_error e = {0};
    assert_int_equal(kf_dt_check_cpu(p, &e), KF_OK);
    src = kf_dt_source(p);
    assert_non_null(strstr(src, "barrier();"));
    free(src);
    kf_dt_prog_free(p);
}

/* ---- the whole run, with the mock driver ------------------------------------------------------ */
static int spawn(char *const argv[], const char *out)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int st = -1;
    if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) == 0) waitpid(pid, &st, 0);
    posix_spawn_file_actions_destroy(&fa);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void mock_run_shrinks_and_saves_a_mismatch_that_replays(void **state)
{
    char dir[] = "/tmp/kf-difftest-XXXXXX", save[256], log[256], found[512] = "";
    assert_non_null(mkdtemp(dir));
    snprintf(save, sizeof save, "%s/save", dir);
    snprintf(log, sizeof log, "%s/log", dir);
    setenv("KF_LIBCUDA", KF_BINARY_DIR "/tests/libkf_mockcuda.so", 1);
    char *argv[] = {KF_BINARY_DIR "/kforge-difftest", "--seed", "1", "--count", "2", "--backends", "cpu,ptx", "-j", "2",
                    "--save", save, "--max-saves", "1", "--shrink-time", "60", NULL};
    assert_int_equal(spawn(argv, log), 1);   /* the mock computes nothing: mismatches */
    DIR *d = opendir(save);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, "-ptx-mismatch")) snprintf(found, sizeof found, "%s/%s", save, e->d_name);
    closedir(d);
    assert_true(found[0]);
    char path[700], *text;
    size_t len;
    snprintf(path, sizeof path, "%s/prog.kf", found);
    assert_int_equal(kf_read_file(path, &text, &len, NULL), KF_OK);
    unsigned lines = 0;
    for (char *c = text; *c; c++) lines += *c == '\n';
    assert_true(lines < 40);   /* shrunk from hundreds of lines */
    free(text);
    snprintf(path, sizeof path, "%s/README.txt", found);
    assert_int_equal(kf_read_file(path, &text, &len, NULL), KF_OK);
    assert_non_null(strstr(text, "back end ptx: mismatch"));
    free(text);
    snprintf(path, sizeof path, "%s/case.case", found);
    char *test[] = {getenv("KFORGE"), "test", "--backend", "cpu", path, NULL};
    assert_non_null(test[0]);
    assert_int_equal(spawn(test, log), 0);   /* the saved golden case replays on the interpreter */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* Every 4th batch of 100 programs builds the GPU paths at -O0; --gpu-O0 0
 * never does, 1 always. */
static void gpu_paths_build_at_O0_in_every_nth_batch(void **state)
{
    (void)state;
    kf_dt_options o = {.first = 1000, .batch = 100, .gpu_o0_every = 4};
    assert_int_equal(kf_dt_gpu_level(&o, 1000), KF_OPT_DEFAULT);
    assert_int_equal(kf_dt_gpu_level(&o, 1299), KF_OPT_DEFAULT);
    assert_int_equal(kf_dt_gpu_level(&o, 1300), KF_OPT_O0);
    assert_int_equal(kf_dt_gpu_level(&o, 1399), KF_OPT_O0);
    assert_int_equal(kf_dt_gpu_level(&o, 1400), KF_OPT_DEFAULT);
    assert_int_equal(kf_dt_gpu_level(&o, 1799), KF_OPT_O0);
    o.gpu_o0_every = 1;
    assert_int_equal(kf_dt_gpu_level(&o, 1000), KF_OPT_O0);
    o.gpu_o0_every = 0;
    assert_int_equal(kf_dt_gpu_level(&o, 1300), KF_OPT_DEFAULT);
}

static void summary_line_counts_every_backend(void **state)
{
    kf_dt_options o = {.seed = 4, .first = 10, .count = 5, .backends = 1u << KF_DT_CPU | 1u << KF_DT_PTX};
    kf_dt_summary s = {.programs = 5, .seconds = 2.0};
    s.n[KF_DT_CPU][KF_DT_OK] = 5;
    s.n[KF_DT_PTX][KF_DT_OK] = 3;
    s.n[KF_DT_PTX][KF_DT_MISMATCH] = 1;
    s.n[KF_DT_PTX][KF_DT_COMPILE] = 1;
    char line[1024];
    kf_dt_summary_line(&s, &o, line, sizeof line);
    assert_non_null(strstr(line, "seed 4, programs 10..14: 5 in 2.0 s (2.5 programs/s)"));
    assert_non_null(strstr(line, "cpu: 5 run, 0 mismatches"));
    assert_non_null(strstr(line, "ptx: 5 run, 1 mismatches, 1 compile failures, 0 faults, 0 hangs"));
    assert_null(strstr(line, "cuda"));
    assert_int_equal(kf_dt_failures(&s), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_program_for_same_seed_and_index),
        cmocka_unit_test(generated_programs_run_on_the_interpreter_without_a_fault),
        cmocka_unit_test(programs_are_safe_where_the_interpreter_cannot_see),
        cmocka_unit_test(generated_programs_reach_section_8),
        cmocka_unit_test(generated_programs_reach_the_saturate_forms),
        cmocka_unit_test(avoiding_first_exit_loops_removes_them),
        cmocka_unit_test(compare_is_exact_nan_aware_and_bounded_where_approximate),
        cmocka_unit_test(shrinking_edits_never_touch_ownership_slots),
        cmocka_unit_test(shrinking_keeps_programs_valid_and_reaches_a_small_one),
        cmocka_unit_test(mock_run_shrinks_and_saves_a_mismatch_that_replays),
        cmocka_unit_test(gpu_paths_build_at_O0_in_every_nth_batch),
        cmocka_unit_test(summary_line_counts_every_backend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
