/* Running ptxas over emitted PTX (kforge emit --verify / --stats and the
 * ptxas tests). ptxas is found on PATH, then under $CUDA_HOME/bin, then
 * /usr/local/cuda/bin. The PTX goes to a fresh private temp directory, ptxas
 * runs there through posix_spawn with -v (stdout and stderr into one log
 * file), and the log is parsed: `line N; error` / `warning` lines become
 * diagnostics at the .kf location the emitter's line map gives for PTX line
 * N, and the `-v` info lines become per-kernel statistics (registers, shared
 * memory, spills, stack frame). Nothing is printed. */
#include "ptxas.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static bool executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Finds ptxas; writes its path into out. */
static bool find_ptxas(char *out, size_t size)
{
    const char *path = getenv("PATH");
    while (path && *path) {
        const char *end = strchr(path, ':');
        size_t n = end ? (size_t)(end - path) : strlen(path);
        if (n && n + 8 < size) {
            snprintf(out, size, "%.*s/ptxas", (int)n, path);
            if (executable(out)) return true;
        }
        path = end ? end + 1 : NULL;
    }
    const char *home = getenv("CUDA_HOME");
    if (home && *home) {
        snprintf(out, size, "%s/bin/ptxas", home);
        if (executable(out)) return true;
    }
    snprintf(out, size, "/usr/local/cuda/bin/ptxas");
    return executable(out);
}

static bool write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    size_t n = strlen(text);
    bool ok = fwrite(text, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

/* Runs argv with stdout+stderr into log_path; returns the exit status or -1. */
static int spawn_wait(char *const argv[], const char *log_path)
{
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa)) return -1;
    posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc) return -1;
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The number before `key` in line ("Used 22 registers" -> 22 for "registers"). */
static bool number_before(const char *line, const char *key, uint32_t *out)
{
    const char *k = strstr(line, key);
    if (!k || k == line) return false;
    const char *p = k - 1;
    while (p > line && *p == ' ') p--;
    const char *e = p + 1;
    while (p > line && p[-1] >= '0' && p[-1] <= '9') p--;
    if (!(*p >= '0' && *p <= '9')) return false;
    *out = (uint32_t)strtoul(p, NULL, 10);
    return e > p;
}

static void parse_stats(kf_ptxas_result *res, const char *line)
{
    const char *ce = strstr(line, "Compiling entry function '");
    if (ce) {
        kf_ptxas_kernel_stats ks = {0};
        ce += strlen("Compiling entry function '");
        const char *q = strchr(ce, '\'');
        size_t n = q ? (size_t)(q - ce) : strlen(ce);
        if (n >= sizeof ks.kernel) n = sizeof ks.kernel - 1;
        memcpy(ks.kernel, ce, n);
        (void)KF_VEC_PUSH(&res->kernels, ks);
        return;
    }
    if (!res->kernels.len) return;
    kf_ptxas_kernel_stats *ks = &res->kernels.data[res->kernels.len - 1];
    number_before(line, "registers", &ks->registers);
    number_before(line, "bytes smem", &ks->shared_bytes);
    number_before(line, "bytes stack frame", &ks->stack_bytes);
    number_before(line, "bytes spill stores", &ks->spill_stores);
    number_before(line, "bytes spill loads", &ks->spill_loads);
}

