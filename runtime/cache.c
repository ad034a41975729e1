/* The compiled-code cache: see cache.h for the contract.
 *
 * Disk entry (<dir>/<32 hex digits of the key>.kfc):
 *     8 x u64 header: magic "KFCACHE1", format version, key lo, key hi,
 *                     PTX bytes, cubin bytes, XXH3-64 of the payload,
 *                     XXH3-64 of the previous seven words
 *     payload:        PTX text, then the cubin
 * The file size must equal 64 + both lengths; anything else is truncated
 * or corrupt and is removed and rebuilt. Writes go to a unique temporary
 * file in the same directory and are renamed into place. */
#define _GNU_SOURCE   /* dl_iterate_phdr */
#include "cache.h"
#include "rt_impl.h"
#include "../emit/emit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#define FORMAT_VERSION 1u
static const char magic[8] = {'K', 'F', 'C', 'A', 'C', 'H', 'E', '1'};

/* ---- keys ------------------------------------------------------------------- */
static void hash_field(XXH3_state_t *s, const void *p, size_t n)
{
    uint64_t len = n;
    XXH3_128bits_update(s, &len, sizeof len);   /* length-prefixed: no ambiguity between fields */
    if (n) XXH3_128bits_update(s, p, n);
}

static void hash_str(XXH3_state_t *s, const char *str) { hash_field(s, str ? str : "", str ? strlen(str) : 0); }

kf_cache_key kf_cache_key_make(const kf_cache_inputs *in)
{
    XXH3_state_t s;
    XXH3_INITSTATE(&s);
    XXH3_128bits_reset(&s);
    uint32_t fmt = FORMAT_VERSION;
    int32_t nums[4] = {(int32_t)in->arch, in->nvrtc_version, in->driver_version, in->linker_version};
    hash_str(&s, KF_VERSION);
    hash_field(&s, &fmt, sizeof fmt);
    hash_str(&s, in->kind);
    hash_field(&s, in->text, in->text_len);
    hash_str(&s, in->options);
    hash_field(&s, nums, sizeof nums);
    XXH128_hash_t h = XXH3_128bits_digest(&s);
    return (kf_cache_key){h.low64, h.high64};
}

/* ---- the compiler's build identity -------------------------------------------- */
typedef struct {
    uintptr_t addr;      /* an address inside the object sought */
    char hex[2 * 64 + 1];
} build_probe;

/* Appends the NT_GNU_BUILD_ID note of a PT_NOTE segment, if it has one. */
static bool note_build_id(const unsigned char *p, size_t size, char *hex, size_t hexlen)
{
    size_t off = 0;
    while (off + sizeof(ElfW(Nhdr)) <= size) {
        const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(p + off);
        size_t name = (nh->n_namesz + 3) & ~(size_t)3, desc = (nh->n_descsz + 3) & ~(size_t)3;
        const unsigned char *d = p + off + sizeof *nh + name;
        if (off + sizeof *nh + name + desc > size) return false;
        if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(p + off + sizeof *nh, "GNU", 4) == 0 &&
            nh->n_descsz && 2 * nh->n_descsz < hexlen) {
            for (uint32_t i = 0; i < nh->n_descsz; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
            return true;
        }
        off += sizeof *nh + name + desc;
    }
    return false;
}

static int find_build_id(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    build_probe *bp = ctx;
    bool inside = false;
    for (int i = 0; i < info->dlpi_phnum && !inside; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        inside = ph->p_type == PT_LOAD && bp->addr >= lo && bp->addr - lo < ph->p_memsz;
    }
    if (!inside) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_NOTE &&
            note_build_id((const unsigned char *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz, bp->hex, sizeof bp->hex))
            break;
    }
    return 1;   /* found the object (with or without an ID): stop */
}

static char build_id[4 * (2 * 64 + 1)];
static pthread_once_t build_once = PTHREAD_ONCE_INIT;

