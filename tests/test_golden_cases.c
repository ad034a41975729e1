/* Every golden-output case in kernels/cases passes on every backend the
 * machine has (`kforge test`, the CPU interpreter always; CUDA-C and PTX
 * where a GPU is present): exit status 0, one PASS line per case on the
 * CPU (a raw kernel's case instead names itself not applicable there), and
 * a last line "N passed, 0 failed, N skipped". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static unsigned count_cases(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    unsigned n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        n += len > 5 && !strcmp(de->d_name + len - 5, ".case");
    }
    closedir(d);
    return n;
}

static void test_every_case_passes_on_every_available_backend(void **state)
{
    const char *exe = getenv("KFORGE");
    assert_non_null(exe);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' test '%s/kernels/cases' 2>&1", exe, KF_SOURCE_DIR);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[4096], last[4096] = "";
    unsigned cpu_pass = 0, cpu_not_applicable = 0, fails = 0;
    while (fgets(line, sizeof line, p)) {
        fputs(line, stdout);
        if (!strncmp(line, "PASS ", 5) && strstr(line, " [cpu] ")) cpu_pass++;
        if (!strncmp(line, "SKIP raw_", 9) && strstr(line, " [cpu] not applicable: raw ")) cpu_not_applicable++;
        if (!strncmp(line, "FAIL ", 5)) fails++;
        if (line[0] != '\n') snprintf(last, sizeof last, "%s", line);
    }
    int st = pclose(p);
    unsigned cases = count_cases(KF_SOURCE_DIR "/kernels/cases");
    assert_true(cases >= 30);
    assert_int_equal(fails, 0);
    assert_true(cpu_not_applicable >= 3);   /* the raw kernels of kernels/raw/ */
    assert_int_equal(cpu_pass + cpu_not_applicable, cases);
    unsigned passed = 0, failed = 1, skipped = 0;
    assert_int_equal(sscanf(last, "%u passed, %u failed, %u skipped", &passed, &failed, &skipped), 3);
    assert_true(skipped >= cpu_not_applicable);
    assert_int_equal(failed, 0);
    assert_true(passed >= cases - cpu_not_applicable);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_case_passes_on_every_available_backend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
