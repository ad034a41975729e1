/* Type tables and helpers (types.h). */
#include "types.h"

#include <stdio.h>
#include <string.h>

const char *const kf_scalar_names[KF_S_COUNT] = {
    [KF_S_NONE] = "none",
#define X(e, n, b, c) [e] = n,
    KF_SCALARS(X)
#undef X
};
const uint8_t kf_scalar_bytes[KF_S_COUNT] = {
#define X(e, n, b, c) [e] = b,
    KF_SCALARS(X)
#undef X
};
const char kf_scalar_class[KF_S_COUNT] = {
    [KF_S_NONE] = '-',
#define X(e, n, b, c) [e] = c,
    KF_SCALARS(X)
#undef X
};

bool kf_type_eq(kf_type a, kf_type b)
{
    if (a.kind != b.kind) return false;
    switch (a.kind) {
    case KF_TK_VOID: return true;
    case KF_TK_SCALAR:
    case KF_TK_VECTOR:
    case KF_TK_TYPE: return a.scalar == b.scalar && a.lanes == b.lanes;
    case KF_TK_BUFFER: return a.scalar == b.scalar && a.lanes == b.lanes && a.flags == b.flags;
    case KF_TK_ARRAY: return a.scalar == b.scalar && a.lanes == b.lanes && a.len == b.len && a.flags == b.flags;
    }
    return false;
}

static void elem_str(kf_type t, char *buf, size_t size)
{
    if (t.lanes > 1)
        snprintf(buf, size, "%sx%u", kf_scalar_names[t.scalar], t.lanes);
    else
        snprintf(buf, size, "%s", kf_scalar_names[t.scalar]);
}

const char *kf_type_str(kf_type t, char *buf, size_t size)
{
    char e[32];
    elem_str(t, e, sizeof e);
    switch (t.kind) {
    case KF_TK_VOID: snprintf(buf, size, "void"); break;
    case KF_TK_BUFFER: snprintf(buf, size, "&%s[%s]", (t.flags & KF_TF_MUT) ? "mut " : "", e); break;
    case KF_TK_ARRAY:
        if (t.flags & KF_TF_DYN) snprintf(buf, size, "shared %s[]", e);
        else snprintf(buf, size, "%s%s[%u]", (t.flags & KF_TF_SHARED) ? "shared " : "", e, t.len);
        break;
    case KF_TK_TYPE: snprintf(buf, size, "type %s", e); break;
    default: snprintf(buf, size, "%s", e); break;
    }
    return buf;
}

kf_type kf_type_from_name(const char *name, size_t len)
{
    for (int s = KF_S_BOOL; s <= KF_S_F64; s++) {
        size_t n = strlen(kf_scalar_names[s]);
        if (len < n || memcmp(name, kf_scalar_names[s], n) != 0) continue;
        if (len == n) return kf_type_scalar((kf_scalar)s);
        if (name[n] != 'x' || s == KF_S_BOOL) continue;
        unsigned lanes = 0;
        for (size_t i = n + 1; i < len; i++) {
            if (name[i] < '0' || name[i] > '9' || lanes > 16) return kf_type_void();
            lanes = lanes * 10 + (unsigned)(name[i] - '0');
        }
        if (len - n - 1 > 2 || (len - n - 1 == 2 && name[n + 1] == '0')) continue;
        if (lanes != 2 && lanes != 4 && lanes != 8 && lanes != 16) continue;
        if (lanes * kf_scalar_bytes[s] > 16) continue;
        return kf_type_vector((kf_scalar)s, lanes);
    }
    return kf_type_void();
}
