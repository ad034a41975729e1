/* Tests of the compiled-code cache (runtime/cache.c), no GPU needed: key
 * derivation, memory and disk hits, atomic writes, corrupt and truncated
 * entries detected (warning, removed, rebuilt), concurrent writers in
 * separate processes, KFORGE_CACHE=0, the directory defaults, and
 * stats/clear/verify. Each test uses a fresh temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <elf.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache.h"

static char dir[256];

static int setup(void **state)
{
    snprintf(dir, sizeof dir, "/tmp/kf-cache-test-XXXXXX");
    assert_non_null(mkdtemp(dir));
    setenv("KFORGE_CACHE_DIR", dir, 1);
    unsetenv("KFORGE_CACHE");
    kf_cache_clear(false, NULL, NULL);
    return 0;
}

static int teardown(void **state)
{
    kf_cache_clear(true, NULL, NULL);
    rmdir(dir);
    return 0;
}

static kf_cache_key key_of(const char *text)
{
    kf_cache_inputs in = {"kf-ptx", text, strlen(text), "entry=k", 90, 13000, 13000, 0};
    return kf_cache_key_make(&in);
}

static kf_cache_blob blob(const char *ptx, const char *cubin)
{
    return (kf_cache_blob){(char *)ptx, strlen(ptx), (void *)cubin, strlen(cubin)};
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
    while (d && (de = readdir(d)))
        if (strncmp(de->d_name, prefix, strlen(prefix)) == 0 && strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            n++;
    if (d) closedir(d);
    return n;
}

static void key_changes_with_every_input(void **state)
{
    kf_cache_inputs base = {"kf-ptx", "text", 4, "o", 90, 13000, 13000, 0};
    kf_cache_key k0 = kf_cache_key_make(&base), k;
    kf_cache_inputs v = base;
    k = kf_cache_key_make(&v);
    assert_true(k.lo == k0.lo && k.hi == k0.hi);
    const kf_cache_inputs variants[] = {
        {"kf-cuda", "text", 4, "o", 90, 13000, 13000, 0}, {"kf-ptx", "texu", 4, "o", 90, 13000, 13000, 0},
        {"kf-ptx", "text", 4, "p", 90, 13000, 13000, 0},  {"kf-ptx", "text", 4, "o", 80, 13000, 13000, 0},
        {"kf-ptx", "text", 4, "o", 90, 12080, 13000, 0},  {"kf-ptx", "text", 4, "o", 90, 13000, 12080, 0},
        {"kf-ptx", "tex", 3, "to", 90, 13000, 13000, 0},  /* field boundaries are part of the key */
        {"kf-ptx", "text", 4, "o", 90, 13000, 13000, 13000},   /* nvJitLink 13.0 made the cubin */
    };
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        k = kf_cache_key_make(&variants[i]);
        assert_false(k.lo == k0.lo && k.hi == k0.hi);
    }
}

static void store_then_lookup_hits_memory_then_disk(void **state)
{
    kf_cache_key k = key_of("saxpy");
    kf_cache_blob in = blob(".version 8.0\n", "\x7f" "ELFcubin"), out;
    char w[512];
    assert_int_equal(kf_cache_lookup(k, &out, w, sizeof w), KF_CACHE_MISS);
    assert_int_equal(kf_cache_store(k, &in, w, sizeof w), KF_OK);
    assert_string_equal(w, "");
    assert_int_equal(kf_cache_lookup(k, &out, w, sizeof w), KF_CACHE_HIT_MEMORY);
    assert_string_equal(out.ptx, ".version 8.0\n");
    kf_cache_blob_free(&out);
    assert_int_equal(kf_cache_clear(false, NULL, NULL), KF_OK);   /* memory only: a new process */
    assert_int_equal(kf_cache_lookup(k, &out, w, sizeof w), KF_CACHE_HIT_DISK);
    assert_int_equal(out.ptx_len, in.ptx_len);
    assert_int_equal(out.cubin_len, in.cubin_len);
    assert_memory_equal(out.cubin, in.cubin, in.cubin_len);
    assert_string_equal(w, "");
    kf_cache_blob_free(&out);
    assert_int_equal(kf_cache_lookup(k, &out, w, sizeof w), KF_CACHE_HIT_MEMORY);
    kf_cache_blob_free(&out);
}