static void build_id_read(void)
{
    enum { NPROBE = 4 };   /* front end, both emitters, this runtime (its JIT options) */
    uintptr_t probes[NPROBE] = {(uintptr_t)&kf_compile, (uintptr_t)&kf_ptx_emit, (uintptr_t)&kf_cuda_emit,
                                (uintptr_t)&kf_cache_key_make};
    char ids[NPROBE][2 * 64 + 1];
    for (int i = 0; i < NPROBE; i++) {
        build_probe bp = {probes[i], ""};
        dl_iterate_phdr(find_build_id, &bp);
        if (!bp.hex[0]) return;   /* unknown: leave "" */
        memcpy(ids[i], bp.hex, sizeof ids[i]);
    }
    size_t n = 0;
    for (int i = 0; i < NPROBE; i++) {
        bool seen = false;
        for (int j = 0; j < i; j++) seen = seen || strcmp(ids[i], ids[j]) == 0;
        if (!seen) n += (size_t)snprintf(build_id + n, sizeof build_id - n, "%s%s", n ? "+" : "", ids[i]);
    }
}

const char *kf_cache_build_id(void)
{
    pthread_once(&build_once, build_id_read);
    return build_id;
}

void kf_cache_blob_free(kf_cache_blob *b)
{
    free(b->ptx);
    free(b->cubin);
    *b = (kf_cache_blob){0};
}

/* ---- process counters and the memory map --------------------------------------- */
typedef struct {
    kf_cache_key key;
    kf_cache_blob blob;
} mem_entry;

static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static KF_VEC(mem_entry) mem;
static atomic_uint_fast64_t n_mem_hits, n_disk_hits, n_misses, n_stores, n_corrupt;

static bool blob_copy(kf_cache_blob *dst, const kf_cache_blob *src)
{
    *dst = (kf_cache_blob){0};
    dst->ptx = malloc(src->ptx_len + 1);
    dst->cubin = malloc(src->cubin_len ? src->cubin_len : 1);
    if (!dst->ptx || !dst->cubin) {
        kf_cache_blob_free(dst);
        return false;
    }
    if (src->ptx_len) memcpy(dst->ptx, src->ptx, src->ptx_len);
    dst->ptx[src->ptx_len] = 0;
    if (src->cubin_len) memcpy(dst->cubin, src->cubin, src->cubin_len);
    dst->ptx_len = src->ptx_len;
    dst->cubin_len = src->cubin_len;
    return true;
}

static bool mem_find(kf_cache_key key, kf_cache_blob *out)
{
    bool found = false;
    pthread_mutex_lock(&mem_lock);
    for (size_t i = 0; i < mem.len && !found; i++)
        if (mem.data[i].key.lo == key.lo && mem.data[i].key.hi == key.hi)
            found = blob_copy(out, &mem.data[i].blob);
    pthread_mutex_unlock(&mem_lock);
    return found;
}

static bool mem_put(kf_cache_key key, const kf_cache_blob *b)
{
    mem_entry e = {key, {0}};
    if (!blob_copy(&e.blob, b)) return false;
    bool ok = true;
    pthread_mutex_lock(&mem_lock);
    size_t i = 0;
    while (i < mem.len && !(mem.data[i].key.lo == key.lo && mem.data[i].key.hi == key.hi)) i++;
    if (i < mem.len) {
        kf_cache_blob_free(&mem.data[i].blob);
        mem.data[i] = e;
    } else if (!KF_VEC_PUSH(&mem, e)) {
        kf_cache_blob_free(&e.blob);
        ok = false;
    }
    pthread_mutex_unlock(&mem_lock);
    return ok;
}

static void mem_clear(void)
{
    pthread_mutex_lock(&mem_lock);
    for (size_t i = 0; i < mem.len; i++) kf_cache_blob_free(&mem.data[i].blob);
    KF_VEC_FREE(&mem);
    pthread_mutex_unlock(&mem_lock);
}

