/* Lists the .kf programs the PTX tests run over (the .kf files of kernels/,
 * kernels/features/ and tests/ptx_cases/), sorted, and compiles one
 * through kf_compile. Header-only, used by the ptxas and golden tests. */
#ifndef KF_PTX_KF_FILES_H
#define KF_PTX_KF_FILES_H

#include "../ir/module.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    char path[1024];
    char stem[128];
} kf_file_entry;

static int kf_file_cmp(const void *a, const void *b)
{
    return strcmp(((const kf_file_entry *)a)->path, ((const kf_file_entry *)b)->path);
}

/* Appends the .kf files of dir (relative to the source tree) to out; returns
 * the new count. */
static size_t kf_list_dir(const char *dir, kf_file_entry *out, size_t n, size_t max)
{
    char full[600];
    snprintf(full, sizeof full, "%s/%s", KF_SOURCE_DIR, dir);
    DIR *d = opendir(full);
    if (!d) return n;
    size_t first = n;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 3, ".kf") != 0) continue;
        snprintf(out[n].path, sizeof out[n].path, "%s/%s", full, e->d_name);
        snprintf(out[n].stem, sizeof out[n].stem, "%.*s", (int)(l - 3), e->d_name);
        n++;
    }
    closedir(d);
    qsort(out + first, n - first, sizeof *out, kf_file_cmp);
    return n;
}

/* Compiles the file; returns the module (NULL when unreadable) and the status
 * in *st. The display name is the file's base name. */
static kf_module *kf_compile_entry(const kf_file_entry *f, kf_status *st)
{
    char *src;
    size_t len;
    kf_error err = {0};
    if (kf_read_file(f->path, &src, &len, &err) != KF_OK) {
        *st = KF_ERR_IO;
        return NULL;
    }
    const char *base = strrchr(f->path, '/');
    kf_module *m = NULL;
    *st = kf_compile(base ? base + 1 : f->path, src, len, NULL, &m);
    free(src);
    return m;
}

/* kf_compile_entry for a test that needs the module (the includer has
 * cmocka.h): a file that does not compile fails the test, with its
 * diagnostics printed. */
static inline kf_module *kf_compile_entry_ok(const kf_file_entry *f)
{
    kf_status st;
    kf_module *m = kf_compile_entry(f, &st);
    if (st != KF_OK) {
        kf_buf o = {0};
        if (m) kf_diags_render(&o, &m->diags, m->source, m->source_len);
        print_message("%s does not compile:\n%s\n", f->path, o.data ? o.data : "");
        kf_buf_free(&o);
        kf_module_free(m);
        fail_msg("%s does not compile", f->path);
    }
    return m;
}

#endif
