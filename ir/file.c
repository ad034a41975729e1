/* Reading and writing whole files, for every part of kforge that touches
 * one (sources, .npy and .case files, cache entries, -o outputs); see
 * base.h for the contracts.
 *
 * Reading opens without blocking and looks at what the path is before
 * reading a byte: only a regular file is read, so /dev/zero, a FIFO or a
 * directory given where a file belongs is a clear error instead of an
 * endless read or a hang, and a size limit bounds what a regular file may
 * cost. Writing goes to a temporary file beside the target and renames it
 * into place, so a failure part-way (a full disk, a file size limit) never
 * leaves a truncated file where a good one was. */
#include "base.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t m)
{
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO (named pipe)";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

static kf_status too_big(kf_error *err, const char *path, uint64_t size, uint64_t max)
{
    return kf_error_set(err, KF_ERR_IO, "'%s' is too large: %llu bytes (kforge reads at most %llu bytes from such a file)",
                        path, (unsigned long long)size, (unsigned long long)max);
}

/* Reads fd to its end into a heap buffer (+ NUL), expecting hint bytes (the
 * size fstat gave); a file that grows past max meanwhile is an error. */
static kf_status read_fd(int fd, const char *path, uint64_t max, size_t hint, char **data, size_t *len,
                         kf_error *err)
{
    size_t cap = hint + 1, n = 0;
    char *buf = malloc(cap), probe;
    kf_status st = buf ? KF_OK : kf_error_set(err, KF_ERR_NOMEM, "out of memory reading '%s'", path);
    while (st == KF_OK) {
        bool full = n + 1 == cap;   /* then one byte more tells whether the file grew */
        ssize_t k = full ? read(fd, &probe, 1) : read(fd, buf + n, cap - 1 - n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) st = kf_error_set(err, KF_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
        if (k <= 0) break;
        if (full) {
            char *more = (uint64_t)n >= max || cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!more) {
                st = (uint64_t)n >= max ? too_big(err, path, n + 1, max)
                                        : kf_error_set(err, KF_ERR_NOMEM, "out of memory reading '%s'", path);
                break;
            }
            buf = more;
            cap *= 2;
            buf[n] = probe;
            k = 1;
        }
        n += (size_t)k;
        if ((uint64_t)n > max) st = too_big(err, path, n, max);
    }
    if (st != KF_OK) {
        free(buf);
        return st;
    }
    buf[n] = 0;
    *data = buf;
    *len = n;
    return KF_OK;
}

kf_status kf_read_file_max(const char *path, uint64_t max_bytes, char **data, size_t *len, kf_error *err)
{
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return kf_error_set(err, KF_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    struct stat sb;
    kf_status st;
    if (fstat(fd, &sb) != 0)
        st = kf_error_set(err, KF_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        st = kf_error_set(err, KF_ERR_IO, "'%s' is %s; kforge reads only regular files", path, kind_of(sb.st_mode));
    else if ((uint64_t)sb.st_size > max_bytes || (uint64_t)sb.st_size >= SIZE_MAX)
        st = too_big(err, path, (uint64_t)sb.st_size, max_bytes);
    else
        st = read_fd(fd, path, max_bytes, (size_t)sb.st_size, data, len, err);
    close(fd);
    return st;
}

kf_status kf_read_file(const char *path, char **data, size_t *len, kf_error *err)
{
    return kf_read_file_max(path, KF_READ_MAX, data, len, err);
}

/* ---- writing ---------------------------------------------------------------- */
static bool write_all(int fd, const void *p, size_t n)
{
    const unsigned char *c = p;
    while (n) {
        ssize_t k = write(fd, c, n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return false;
        if (k == 0) {
            errno = EIO;
            return false;
        }
        c += k;
        n -= (size_t)k;
    }
    return true;
}

static kf_status write_error(kf_error *err, const char *path, int e)
{
    return kf_error_set(err, KF_ERR_IO, "cannot write '%s': %s", path, strerror(e));
}

/* A device, FIFO or other non-regular file: written where it is (a FIFO
 * with no reader is an error, not a hang). */
static kf_status write_in_place(const char *path, const void *data, size_t len, kf_error *err)
{
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return write_error(err, path, errno);
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    bool ok = write_all(fd, data, len);
    int e = errno;
    if (close(fd) != 0 && ok) ok = false, e = errno;
    return ok ? KF_OK : write_error(err, path, e);
}

static atomic_uint tmp_serial;

kf_status kf_write_file(const char *path, const void *data, size_t len, kf_error *err)
{
    char real[PATH_MAX], tmp[PATH_MAX + 64];
    struct stat sb;
    const char *dest = path;
    if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode) && realpath(path, real)) dest = real;
    if (stat(dest, &sb) == 0 && S_ISDIR(sb.st_mode))
        return kf_error_set(err, KF_ERR_IO, "cannot write '%s': it is a directory", path);
    if (stat(dest, &sb) == 0 && !S_ISREG(sb.st_mode)) return write_in_place(dest, data, len, err);
    const char *slash = strrchr(dest, '/');
    int dlen = slash ? (int)(slash - dest) + 1 : 0;
    if ((size_t)snprintf(tmp, sizeof tmp, "%.*s.tmp-%ld-%u-%.100s", dlen, dest, (long)getpid(),
                         atomic_fetch_add(&tmp_serial, 1), slash ? slash + 1 : dest) >= sizeof tmp)
        return write_error(err, path, ENAMETOOLONG);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) return write_error(err, path, errno);
    bool ok = write_all(fd, data, len);
    int e = errno;
    if (close(fd) != 0 && ok) ok = false, e = errno;
    if (ok && rename(tmp, dest) != 0) ok = false, e = errno;
    if (!ok) unlink(tmp);
    return ok ? KF_OK : write_error(err, path, e);
}