static void write_is_atomic_and_leaves_no_temporaries(void **state)
{
    kf_cache_key k = key_of("atomic");
    kf_cache_blob in = blob("ptx", "cubin");
    assert_int_equal(kf_cache_store(k, &in, NULL, 0), KF_OK);
    assert_int_equal(kf_cache_store(k, &in, NULL, 0), KF_OK);   /* replacing is fine too */
    assert_int_equal(count_files(".tmp-"), 0);
    char path[512];
    entry_file(k, path, sizeof path);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_size, 64 + 3 + 5);
}

static void damage(kf_cache_key k, long at, int truncate_to)
{
    char path[512];
    entry_file(k, path, sizeof path);
    if (truncate_to >= 0) {
        assert_int_equal(truncate(path, truncate_to), 0);
        return;
    }
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, at, SEEK_SET);
    int c = fgetc(f);
    fseek(f, at, SEEK_SET);
    fputc(c ^ 0x5a, f);
    fclose(f);
}

/* Stores, damages the disk entry, and expects a miss with `why` in the warning and a rebuild. */
static void expect_detected(const char *name, long at, int truncate_to, const char *why)
{
    kf_cache_key k = key_of(name);
    kf_cache_blob in = blob("some ptx text", "some cubin bytes"), out;
    assert_int_equal(kf_cache_store(k, &in, NULL, 0), KF_OK);
    kf_cache_clear(false, NULL, NULL);
    damage(k, at, truncate_to);
    char w[512];
    assert_int_equal(kf_cache_lookup(k, &out, w, sizeof w), KF_CACHE_MISS);
    if (!strstr(w, why) || !strstr(w, "removed and rebuilt")) fail_msg("warning '%s' lacks '%s'", w, why);
    char path[512];
    entry_file(k, path, sizeof path);
    assert_int_not_equal(access(path, F_OK), 0);   /* removed */
    assert_int_equal(kf_cache_store(k, &in, w, sizeof w), KF_OK);   /* the rebuild */
    kf_cache_clear(false, NULL, NULL);
    assert_int_equal(kf_cache_lookup(k, &out, w, sizeof w), KF_CACHE_HIT_DISK);
    kf_cache_blob_free(&out);
}

static void corrupt_payload_is_detected_and_rebuilt(void **state)
{
    expect_detected("corrupt", 64 + 5, -1, "payload checksum mismatch");
}

static void truncated_entry_is_detected_and_rebuilt(void **state)
{
    expect_detected("truncated", 0, 70, "truncated payload");
    expect_detected("truncated-header", 0, 20, "truncated header");
}

static void corrupt_header_is_detected_and_rebuilt(void **state)
{
    expect_detected("header", 33, -1, "header checksum mismatch");
    expect_detected("magic", 0, -1, "not a kforge cache entry");
}

static void concurrent_writers_both_succeed(void **state)
{
    kf_cache_key shared = key_of("shared");
    enum { WRITERS = 4, ROUNDS = 40 };
    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pids[w] = fork();
        assert_true(pids[w] >= 0);
        if (pids[w] == 0) {
            char own[32], warn[512];
            snprintf(own, sizeof own, "own-%d", w);
            kf_cache_blob in = blob("shared ptx", "shared cubin");
            int bad = 0;
            for (int r = 0; r < ROUNDS; r++) {
                bad |= kf_cache_store(shared, &in, warn, sizeof warn) != KF_OK || warn[0];
                bad |= kf_cache_store(key_of(own), &in, warn, sizeof warn) != KF_OK || warn[0];
            }
            _exit(bad);
        }
    }
    for (int w = 0; w < WRITERS; w++) {
        int status;
        assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    uint64_t good, bad;
    assert_int_equal(kf_cache_verify(false, &good, &bad, NULL, NULL), KF_OK);
    assert_int_equal(good, WRITERS + 1);
    assert_int_equal(bad, 0);
    assert_int_equal(count_files(".tmp-"), 0);
    kf_cache_blob out;
    assert_int_equal(kf_cache_lookup(shared, &out, NULL, 0), KF_CACHE_HIT_DISK);
    assert_string_equal(out.ptx, "shared ptx");
    kf_cache_blob_free(&out);
}