/* ---- the directory ---------------------------------------------------------------- */
bool kf_cache_dir(char *buf, size_t len)
{
    const char *d = getenv("KFORGE_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    int n;
    if (d && *d) n = snprintf(buf, len, "%s", d);
    else if (x && *x) n = snprintf(buf, len, "%s/kforge", x);
    else n = snprintf(buf, len, "%s/.cache/kforge", h && *h ? h : "/tmp");
    if (n >= 0 && (size_t)n < len) return true;
    if (len) buf[0] = 0;
    return false;
}

/* Why the directory cannot be used as given (kf_cache_dir said no). */
static void dir_too_long(char *out, size_t n)
{
    const char *d = getenv("KFORGE_CACHE_DIR");
    snprintf(out, n, "the cache directory %s is longer than the %d bytes a path may have; set KFORGE_CACHE_DIR "
             "to a shorter one", d && *d ? "from KFORGE_CACHE_DIR" : "from XDG_CACHE_HOME or HOME", KF_CACHE_DIR_MAX - 1);
}

bool kf_cache_disk_enabled(void)
{
    const char *c = getenv("KFORGE_CACHE");
    return !(c && strcmp(c, "0") == 0);
}

static void warn(char *w, size_t wlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void warn(char *w, size_t wlen, const char *fmt, ...)
{
    if (!w || !wlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w, wlen, fmt, ap);
    va_end(ap);
}

/* The directory is unusable: the disk half is skipped, with a warning. */
static void no_disk(char *w, size_t wlen)
{
    char why[300];
    dir_too_long(why, sizeof why);
    warn(w, wlen, "%s; the build goes on uncached", why);
}

static void entry_path(char *buf, size_t len, const char *dir, kf_cache_key key)
{
    snprintf(buf, len, "%s/%016llx%016llx.kfc", dir, (unsigned long long)key.hi, (unsigned long long)key.lo);
}

static bool mkdir_p(const char *dir)
{
    char tmp[KF_CACHE_DIR_MAX];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return false;
        *p = '/';
    }
    struct stat sb;
    if (mkdir(tmp, 0755) == 0) return true;
    if (errno != EEXIST) return false;
    if (stat(tmp, &sb) == 0 && S_ISDIR(sb.st_mode)) return true;
    errno = ENOTDIR;   /* a file where the directory should be */
    return false;
}

/* ---- entry encoding ----------------------------------------------------------------- */
static void header_make(uint64_t h[8], kf_cache_key key, const kf_cache_blob *b)
{
    memcpy(&h[0], magic, 8);
    h[1] = FORMAT_VERSION;
    h[2] = key.lo, h[3] = key.hi;
    h[4] = b->ptx_len, h[5] = b->cubin_len;
    XXH3_state_t s;
    XXH3_INITSTATE(&s);
    XXH3_64bits_reset(&s);
    XXH3_64bits_update(&s, b->ptx_len ? b->ptx : "", b->ptx_len);
    XXH3_64bits_update(&s, b->cubin_len ? b->cubin : "", b->cubin_len);
    h[6] = XXH3_64bits_digest(&s);
    h[7] = XXH3_64bits(h, 7 * sizeof h[0]);
}

/* Checks a whole entry in memory; NULL if good, else what is wrong. */
static const char *entry_check(const unsigned char *data, size_t size, const kf_cache_key *want,
                               kf_cache_blob *view)
{
    uint64_t h[8];
    if (size < sizeof h) return "truncated header";
    memcpy(h, data, sizeof h);
    if (memcmp(&h[0], magic, 8) != 0) return "not a kforge cache entry";
    if (h[7] != XXH3_64bits(h, 7 * sizeof h[0])) return "header checksum mismatch";
    if (h[1] != FORMAT_VERSION) return "entry format version differs";
    if (want && (h[2] != want->lo || h[3] != want->hi)) return "key differs from the file name";
    if (h[4] > size || h[5] > size || size - sizeof h != h[4] + h[5])
        return size - sizeof h < h[4] + h[5] ? "truncated payload" : "trailing bytes after the payload";
    if (XXH3_64bits(data + sizeof h, size - sizeof h) != h[6]) return "payload checksum mismatch";
    if (view) {
        view->ptx = (char *)(data + sizeof h);
        view->ptx_len = h[4];
        view->cubin = (void *)(data + sizeof h + h[4]);
        view->cubin_len = h[5];
    }
    return NULL;
}

/* Reads one entry: a regular file of at most KF_CACHE_ENTRY_MAX bytes (a
 * FIFO or /dev/zero at an entry's path is refused, not read). False with
 * the reason in e when that fails; *missing when there is no file. */
static bool read_entry(const char *path, unsigned char **data, size_t *size, kf_error *e, bool *missing)
{
    char *d;
    struct stat sb;
    /* Nothing there (or no directory to hold it) is a miss. Asked before the
     * read, not after a failed one: another process may create the entry in
     * between, and a good entry must never be taken for a broken one. Once
     * the path exists, writers only ever replace it whole (rename). */
    *missing = lstat(path, &sb) != 0;
    if (*missing) return false;
    if (kf_read_file_max(path, KF_CACHE_ENTRY_MAX, &d, size, e) != KF_OK) return false;
    *data = (unsigned char *)d;
    return true;
}

/* A bad entry is counted, removed and reported; the caller rebuilds it. */
static void drop_entry(const char *path, const char *why, char *w, size_t wlen)
{
    atomic_fetch_add(&n_corrupt, 1);
    bool removed = unlink(path) == 0;
    warn(w, wlen, "cache entry %s was unusable (%s); %s and rebuilt", path, why, removed ? "removed" : "left in place");
}

static kf_cache_result disk_find(const char *dir, kf_cache_key key, kf_cache_blob *out, char *w, size_t wlen)
{
    char path[KF_CACHE_DIR_MAX + 64];
    entry_path(path, sizeof path, dir, key);
    unsigned char *data;
    size_t size;
    kf_error e = {0};
    bool missing;
    if (!read_entry(path, &data, &size, &e, &missing)) {
        if (!missing) drop_entry(path, e.msg, w, wlen);
        return KF_CACHE_MISS;
    }
    kf_cache_blob view;
    const char *bad = entry_check(data, size, &key, &view);
    bool ok = !bad && blob_copy(out, &view);
    if (bad) drop_entry(path, bad, w, wlen);
    free(data);
    return ok ? KF_CACHE_HIT_DISK : KF_CACHE_MISS;
}

/* Writes the entry as one step (kf_write_file): readers in other
 * processes see no entry or a whole one; a failed write (read-only or full
 * disk, the directory a file) is a warning. */
static void disk_put(const char *dir, kf_cache_key key, const kf_cache_blob *b, char *w, size_t wlen)
{
    char path[KF_CACHE_DIR_MAX + 64];
    if (!mkdir_p(dir)) {
        warn(w, wlen, "cannot create the cache directory %s: %s; the build goes on uncached", dir, strerror(errno));
        return;
    }
    entry_path(path, sizeof path, dir, key);
    uint64_t h[8];
    header_make(h, key, b);
    size_t n = sizeof h + b->ptx_len + b->cubin_len;
    unsigned char *img = malloc(n);
    kf_error e = {0};
    if (!img) {
        warn(w, wlen, "out of memory writing the cache entry %s; the build goes on uncached", path);
        return;
    }
    memcpy(img, h, sizeof h);
    if (b->ptx_len) memcpy(img + sizeof h, b->ptx, b->ptx_len);
    if (b->cubin_len) memcpy(img + sizeof h + b->ptx_len, b->cubin, b->cubin_len);
    if (kf_write_file(path, img, n, &e) != KF_OK) warn(w, wlen, "%s; the build goes on uncached", e.msg);
    free(img);
}

/* ---- the public calls ------------------------------------------------------------------ */
kf_cache_result kf_cache_lookup(kf_cache_key key, kf_cache_blob *out, char *warning, size_t wlen)
{
    *out = (kf_cache_blob){0};
    if (warning && wlen) warning[0] = 0;
    if (mem_find(key, out)) {
        atomic_fetch_add(&n_mem_hits, 1);
        return KF_CACHE_HIT_MEMORY;
    }
    kf_cache_result r = KF_CACHE_MISS;
    char dir[KF_CACHE_DIR_MAX];
    if (kf_cache_disk_enabled() && !kf_cache_dir(dir, sizeof dir)) no_disk(warning, wlen);
    else if (kf_cache_disk_enabled()) r = disk_find(dir, key, out, warning, wlen);
    if (r == KF_CACHE_HIT_DISK) {
        atomic_fetch_add(&n_disk_hits, 1);
        mem_put(key, out);
    } else {
        atomic_fetch_add(&n_misses, 1);
    }
    return r;
}

kf_status kf_cache_store(kf_cache_key key, const kf_cache_blob *b, char *warning, size_t wlen)
{
    if (warning && wlen) warning[0] = 0;
    if (!mem_put(key, b)) return KF_ERR_NOMEM;
    atomic_fetch_add(&n_stores, 1);
    char dir[KF_CACHE_DIR_MAX];
    if (kf_cache_disk_enabled() && !kf_cache_dir(dir, sizeof dir)) no_disk(warning, wlen);
    else if (kf_cache_disk_enabled()) disk_put(dir, key, b, warning, wlen);
    return KF_OK;
}

static bool is_entry_name(const char *n)
{
    size_t len = strlen(n);
    return len == 36 && strcmp(n + 32, ".kfc") == 0;
}

/* Calls fn on every entry (and, with tmp, every stale temporary) in the directory. */
static kf_status scan(bool tmp, void (*fn)(const char *path, const char *name, void *ctx), void *ctx, kf_error *err)
{
    char dir[KF_CACHE_DIR_MAX];
    if (!kf_cache_dir(dir, sizeof dir)) {
        char why[200];
        dir_too_long(why, sizeof why);
        return kf_error_set(err, KF_ERR_USAGE, "%s", why);
    }
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) return KF_OK;
        return kf_error_set(err, KF_ERR_IO, "cannot read the cache directory %s: %s", dir, strerror(errno));
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!is_entry_name(de->d_name) && !(tmp && strncmp(de->d_name, ".tmp-", 5) == 0)) continue;
        char path[KF_CACHE_DIR_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        fn(path, de->d_name, ctx);
    }
    closedir(d);
    return KF_OK;
}

