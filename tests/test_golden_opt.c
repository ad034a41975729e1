/* The IR optimiser against the IR as lowered, on every golden-output case
 * (`kforge test --backend cpu --same-as-O0`): each case's kernel runs on
 * the CPU interpreter compiled at -O0 and at the default level, and every
 * buffer afterwards (or the reported error, message and place included)
 * must be the same bit for bit. The GPU paths read the optimised IR too,
 * so this is what catches an optimiser bug they would all share. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* The cases of a .kf kernel (a raw kernel's case, raw_*, has no IR). */
static unsigned count_kf_cases(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    unsigned n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        n += len > 5 && !strcmp(de->d_name + len - 5, ".case") && strncmp(de->d_name, "raw_", 4);
    }
    closedir(d);
    return n;
}

static void every_case_gives_the_same_bits_at_O0_and_optimised(void **state)
{
    const char *exe = getenv("KFORGE");
    assert_non_null(exe);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' test --backend cpu --same-as-O0 '%s/kernels/cases' 2>&1", exe, KF_SOURCE_DIR);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[4096];
    unsigned same = 0, fails = 0, errors = 0;
    while (fgets(line, sizeof line, p)) {
        if (!strncmp(line, "SAME ", 5) && strstr(line, " [cpu -O0]")) same++;
        if (!strncmp(line, "FAIL ", 5)) fails++, fputs(line, stdout);
        if (!strncmp(line, "PASS ", 5) && strstr(line, "expected error")) errors++;
    }
    int st = pclose(p);
    unsigned cases = count_kf_cases(KF_SOURCE_DIR "/kernels/cases");
    assert_true(cases >= 30);
    assert_int_equal(fails, 0);
    assert_int_equal(same, cases);   /* every case of a .kf kernel runs on the CPU */
    assert_true(errors >= 5);        /* the interpreter's reports are among them */
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_case_gives_the_same_bits_at_O0_and_optimised),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