static void *thread_body(void *arg)
{
    intptr_t t = (intptr_t)arg, bad = 0;
    char own[32];
    kf_cache_blob in = blob("thread ptx", "thread cubin"), out;
    for (int r = 0; r < 50; r++) {
        snprintf(own, sizeof own, "thread-%d-%d", (int)t, r % 5);
        bad |= kf_cache_store(key_of(own), &in, NULL, 0) != KF_OK;
        bad |= kf_cache_lookup(key_of(own), &out, NULL, 0) == KF_CACHE_MISS;
        bad |= out.ptx_len != in.ptx_len;
        kf_cache_blob_free(&out);
        bad |= kf_cache_lookup(key_of("shared"), &out, NULL, 0) == KF_CACHE_MISS;
        kf_cache_blob_free(&out);
    }
    return (void *)bad;
}

static void threads_share_the_memory_cache_safely(void **state)
{
    kf_cache_blob in = blob("shared ptx", "shared cubin");
    assert_int_equal(kf_cache_store(key_of("shared"), &in, NULL, 0), KF_OK);
    pthread_t th[4];
    for (intptr_t t = 0; t < 4; t++) assert_int_equal(pthread_create(&th[t], NULL, thread_body, (void *)t), 0);
    for (int t = 0; t < 4; t++) {
        void *bad;
        assert_int_equal(pthread_join(th[t], &bad), 0);
        assert_null(bad);
    }
    kf_cache_stats s;
    assert_int_equal(kf_cache_stats_get(&s, NULL), KF_OK);
    assert_int_equal(s.mem_entries, 1 + 4 * 5);
    assert_int_equal(s.disk_entries, 1 + 4 * 5);
}

static void cache_zero_disables_the_disk(void **state)
{
    setenv("KFORGE_CACHE", "0", 1);
    assert_false(kf_cache_disk_enabled());
    kf_cache_key k = key_of("nodisk");
    kf_cache_blob in = blob("p", "c"), out;
    assert_int_equal(kf_cache_store(k, &in, NULL, 0), KF_OK);
    assert_int_equal(count_files(""), 0);
    assert_int_equal(kf_cache_lookup(k, &out, NULL, 0), KF_CACHE_HIT_MEMORY);   /* memory still works */
    kf_cache_blob_free(&out);
    kf_cache_clear(false, NULL, NULL);
    assert_int_equal(kf_cache_lookup(k, &out, NULL, 0), KF_CACHE_MISS);
    kf_cache_stats s;
    assert_int_equal(kf_cache_stats_get(&s, NULL), KF_OK);
    assert_false(s.disk_enabled);
    unsetenv("KFORGE_CACHE");
}

