/* Finding and opening the CUDA libraries with dlopen (DESIGN.md section 2):
 * nothing links against libcuda or NVRTC, so the compiler half and the CPU
 * device run on machines without them, and a missing library is a clear
 * error from the call that needs it. */
#include "rt_impl.h"

#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef KF_CUDA_HOME
#define KF_CUDA_HOME "/usr/local/cuda"
#endif

static void note(char *why, size_t len, const char *what)
{
    size_t used = strlen(why);
    if (used + 3 < len) snprintf(why + used, len - used, "%s%s", used ? "; " : "", what);
}

static void *try_open(const char *path, char *why, size_t len)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        note(why, len, e ? e : path);
    }
    return h;
}

/* stem itself, then stem.<N> (highest version first) inside dir. */
static void *try_dir(const char *dir, const char *stem, char *why, size_t len)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s.[0-9]*", dir, stem) >= sizeof path) return NULL;
    path[strlen(path) - strlen(".[0-9]*")] = '\0';
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
    strcat(path, ".[0-9]*");
    glob_t g;
    if (glob(path, 0, NULL, &g) == 0) {
        for (size_t i = g.gl_pathc; i-- > 0 && !h;) h = try_open(g.gl_pathv[i], why, len);
        globfree(&g);
        return h;
    }
    char miss[4200];
    snprintf(miss, sizeof miss, "no %s in %s", stem, dir);
    note(why, len, miss);
    return NULL;
}

void *kf_rt_dlopen(const char *env_var, const char *stem, bool toolkit, char *why, size_t whylen)
{
    why[0] = 0;
    const char *forced = env_var ? getenv(env_var) : NULL;
    if (forced && *forced) return try_open(forced, why, whylen);
    void *h = NULL;
    if (toolkit) {
        const char *homes[3] = {getenv("CUDA_HOME"), "/usr/local/cuda", KF_CUDA_HOME};
        for (int i = 0; i < 3 && !h; i++) {
            if (!homes[i] || !*homes[i]) continue;
            char dir[4096];
            snprintf(dir, sizeof dir, "%s/lib64", homes[i]);
            h = try_dir(dir, stem, why, whylen);
        }
    }
    if (!h) h = try_open(stem, why, whylen);
    return h;
}

bool kf_rt_dlsym(void *lib, const char *sym, void **slot, const char *what, char *why, size_t whylen)
{
    *slot = dlsym(lib, sym);
    if (!*slot) snprintf(why, whylen, "the %s library lacks the symbol %s", what, sym);
    return *slot != NULL;
}