/* An error or warning line: `ptxas FILE, line N; error   : MSG`. */
static void parse_problem(kf_ptxas_result *res, const char *line, const kf_linemap *lm, const char *kf_file,
                          kf_diags *diags, bool *any_error)
{
    if (strncmp(line, "ptxas", 5) != 0) return;
    bool is_err = strstr(line, "; error") || !strncmp(line, "ptxas error", 11);
    bool is_warn = !is_err && (strstr(line, "; warning") || !strncmp(line, "ptxas warning", 13));
    if (!is_err && !is_warn) return;
    if (is_warn) res->nwarnings++;
    uint32_t n = 0;
    const char *ln = strstr(line, ", line ");
    if (ln) n = (uint32_t)strtoul(ln + 7, NULL, 10);
    const char *msg = strstr(line, " : ");
    msg = msg ? msg + 3 : line;
    kf_loc loc = {kf_file ? kf_file : "?", 1, 1};
    bool mapped = lm && n >= 1 && n <= lm->lines.len && lm->lines.data[n - 1].line;
    if (mapped) {
        loc = lm->lines.data[n - 1];
        if (!loc.file) loc.file = kf_file;
    }
    kf_diag_kind kind = is_err ? KF_DIAG_ERROR : KF_DIAG_WARNING;
    if (is_err) *any_error = true;
    if (n) kf_diag_add(diags, kind, loc, "ptxas: %s (PTX line %u)", msg, n);
    else kf_diag_add(diags, kind, loc, "ptxas: %s", msg);
}

static void parse_log(kf_ptxas_result *res, const kf_linemap *lm, const char *kf_file, kf_diags *diags,
                      bool *any_error)
{
    char *s = res->log;
    while (s && *s) {
        char *e = strchr(s, '\n');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        char line[1024];
        if (n >= sizeof line) n = sizeof line - 1;
        memcpy(line, s, n);
        line[n] = 0;
        parse_stats(res, line);
        parse_problem(res, line, lm, kf_file, diags, any_error);
        s = e ? e + 1 : NULL;
    }
}

static void remove_dir(const char *dir, const char *const *names, int n)
{
    char p[4200];
    for (int i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

kf_status kf_ptxas_run(const char *ptx, uint32_t arch, const kf_linemap *lm, const char *kf_file,
                       kf_ptxas_result *res, kf_diags *diags, kf_error *err)
{
    char exe[4096], dir[4096], in[4200], out[4200], log[4200], archs[32];
    *res = (kf_ptxas_result){0};
    if (!find_ptxas(exe, sizeof exe))
        return kf_error_set(err, KF_ERR_DEVICE,
                            "ptxas not found on PATH, in $CUDA_HOME/bin or in /usr/local/cuda/bin; install the CUDA "
                            "toolkit or set CUDA_HOME");
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/kforge-ptxas-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) return kf_error_set(err, KF_ERR_IO, "cannot create a temp directory in %s: %s",
                                           tmp && *tmp ? tmp : "/tmp", strerror(errno));
    static const char *const names[] = {"kernel.ptx", "kernel.cubin", "ptxas.log"};
    snprintf(in, sizeof in, "%s/%s", dir, names[0]);
    snprintf(out, sizeof out, "%s/%s", dir, names[1]);
    snprintf(log, sizeof log, "%s/%s", dir, names[2]);
    snprintf(archs, sizeof archs, "-arch=sm_%u", arch);
    kf_status st = KF_OK;
    if (!write_file(in, ptx)) {
        st = kf_error_set(err, KF_ERR_IO, "cannot write %s: %s", in, strerror(errno));
        goto done;
    }
    char *argv[] = {exe, archs, "-v", "-o", out, in, NULL};
    int rc = spawn_wait(argv, log);
    if (rc < 0) {
        st = kf_error_set(err, KF_ERR_DEVICE, "cannot run %s", exe);
        goto done;
    }
    size_t len;
    if (kf_read_file(log, &res->log, &len, NULL) != KF_OK) res->log = NULL;
    bool any_error = false;
    parse_log(res, lm, kf_file, diags, &any_error);
    if (rc != 0 && !any_error) {
        const char *first = res->log && *res->log ? res->log : "no output";
        kf_diag_add(diags, KF_DIAG_ERROR, ((kf_loc){kf_file ? kf_file : "?", 1, 1}),
                    "ptxas failed with exit status %d: %.300s", rc, first);
    }
    if (rc != 0 || any_error) st = KF_ERR_SOURCE;
done:
    remove_dir(dir, names, 3);
    return st;
}

void kf_ptxas_result_free(kf_ptxas_result *res)
{
    KF_VEC_FREE(&res->kernels);
    free(res->log);
    res->log = NULL;
    res->nwarnings = 0;
}
