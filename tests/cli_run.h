/* Running the kforge program (path in $KFORGE) from a CLI test: its exit
 * status and what it wrote to stdout and stderr, optionally with stdout
 * sent elsewhere (/dev/full) or with a file size limit that makes every
 * write past it fail (RLIMIT_FSIZE, SIGXFSZ ignored: a write then fails
 * with EFBIG, which is how a full disk looks to kforge). A run that hangs
 * is killed after two minutes (status -1). Each test program
 * works in its own temporary directory, made by cli_setup. */
#ifndef KF_TEST_CLI_RUN_H
#define KF_TEST_CLI_RUN_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../ir/base.h"

static char tmpdir[] = "/tmp/kf_cli_XXXXXX";

typedef struct {
    int status;      /* exit status, or -1 if it did not exit normally */
    char *out, *err;
} result;

/* How to run it: stdout to `out` instead of a file read back (NULL: read
 * back), at most `fsize` bytes per written file (0: no limit), and stdin
 * from the file `in` (NULL: /dev/null). */
typedef struct {
    const char *out;
    rlim_t fsize;
    const char *in;
} run_opts;

static char *slurp(const char *path)
{
    char *d;
    size_t n;
    kf_error e = {0};
    if (kf_read_file(path, &d, &n, &e) != KF_OK) return strdup("");
    return d;
}

static void redirect(int fd, const char *path)
{
    int f = fd == 0 ? open(path, O_RDONLY) : open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (f < 0 || dup2(f, fd) < 0) _exit(126);
    close(f);
}

static result kforge_argv(const run_opts *o, const char **argv)
{
    char op[256], ep[256];
    snprintf(op, sizeof op, "%s/stdout", tmpdir);
    snprintf(ep, sizeof ep, "%s/stderr", tmpdir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        redirect(0, o->in ? o->in : "/dev/null");
        redirect(1, o->out ? o->out : op);
        redirect(2, ep);
        if (o->fsize) {
            struct rlimit rl = {o->fsize, o->fsize};
            signal(SIGXFSZ, SIG_IGN);
            if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(126);
        }
        alarm(120);   /* survives exec: a kforge that hangs dies instead of the test */
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    result r = {WIFEXITED(st) ? WEXITSTATUS(st) : -1, o->out ? strdup("") : slurp(op), slurp(ep)};
    return r;
}

/* Runs kforge with the NULL-terminated argument list, as o says. */
static result kforge_with(const run_opts *o, const char *first, ...)
{
    const char *argv[64];
    int n = 0;
    const char *exe = getenv("KFORGE");
    assert_non_null(exe);
    argv[n++] = exe;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && n < 63; a = va_arg(ap, const char *)) argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    return kforge_argv(o, argv);
}

#define kforge(...) kforge_with(&(run_opts){0}, __VA_ARGS__)

static void done(result *r)
{
    free(r->out);
    free(r->err);
}

/* tmpdir/name (eight results stay valid at a time). */
static const char *tmp(const char *name)
{
    static char buf[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int cli_setup(void **state) { return mkdtemp(tmpdir) ? 0 : -1; }

static int cli_teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

#endif