static void count_entry(const char *path, const char *name, void *ctx)
{
    (void)name;
    kf_cache_stats *s = ctx;
    struct stat sb;
    if (stat(path, &sb) != 0) return;
    s->disk_entries++;
    s->disk_bytes += (uint64_t)sb.st_size;
}

kf_status kf_cache_stats_get(kf_cache_stats *out, kf_error *err)
{
    KF_NEED(out, err, "out (where the statistics go)");
    *out = (kf_cache_stats){0};
    out->disk_enabled = kf_cache_disk_enabled();
    kf_cache_dir(out->dir, sizeof out->dir);
    pthread_mutex_lock(&mem_lock);
    out->mem_entries = mem.len;
    for (size_t i = 0; i < mem.len; i++) out->mem_bytes += mem.data[i].blob.ptx_len + mem.data[i].blob.cubin_len;
    pthread_mutex_unlock(&mem_lock);
    out->mem_hits = atomic_load(&n_mem_hits);
    out->disk_hits = atomic_load(&n_disk_hits);
    out->misses = atomic_load(&n_misses);
    out->stores = atomic_load(&n_stores);
    out->corrupt = atomic_load(&n_corrupt);
    return scan(false, count_entry, out, err);
}

static void remove_entry(const char *path, const char *name, void *ctx)
{
    if (unlink(path) == 0 && name[0] != '.') (*(uint64_t *)ctx)++;
}

