/* The disk cache (runtime/cache.c) under faults, no GPU needed: many
 * processes writing and reading the same keys at once, entries truncated at
 * every length or with any byte flipped, an entry filed under another key's
 * name, a FIFO, /dev/zero or an oversized file at an entry's path, a
 * read-only directory, a full disk (RLIMIT_FSIZE), the directory being a
 * file, and an over-long KFORGE_CACHE_DIR. What must hold throughout: a
 * wrong entry is never served (a lookup is a miss or the exact bytes
 * stored), nothing blocks, and a failing write is a warning, never an
 * error. Each test uses a fresh temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache.h"

static char dir[256];

static int setup(void **state)
{
    snprintf(dir, sizeof dir, "/tmp/kf-cache-faults-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    setenv("KFORGE_CACHE_DIR", dir, 1);
    unsetenv("KFORGE_CACHE");
    kf_cache_clear(false, NULL, NULL);
    alarm(60);   /* a test that blocks (a FIFO read) fails instead of hanging CI */
    return 0;
}

static int teardown(void **state)
{
    alarm(0);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "chmod -R u+rwx %s; rm -rf %s", dir, dir);
    return system(cmd) == 0 ? 0 : -1;
}

static kf_cache_key key_of(const char *text)
{
    kf_cache_inputs in = {"kf-ptx", text, strlen(text), "entry=k", 90, 13000, 13000, 0};
    return kf_cache_key_make(&in);
}

static void entry_file(kf_cache_key k, char *path, size_t n)
{
    snprintf(path, n, "%s/%016llx%016llx.kfc", dir, (unsigned long long)k.hi, (unsigned long long)k.lo);
}

static int count_files(const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d))) n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
    if (d) closedir(d);
    return n;
}

/* The build of key number i: its PTX and cubin (i decides length and bytes). */
typedef struct {
    char ptx[6000];
    unsigned char cubin[9000];
    kf_cache_blob blob;
} build;

static void build_of(int i, build *b)
{
    size_t np = 1000 + (size_t)i * 997 % 4900, nc = 2000 + (size_t)i * 1499 % 6900;
    for (size_t j = 0; j < np; j++) b->ptx[j] = (char)('a' + (i + j) % 26);
    b->ptx[np] = 0;
    for (size_t j = 0; j < nc; j++) b->cubin[j] = (unsigned char)(i * 31 + j * 7);
    b->blob = (kf_cache_blob){b->ptx, np, b->cubin, nc};
}

static bool same_blob(const kf_cache_blob *a, const kf_cache_blob *b)
{
    return a->ptx_len == b->ptx_len && a->cubin_len == b->cubin_len && !memcmp(a->ptx, b->ptx, a->ptx_len) &&
           !memcmp(a->cubin, b->cubin, a->cubin_len);
}

/* A lookup of key text "k<i>" from the disk (memory cleared first): a miss,
 * or exactly build i. Returns false on anything else (or any warning). */
static bool disk_lookup_is_right(int i)
{
    char name[16], w[512];
    build want;
    kf_cache_blob got;
    snprintf(name, sizeof name, "k%d", i);
    build_of(i, &want);
    kf_cache_clear(false, NULL, NULL);
    kf_cache_result r = kf_cache_lookup(key_of(name), &got, w, sizeof w);
    bool ok = !w[0] && (r == KF_CACHE_MISS || (r == KF_CACHE_HIT_DISK && same_blob(&got, &want.blob)));
    kf_cache_blob_free(&got);
    return ok;
}

