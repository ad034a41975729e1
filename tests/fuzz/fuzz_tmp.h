/* A private scratch directory for the harnesses whose reader takes a path
 * (fuzz_case, fuzz_cache): made once per process under $TMPDIR (default
 * /dev/shm when it exists, else /tmp), emptied and removed at exit. */
#ifndef KF_FUZZ_TMP_H
#define KF_FUZZ_TMP_H

#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char fuzz_dir[256];

/* Removes every file in dir, then dir. */
static void fuzz_rmdir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d))) {
            char p[512];
            if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2]))) continue;
            snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
            if (unlink(p) != 0) fuzz_rmdir(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

static void fuzz_tmp_cleanup(void) { fuzz_rmdir(fuzz_dir); }

/* The scratch directory (aborts if none can be made: the harness cannot run). */
static const char *fuzz_tmpdir(void)
{
    if (fuzz_dir[0]) return fuzz_dir;
    const char *base = getenv("TMPDIR");
    if (!base || !*base) base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(fuzz_dir, sizeof fuzz_dir, "%s/kf-fuzz-XXXXXX", base);
    if (!mkdtemp(fuzz_dir)) abort();
    atexit(fuzz_tmp_cleanup);
    return fuzz_dir;
}

/* Writes data to path (replacing it); false on failure. */
static bool fuzz_write(const char *path, const void *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return false;
    bool ok = size == 0 || write(fd, data, size) == (ssize_t)size;
    return close(fd) == 0 && ok;
}

#endif