kf_status kf_cache_clear(bool disk, uint64_t *removed, kf_error *err)
{
    uint64_t n = 0;
    mem_clear();
    kf_status st = disk ? scan(true, remove_entry, &n, err) : KF_OK;
    if (removed) *removed = n;
    return st;
}

typedef struct {
    bool remove;
    uint64_t good, bad;
    kf_buf names;
} verify_ctx;

static void verify_entry(const char *path, const char *name, void *ctx)
{
    verify_ctx *v = ctx;
    unsigned char *data = NULL;
    size_t size;
    kf_error e = {0};
    bool missing;
    kf_cache_key k;
    unsigned long long hi, lo;
    sscanf(name, "%16llx%16llx", &hi, &lo);
    k.hi = hi, k.lo = lo;
    const char *bad = read_entry(path, &data, &size, &e, &missing) ? entry_check(data, size, &k, NULL) : e.msg;
    free(data);
    if (missing) return;   /* vanished meanwhile */
    if (!bad) {
        v->good++;
        return;
    }
    v->bad++;
    kf_buf_printf(&v->names, "%s: %s\n", name, bad);
    if (v->remove) unlink(path);
}

kf_status kf_cache_verify(bool remove, uint64_t *good, uint64_t *bad, char **bad_names, kf_error *err)
{
    verify_ctx v = {remove, 0, 0, {0}};
    kf_status st = scan(false, verify_entry, &v, err);
    if (good) *good = v.good;
    if (bad) *bad = v.bad;
    if (bad_names) *bad_names = v.names.len ? kf_buf_take(&v.names) : NULL;
    kf_buf_free(&v.names);
    return st;
}
