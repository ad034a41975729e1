/* The GPU-side subcommands `kforge devices` and `kforge cache` (DESIGN.md
 * section 4); `kforge bench` is tools/cmd_bench.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/cache.h"
#include "../runtime/device.h"
#include "../runtime/nvjitlink.h"
#include "../runtime/nvrtc.h"
#include "cmd_common.h"

/* ---- kforge devices ------------------------------------------------------------ */
static void version_str(int v, char *buf, size_t n)
{
    if (v) snprintf(buf, n, "%d.%d", v / 1000, (v % 1000) / 10);
    else snprintf(buf, n, "not available");
}

static const char devices_usage[] = "kforge devices   (the GPUs, their limits, the backends they allow)";

int kf_cmd_devices(int argc, char **argv)
{
    if (kf_cli_help(argc, argv, devices_usage)) return KF_EXIT_OK;
    if (argc > 0) return kf_cli_usage_error("devices", devices_usage, "unexpected argument '%s'", argv[0]);
    kf_error err = {0};
    int count = 0, drv = 0;
    char dv[32], nv[32];
    kf_status st = kf_cuda_device_count(&count, &drv, &err);
    version_str(drv, dv, sizeof dv);
    version_str(kf_nvrtc_version(), nv, sizeof nv);
    printf("backends: cpu (interpreter, always)%s\n", count > 0 ? ", cuda (CUDA-C via NVRTC), ptx (kforge PTX)" : "");
    printf("CUDA driver: %s   NVRTC: %s\n", dv, nv);
    int jit = kf_ptx_compiler();
    version_str(jit > 1 ? jit : 0, nv, sizeof nv);
    if (jit > 1) printf("PTX to machine code: nvJitLink %s\n", nv);
    else if (jit == 1) printf("PTX to machine code: nvJitLink (KFORGE_JIT), which does not load or cannot say its version\n");
    else printf("PTX to machine code: %s\n", jit == 0 ? "the driver's JIT" : "unknown (KFORGE_JIT must be driver or nvjitlink)");
    if (st != KF_OK) {
        fprintf(stderr, "kforge devices: %s\n", err.msg);
        return KF_EXIT_RUNTIME;
    }
    if (count == 0) {
        fprintf(stderr, "kforge devices: no CUDA GPU found; only --backend cpu is available\n");
        return KF_EXIT_RUNTIME;
    }
    for (int i = 0; i < count; i++) {
        kf_device *d;
        if (kf_device_open(KF_BACKEND_CUDA, i, &d, &err) != KF_OK) {
            fprintf(stderr, "kforge devices: GPU %d: %s\n", i, err.msg);
            return KF_EXIT_RUNTIME;
        }
        kf_device_props p;
        kf_device_props_get(d, &p);
        printf("GPU %d: %s, %u SMs, compute capability %d.%d (kforge arch sm_%u), %.1f GiB, L2 %.0f MiB, "
               "shared memory %u KiB per block (%u KiB opt-in)\n",
               i, p.name, p.sm_count, p.cc_major, p.cc_minor, p.arch, (double)p.total_mem / (1 << 30),
               (double)p.l2_bytes / (1 << 20), p.shared_per_block / 1024, p.shared_per_block_optin / 1024);
        kf_device_close(d);
    }
    return KF_EXIT_OK;
}

/* ---- kforge cache ------------------------------------------------------------------ */
static const char cache_usage_text[] = "kforge cache stats | clear | verify [--remove]   (the compiled-kernel cache)";

/* An unknown or malformed subcommand: the closest name and the usage. */
static int cache_usage(int argc, char **argv)
{
    static const char *const subs[] = {"stats", "clear", "verify"};
    if (argc < 1) return kf_cli_usage_error("cache", cache_usage_text, "expected stats, clear or verify");
    const char *near = kf_cli_suggest(argv[0], subs, 3);
    bool known = near && !strcmp(near, argv[0]);
    if (known) return kf_cli_usage_error("cache", cache_usage_text, "unexpected arguments after '%s'", argv[0]);
    if (near) return kf_cli_usage_error("cache", cache_usage_text, "unknown subcommand '%s' (did you mean '%s'?)", argv[0], near);
    return kf_cli_usage_error("cache", cache_usage_text, "unknown subcommand '%s'", argv[0]);
}

/* Prints a failed cache call; a misconfigured directory is a usage error. */
static int cache_error(const kf_error *err)
{
    fprintf(stderr, "kforge cache: error: %s\n", err->msg);
    return err->status == KF_ERR_USAGE ? KF_EXIT_USAGE : KF_EXIT_RUNTIME;
}

static int cache_stats(void)
{
    kf_cache_stats s;
    kf_error err = {0};
    if (kf_cache_stats_get(&s, &err) != KF_OK) return cache_error(&err);
    printf("directory: %s%s\n", s.dir, s.disk_enabled ? "" : " (disabled: KFORGE_CACHE=0)");
    printf("entries:   %llu (%.1f KiB)\n", (unsigned long long)s.disk_entries, (double)s.disk_bytes / 1024);
    return KF_EXIT_OK;
}

static int cache_verify(bool remove)
{
    uint64_t good, bad;
    char *names = NULL;
    kf_error err = {0};
    if (kf_cache_verify(remove, &good, &bad, &names, &err) != KF_OK) return cache_error(&err);
    if (names) fputs(names, stdout);
    free(names);
    printf("%llu good, %llu bad%s\n", (unsigned long long)good, (unsigned long long)bad,
           bad ? (remove ? " (removed)" : " (kforge cache verify --remove deletes them; they are rebuilt on use)") : "");
    return bad && !remove ? KF_EXIT_FAIL : KF_EXIT_OK;
}

int kf_cmd_cache(int argc, char **argv)
{
    if (kf_cli_help(argc, argv, cache_usage_text)) return KF_EXIT_OK;
    if (argc < 1) return cache_usage(argc, argv);
    if (!strcmp(argv[0], "stats") && argc == 1) return cache_stats();
    if (!strcmp(argv[0], "verify") && (argc == 1 || (argc == 2 && !strcmp(argv[1], "--remove"))))
        return cache_verify(argc == 2);
    if (!strcmp(argv[0], "clear") && argc == 1) {
        uint64_t n = 0;
        kf_error err = {0};
        char dir[KF_CACHE_DIR_MAX];
        kf_cache_dir(dir, sizeof dir);
        if (kf_cache_clear(true, &n, &err) != KF_OK) return cache_error(&err);
        printf("removed %llu entries from %s\n", (unsigned long long)n, dir);
        return KF_EXIT_OK;
    }
    return cache_usage(argc, argv);
}