static void many_processes_write_and_read_the_same_keys(void **state)
{
    enum { PROCS = 6, KEYS = 4, ROUNDS = 60 };
    pid_t pids[PROCS];
    for (int p = 0; p < PROCS; p++) {
        pids[p] = fork();
        assert_true(pids[p] >= 0);
        if (pids[p] == 0) {
            int bad = 0;
            for (int r = 0; r < ROUNDS; r++) {
                int i = (p + r) % KEYS;
                char name[16], w[512];
                build b;
                snprintf(name, sizeof name, "k%d", i);
                build_of(i, &b);
                if (p % 2 == 0 || r % 3 == 0)   /* half the processes mostly read */
                    bad |= kf_cache_store(key_of(name), &b.blob, w, sizeof w) != KF_OK || w[0];
                for (int k = 0; k < KEYS; k++) bad |= !disk_lookup_is_right(k);
            }
            _exit(bad);
        }
    }
    for (int p = 0; p < PROCS; p++) {
        int status;
        assert_int_equal(waitpid(pids[p], &status, 0), pids[p]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    uint64_t good, bad;
    assert_int_equal(kf_cache_verify(false, &good, &bad, NULL, NULL), KF_OK);
    assert_int_equal(good, KEYS);
    assert_int_equal(bad, 0);
    assert_int_equal(count_files(".tmp-"), 0);
    for (int k = 0; k < KEYS; k++) assert_true(disk_lookup_is_right(k));
}

/* Stores build 1 under "k1" and returns the entry's bytes. */
static unsigned char *stored_entry(char *path, size_t plen, size_t *size)
{
    build b;
    build_of(1, &b);
    assert_int_equal(kf_cache_store(key_of("k1"), &b.blob, NULL, 0), KF_OK);
    entry_file(key_of("k1"), path, plen);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char *data = malloc(64 + 6000 + 9000);
    *size = fread(data, 1, 64 + 6000 + 9000, f);
    fclose(f);
    return data;
}

static void write_bytes(const char *path, const unsigned char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

/* The lookup of "k1" with `path` holding something else: a miss with a
 * warning containing `why`, and the bad file gone. */
static void expect_refused(const char *path, const char *why)
{
    kf_cache_blob out;
    char w[600];
    kf_cache_clear(false, NULL, NULL);
    assert_int_equal(kf_cache_lookup(key_of("k1"), &out, w, sizeof w), KF_CACHE_MISS);
    if (!strstr(w, why) || !strstr(w, "removed and rebuilt")) fail_msg("warning '%s' lacks '%s'", w, why);
    struct stat sb;
    assert_int_not_equal(lstat(path, &sb), 0);
}

static void entries_cut_at_every_length_or_with_any_byte_flipped_are_never_served(void **state)
{
    char path[512];
    size_t size;
    unsigned char *good = stored_entry(path, sizeof path, &size);
    assert_true(size > 64 + 2000);
    for (size_t len = 0; len < size; len += len < 200 ? 1 : 97) {
        write_bytes(path, good, len);
        expect_refused(path, len < 64 ? "truncated header" : "truncated payload");
    }
    unsigned char *bad = malloc(size + 1);
    for (size_t at = 0; at < size; at += at < 200 ? 1 : 89) {
        memcpy(bad, good, size);
        bad[at] ^= 0x01;
        write_bytes(path, bad, size);
        expect_refused(path, "");
    }
    memcpy(bad, good, size);
    bad[size] = 0;
    write_bytes(path, bad, size + 1);
    expect_refused(path, "trailing bytes after the payload");
    free(bad);
    free(good);
}

static void an_entry_under_another_keys_name_is_never_served(void **state)
{
    char path[512], other[512];
    size_t size;
    unsigned char *data = stored_entry(path, sizeof path, &size);
    entry_file(key_of("k2"), other, sizeof other);
    write_bytes(other, data, size);   /* a whole, valid entry of k1 filed as k2 */
    free(data);
    kf_cache_blob out;
    char w[600];
    kf_cache_clear(false, NULL, NULL);
    assert_int_equal(kf_cache_lookup(key_of("k2"), &out, w, sizeof w), KF_CACHE_MISS);
    assert_non_null(strstr(w, "key differs from the file name"));
    assert_int_equal(access(other, F_OK), -1);
    assert_true(disk_lookup_is_right(1));   /* k1's own entry still serves */
}

static void a_fifo_at_an_entry_path_is_refused_without_blocking(void **state)
{
    char path[512];
    entry_file(key_of("k1"), path, sizeof path);
    assert_int_equal(mkfifo(path, 0600), 0);   /* no writer: a read would wait for ever */
    expect_refused(path, "is a FIFO (named pipe); kforge reads only regular files");
}

static void dev_zero_at_an_entry_path_is_refused_without_reading(void **state)
{
    char path[512];
    entry_file(key_of("k1"), path, sizeof path);
    assert_int_equal(symlink("/dev/zero", path), 0);
    expect_refused(path, "is a character device");
    assert_int_equal(access("/dev/zero", R_OK), 0);   /* the link went, not what it pointed at */
}

static void an_oversized_entry_is_refused_without_reading(void **state)
{
    char path[512];
    entry_file(key_of("k1"), path, sizeof path);
    int fd = open(path, O_WRONLY | O_CREAT, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)KF_CACHE_ENTRY_MAX + 1), 0);   /* sparse */
    close(fd);
    expect_refused(path, "is too large: 1073741825 bytes");
}

/* Runs fn in a child process (with the limits `prepare` sets there) and
 * expects it to exit 0. */
static void in_child(void (*prepare)(void), int (*fn)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prepare();
        _exit(fn());
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* Stores k2 and expects KF_OK, a warning containing `why`, no entry and no
 * temporary on disk, and the build still served from memory; 0 if so. */
static int store_fails_softly(const char *why)
{
    build b;
    build_of(2, &b);
    char w[600], path[512];
    kf_cache_blob out;
    int bad = kf_cache_store(key_of("k2"), &b.blob, w, sizeof w) != KF_OK;
    if (!strstr(w, why) || !strstr(w, "the build goes on uncached")) {
        fprintf(stderr, "warning '%s' lacks '%s'\n", w, why);
        bad = 1;
    }
    entry_file(key_of("k2"), path, sizeof path);
    bad |= access(path, F_OK) == 0 || count_files(".tmp-") != 0;
    bad |= kf_cache_lookup(key_of("k2"), &out, NULL, 0) != KF_CACHE_HIT_MEMORY || !same_blob(&out, &b.blob);
    kf_cache_blob_free(&out);
    return bad;
}

static void limit_file_size(void)
{
    struct rlimit rl = {4096, 4096};
    signal(SIGXFSZ, SIG_IGN);   /* then a write past the limit fails with EFBIG, as on a full disk */
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(90);
}

static int full_disk_store(void) { return store_fails_softly("File too large"); }

static void a_full_disk_makes_a_store_a_warning_and_leaves_nothing(void **state)
{
    in_child(limit_file_size, full_disk_store);
}

/* Root writes anywhere: drop to nobody so a read-only directory is one. */
static void read_only_directory(void)
{
    char entry[512];
    build b;
    build_of(1, &b);
    if (kf_cache_store(key_of("k1"), &b.blob, NULL, 0) != KF_OK) _exit(91);
    entry_file(key_of("k1"), entry, sizeof entry);
    if (chmod(entry, 0444) != 0 || chmod(dir, 0555) != 0) _exit(92);
    kf_cache_clear(false, NULL, NULL);
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(93);
}

static int read_only_store_and_lookup(void)
{
    int bad = store_fails_softly("Permission denied");
    bad |= !disk_lookup_is_right(1) << 1;   /* what is there still serves */
    kf_cache_blob out;
    bad |= (kf_cache_lookup(key_of("k1"), &out, NULL, 0) != KF_CACHE_HIT_MEMORY) << 2;
    kf_cache_blob_free(&out);
    return bad;
}

static void a_read_only_directory_still_serves_and_stores_with_a_warning(void **state)
{
    in_child(read_only_directory, read_only_store_and_lookup);
}

static void a_cache_directory_that_is_a_file_is_a_warning(void **state)
{
    char file[300];
    snprintf(file, sizeof file, "%s/plain-file", dir);
    write_bytes(file, (const unsigned char *)"x", 1);
    setenv("KFORGE_CACHE_DIR", file, 1);
    int bad = store_fails_softly("cannot create the cache directory");
    kf_cache_blob out;
    char w[600];
    kf_cache_clear(false, NULL, NULL);
    assert_int_equal(kf_cache_lookup(key_of("k2"), &out, w, sizeof w), KF_CACHE_MISS);
    assert_string_equal(w, "");   /* nothing there is simply a miss */
    setenv("KFORGE_CACHE_DIR", dir, 1);
    assert_int_equal(bad, 0);
}

static void an_over_long_cache_dir_is_refused_not_cut(void **state)
{
    char *longdir = malloc(5000);
    int n = snprintf(longdir, 5000, "%s/", dir);
    memset(longdir + n, 'd', 4999 - (size_t)n);
    longdir[4999] = 0;
    for (int i = n + 200; i < 4999; i += 200) longdir[i] = '/';
    setenv("KFORGE_CACHE_DIR", longdir, 1);
    char buf[KF_CACHE_DIR_MAX] = "unchanged";
    assert_false(kf_cache_dir(buf, sizeof buf));
    assert_string_equal(buf, "");
    const char *why = "the cache directory from KFORGE_CACHE_DIR is longer than the 4095 bytes a path may have; "
                      "set KFORGE_CACHE_DIR to a shorter one";
    char why_warn[300];
    snprintf(why_warn, sizeof why_warn, "%s; the build goes on uncached", why);
    int bad = store_fails_softly("");   /* memory only */
    build b;
    build_of(3, &b);
    char w[600];
    assert_int_equal(kf_cache_store(key_of("k3"), &b.blob, w, sizeof w), KF_OK);
    assert_string_equal(w, why_warn);
    kf_cache_blob out;
    kf_cache_clear(false, NULL, NULL);
    assert_int_equal(kf_cache_lookup(key_of("k3"), &out, w, sizeof w), KF_CACHE_MISS);
    assert_string_equal(w, why_warn);
    kf_cache_stats s;
    kf_error e = {0};
    assert_int_equal(kf_cache_stats_get(&s, &e), KF_ERR_USAGE);
    assert_string_equal(e.msg, why);
    uint64_t good, nbad;
    assert_int_equal(kf_cache_verify(false, &good, &nbad, NULL, &e), KF_ERR_USAGE);
    assert_int_equal(kf_cache_clear(true, NULL, &e), KF_ERR_USAGE);
    setenv("KFORGE_CACHE_DIR", dir, 1);
    longdir[n + 200] = 0;
    assert_int_equal(access(longdir, F_OK), -1);   /* nothing made at a cut-short path */
    free(longdir);
    assert_int_equal(bad, 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(many_processes_write_and_read_the_same_keys),
        T(entries_cut_at_every_length_or_with_any_byte_flipped_are_never_served),
        T(an_entry_under_another_keys_name_is_never_served),
        T(a_fifo_at_an_entry_path_is_refused_without_blocking),
        T(dev_zero_at_an_entry_path_is_refused_without_reading),
        T(an_oversized_entry_is_refused_without_reading),
        T(a_full_disk_makes_a_store_a_warning_and_leaves_nothing),
        T(a_read_only_directory_still_serves_and_stores_with_a_warning),
        T(a_cache_directory_that_is_a_file_is_a_warning),
        T(an_over_long_cache_dir_is_refused_not_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
