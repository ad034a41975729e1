/* The compiled-code cache (DESIGN.md section 2): a process-wide in-memory
 * map, safe under threads, in front of a disk cache of entries holding the
 * PTX and the driver-linked cubin of one kernel build, so a warm start
 * skips both NVRTC and the PTX JIT.
 *
 * Key: XXH3-128 over everything that changes the result (kf_cache_key_make).
 * Directory: $KFORGE_CACHE_DIR, else $XDG_CACHE_HOME/kforge, else
 * ~/.cache/kforge; KFORGE_CACHE=0 turns the disk half off (read at each
 * call). Entries are written to a temporary file and renamed into place,
 * so readers never see half an entry and two writers both succeed. Each
 * entry has a header and checksums and is read only if it is a regular file
 * of bounded size; a truncated or corrupt one, or anything else at an
 * entry's path (a FIFO, a device), is reported through a warning
 * out-parameter (never printed), removed, and treated as a miss so the
 * caller rebuilds it. A failing disk write (a read-only or full disk, the
 * directory being a file) is a warning too: the cache never fails a build. */
#ifndef KF_CACHE_H
#define KF_CACHE_H

#include "../ir/base.h"

typedef struct {
    uint64_t lo, hi;
} kf_cache_key;

/* The inputs that decide a build's output. */
typedef struct {
    const char *kind;        /* "kf-cuda", "kf-ptx" (emitted text), "kf-cuda-source",
                                "kf-ptx-source" (.kf source), "raw-cuda", "raw-ptx" */
    const char *text;        /* source or emitted text */
    size_t text_len;
    const char *options;     /* compiler/JIT options, "" if none */
    uint32_t arch;
    int nvrtc_version;       /* 0 when NVRTC is not involved */
    int driver_version;
    int linker_version;      /* nvJitLink's when it makes the cubin; 0: the driver's JIT */
} kf_cache_inputs;
/* Also hashes KF_VERSION and the entry format version. */
kf_cache_key kf_cache_key_make(const kf_cache_inputs *in);

/* The identity of the compiler code in this process: the GNU build IDs (hex)
 * of the executable or libraries that hold the front end and both emitters,
 * read once from the loaded program headers (no file I/O). "" when an object
 * carries no build ID. Keys over .kf source (rather than emitted text)
 * include it, so a rebuilt kforge never reuses code an older one emitted. */
const char *kf_cache_build_id(void);

/* A cached build: PTX text and the linked cubin (either may be empty). */
typedef struct {
    char *ptx;
    size_t ptx_len;
    void *cubin;
    size_t cubin_len;
} kf_cache_blob;
void kf_cache_blob_free(kf_cache_blob *b);

typedef enum { KF_CACHE_MISS, KF_CACHE_HIT_MEMORY, KF_CACHE_HIT_DISK } kf_cache_result;

/* Looks the key up in memory, then on disk (a disk hit is kept in memory).
 * On a hit *out holds heap copies (kf_cache_blob_free). A corrupt or
 * truncated disk entry is removed, reported in warning (may be NULL; ""
 * when nothing to report) and answered as a miss. I/O problems are misses
 * with a warning too: the cache never fails a build. */
kf_cache_result kf_cache_lookup(kf_cache_key key, kf_cache_blob *out, char *warning, size_t wlen);
/* Stores a build in memory and (unless disabled) on disk atomically. A
 * failed disk write is a warning, not an error. Returns KF_ERR_NOMEM only. */
kf_status kf_cache_store(kf_cache_key key, const kf_cache_blob *b, char *warning, size_t wlen);

/* KF_CACHE_DIR_MAX, kf_cache_stats and kf_cache_stats_get, kf_cache_clear,
 * kf_cache_verify and kf_cache_dir are public (include/kforge.h). */
/* Most bytes of one disk entry (a larger file there is refused, not read). */
#define KF_CACHE_ENTRY_MAX (UINT64_C(1) << 30)

bool kf_cache_disk_enabled(void);

#endif
