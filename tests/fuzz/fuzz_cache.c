/* libFuzzer target for the disk-cache entry reader (runtime/cache.c): the
 * input's first byte is a mode, the rest is written as an entry file in a
 * private cache directory and looked up through kf_cache_lookup, the path a
 * warm `kforge run` takes. The reader must never serve a wrong entry: a hit
 * returns exactly the entry's payload (PTX, NUL-terminated, then cubin) and
 * only for the key the file is named after; anything else is a miss, and a
 * corrupt entry is removed with a warning. Nothing may crash or leak.
 *
 * Mode bits, so that mutations get past the checksums to the length checks:
 *   1  recompute the payload checksum (header word 6) before writing
 *   2  recompute the header checksum (word 7)
 *   4  name the file after the key in the header (else a fixed key)
 *   8  also run kf_cache_verify over the directory
 *  16  also store the payload (split into PTX and cubin) under another key
 *      and check it reads back from disk unchanged
 *
 * Built by -DKF_FUZZ=ON (tests/fuzz/CMakeLists.txt); seeds (valid entries
 * and truncated/corrupt ones) in tests/fuzz/corpus/fuzz_cache. */
#include <stdint.h>
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "cache.h"
#include "fuzz_tmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

enum { HDR = 64, FIX_PAYLOAD = 1, FIX_HEADER = 2, KEY_FROM_HEADER = 4, VERIFY = 8, STORE = 16 };
static const kf_cache_key fixed_key = {0x0123456789abcdefu, 0xfedcba9876543210u};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    setenv("KFORGE_CACHE_DIR", fuzz_tmpdir(), 1);
    unsetenv("KFORGE_CACHE");
    return 0;
}

static void entry_path(char *buf, size_t len, kf_cache_key key)
{
    snprintf(buf, len, "%s/%016llx%016llx.kfc", fuzz_tmpdir(), (unsigned long long)key.hi, (unsigned long long)key.lo);
}

/* A hit must hand back exactly the file's payload, for the file's own key. */
static void check_hit(const unsigned char *e, size_t n, kf_cache_key key, const kf_cache_blob *b)
{
    uint64_t h[8];
    if (n < HDR) abort();
    memcpy(h, e, HDR);
    if (h[2] != key.lo || h[3] != key.hi || h[4] != b->ptx_len || h[5] != b->cubin_len) abort();
    if (n != HDR + b->ptx_len + b->cubin_len || b->ptx[b->ptx_len] != 0) abort();
    if (memcmp(b->ptx, e + HDR, b->ptx_len) || memcmp(b->cubin, e + HDR + b->ptx_len, b->cubin_len)) abort();
}

static void lookup_entry(unsigned char *e, size_t n, unsigned mode)
{
    kf_cache_key key = fixed_key;
    if (n >= HDR) {
        uint64_t h[8];
        memcpy(h, e, HDR);
        if (mode & FIX_PAYLOAD) h[6] = XXH3_64bits(e + HDR, n - HDR);
        if (mode & FIX_HEADER) h[7] = XXH3_64bits(h, 7 * sizeof h[0]);
        if (mode & KEY_FROM_HEADER) key = (kf_cache_key){h[2], h[3]};
        memcpy(e, h, HDR);
    }
    char path[400], warning[600];
    entry_path(path, sizeof path, key);
    if (!fuzz_write(path, e, n)) abort();
    kf_cache_blob b;
    kf_cache_result r = kf_cache_lookup(key, &b, warning, sizeof warning);
    if (r == KF_CACHE_HIT_MEMORY) abort();   /* the memory map is emptied after every input */
    if (r == KF_CACHE_HIT_DISK) check_hit(e, n, key, &b);
    else if (!warning[0] || access(path, F_OK) == 0) abort();   /* a bad entry is reported and removed */
    kf_cache_blob_free(&b);
    if (mode & VERIFY) {
        uint64_t good = 0, bad = 0;
        char *names = NULL;
        fuzz_write(path, e, n);
        if (kf_cache_verify(true, &good, &bad, &names, NULL) != KF_OK || good + bad != 1) abort();
        if ((r == KF_CACHE_HIT_DISK) != (good == 1) || (bad && !names)) abort();
        free(names);
    }
    unlink(path);
}

/* Stores the bytes as a build and reads them back from disk. */
static void store_and_reload(const unsigned char *p, size_t n)
{
    kf_cache_key key = {n, 0x5eed};
    kf_cache_blob b = {(char *)p, n / 2, (void *)(p + n / 2), n - n / 2}, got;
    char warning[600];
    if (kf_cache_store(key, &b, warning, sizeof warning) != KF_OK || warning[0]) abort();
    kf_cache_clear(false, NULL, NULL);
    if (kf_cache_lookup(key, &got, warning, sizeof warning) != KF_CACHE_HIT_DISK) abort();
    if (got.ptx_len != b.ptx_len || got.cubin_len != b.cubin_len || memcmp(got.ptx, b.ptx, b.ptx_len) ||
        memcmp(got.cubin, b.cubin, b.cubin_len))
        abort();
    kf_cache_blob_free(&got);
    char path[400];
    entry_path(path, sizeof path, key);
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    unsigned mode = data[0];
    unsigned char *e = malloc(size);
    if (!e) return 0;
    memcpy(e, data + 1, size - 1);
    lookup_entry(e, size - 1, mode);
    if (mode & STORE) store_and_reload(data + 1, size - 1);
    free(e);
    kf_cache_clear(false, NULL, NULL);
    return 0;
}