static void directory_defaults_follow_xdg_then_home(void **state)
{
    char buf[512];
    kf_cache_dir(buf, sizeof buf);
    assert_string_equal(buf, dir);
    unsetenv("KFORGE_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    kf_cache_dir(buf, sizeof buf);
    assert_string_equal(buf, "/xdg/kforge");
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/home/someone", 1);
    kf_cache_dir(buf, sizeof buf);
    assert_string_equal(buf, "/home/someone/.cache/kforge");
    setenv("KFORGE_CACHE_DIR", dir, 1);
}

static void stats_clear_and_verify_report_entries(void **state)
{
    kf_cache_blob in = blob("0123456789", "abcdef");
    assert_int_equal(kf_cache_store(key_of("a"), &in, NULL, 0), KF_OK);
    assert_int_equal(kf_cache_store(key_of("b"), &in, NULL, 0), KF_OK);
    kf_cache_stats s;
    assert_int_equal(kf_cache_stats_get(&s, NULL), KF_OK);
    assert_true(s.disk_enabled);
    assert_string_equal(s.dir, dir);
    assert_int_equal(s.disk_entries, 2);
    assert_int_equal(s.disk_bytes, 2 * (64 + 16));
    assert_int_equal(s.mem_entries, 2);
    assert_int_equal(s.mem_bytes, 32);
    damage(key_of("b"), 64, -1);
    uint64_t good, bad;
    char *names = NULL;
    assert_int_equal(kf_cache_verify(false, &good, &bad, &names, NULL), KF_OK);
    assert_int_equal(good, 1);
    assert_int_equal(bad, 1);
    assert_non_null(names);
    assert_non_null(strstr(names, ".kfc: payload checksum mismatch"));
    free(names);
    assert_int_equal(kf_cache_verify(true, &good, &bad, NULL, NULL), KF_OK);   /* removes it */
    assert_int_equal(kf_cache_verify(false, &good, &bad, NULL, NULL), KF_OK);
    assert_int_equal(good, 1);
    assert_int_equal(bad, 0);
    uint64_t removed = 0;
    assert_int_equal(kf_cache_clear(true, &removed, NULL), KF_OK);
    assert_int_equal(removed, 1);
    assert_int_equal(kf_cache_stats_get(&s, NULL), KF_OK);
    assert_int_equal(s.disk_entries, 0);
    assert_int_equal(s.mem_entries, 0);
}

/* The compiler's build identity is this program's GNU build ID (everything
 * is linked statically into it), read here independently from the section
 * headers of the file on disk. */
static void build_id_is_the_programs_gnu_build_id(void **state)
{
    char *data;
    size_t size;
    kf_error e = {0};
    assert_int_equal(kf_read_file("/proc/self/exe", &data, &size, &e), KF_OK);
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)data;
    assert_true(size > sizeof *eh && eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) <= size);
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(data + eh->e_shoff);
    char want[130] = "";
    for (int i = 0; i < eh->e_shnum && !want[0]; i++) {
        if (sh[i].sh_type != SHT_NOTE) continue;
        for (size_t off = sh[i].sh_offset; off + sizeof(Elf64_Nhdr) <= sh[i].sh_offset + sh[i].sh_size;) {
            const Elf64_Nhdr *nh = (const Elf64_Nhdr *)(data + off);
            size_t name = (nh->n_namesz + 3) & ~3u, desc = (nh->n_descsz + 3) & ~3u;
            const unsigned char *d = (const unsigned char *)data + off + sizeof *nh + name;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_descsz <= 64)
                for (unsigned j = 0; j < nh->n_descsz; j++) snprintf(want + 2 * j, 3, "%02x", d[j]);
            off += sizeof *nh + name + desc;
        }
    }
    free(data);
    assert_true(want[0]);
    assert_string_equal(kf_cache_build_id(), want);
    assert_ptr_equal(kf_cache_build_id(), kf_cache_build_id());
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
int main(void)
{
    const struct CMUnitTest tests[] = {
        T(key_changes_with_every_input),
        T(store_then_lookup_hits_memory_then_disk),
        T(write_is_atomic_and_leaves_no_temporaries),
        T(corrupt_payload_is_detected_and_rebuilt),
        T(truncated_entry_is_detected_and_rebuilt),
        T(corrupt_header_is_detected_and_rebuilt),
        T(concurrent_writers_both_succeed),
        T(threads_share_the_memory_cache_safely),
        T(cache_zero_disables_the_disk),
        T(directory_defaults_follow_xdg_then_home),
        T(stats_clear_and_verify_report_entries),
        T(build_id_is_the_programs_gnu_build_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
