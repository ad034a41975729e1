/* A stand-in libnccl.so.2 for tests on machines without GPUs (KF_LIBNCCL
 * points the runtime at it), over the mock driver's host memory: the NCCL
 * entry points runtime/nccl.h resolves. ncclCommInitAll makes one
 * communicator per listed device; collectives are queued between
 * ncclGroupStart and ncclGroupEnd and run at the end on the host (sums in
 * float, f16 converted both ways, all-gathers as byte copies), which is in
 * stream order because the mock driver runs every launch when it is made.
 * Unlike NCCL, which would hang, a group that does not hold one call per
 * rank of the same shape fails with ncclInvalidUsage. A call on a stream the
 * mock driver is capturing adds a node to that capture (mock_capture_other)
 * and runs nothing, as NCCL's work is captured. Every call is written
 * to a log (mock_nccl_log) so tests check the order and the streams.
 *
 * Fault injection: mock_nccl_fail(API, N) makes the Nth call of API from now
 * fail once with ncclSystemError ("mock nccl: injected fault" from
 * ncclGetLastError); $MOCKNCCL_FAIL=API[:N] does the same for a process. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OK = 0, SYSTEM_ERROR = 2, INVALID_ARGUMENT = 4, INVALID_USAGE = 5, F16 = 6, F32 = 7, U8 = 1 };

typedef struct ncclComm {
    int rank, n, dev;
} mock_comm;

typedef struct {
    int all_gather;
    const void *send;
    void *recv;
    size_t count;
    int type;
    mock_comm *comm;
} mock_op;

static mock_op ops[64];
static int nops, depth, live, inits;
static char log_text[8192];
static const char *last_error = "";

#define MOCK_NCCL_APIS(X) X(ncclCommInitAll) X(ncclCommDestroy) X(ncclGroupStart) X(ncclGroupEnd) X(ncclAllReduce) X(ncclAllGather)
enum {
#define X(n) API_##n,
    MOCK_NCCL_APIS(X)
#undef X
    API_COUNT
};
static const char *const api_names[] = {
#define X(n) #n,
    MOCK_NCCL_APIS(X)
#undef X
};
static int calls[API_COUNT], fail_at[API_COUNT];

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void note(const char *fmt, ...)
{
    size_t used = strlen(log_text);
    va_list ap;
    va_start(ap, fmt);
    if (used + 200 < sizeof log_text) vsnprintf(log_text + used, sizeof log_text - used, fmt, ap);
    va_end(ap);
}

int mock_nccl_fail(const char *api, int n)
{
    for (int i = 0; i < API_COUNT; i++)
        if (!strcmp(api_names[i], api)) {
            fail_at[i] = calls[i] + n;
            return 1;
        }
    return 0;
}

/* The calls so far ("GroupStart;AllReduce r0 n700 t7 s0x..;GroupEnd;"), cleared by reading. */
const char *mock_nccl_log(void)
{
    static char copy[sizeof log_text];
    memcpy(copy, log_text, sizeof copy);
    log_text[0] = 0;
    return copy;
}
int mock_nccl_live(void) { return live; }
int mock_nccl_inits(void) { return inits; }
int mock_nccl_depth(void) { return depth; }

static int fault(int api)
{
    static int env_done;
    const char *e = getenv("MOCKNCCL_FAIL");
    if (!env_done++ && e) {
        char name[64];
        int n = 1;
        if (sscanf(e, "%63[^:]:%d", name, &n) >= 1) mock_nccl_fail(name, n);
    }
    if (++calls[api] != fail_at[api]) return 0;
    fail_at[api] = 0;
    last_error = "mock nccl: injected fault";
    return 1;
}

#define FAULT(api)                                    \
    do {                                              \
        if (fault(API_##api)) return SYSTEM_ERROR;    \
    } while (0)

int ncclGetVersion(int *v)
{
    *v = 22803;
    return OK;
}

const char *ncclGetErrorString(int r)
{
    return r == OK ? "no error" : r == SYSTEM_ERROR ? "unhandled system error" : "invalid usage";
}

const char *ncclGetLastError(mock_comm *c)
{
    (void)c;
    return last_error;
}

int ncclCommInitAll(mock_comm **comms, int n, const int *devs)
{
    FAULT(ncclCommInitAll);
    if (n < 1) return INVALID_ARGUMENT;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (devs[i] == devs[j]) {
                last_error = "mock nccl: a device listed twice";
                return INVALID_USAGE;
            }
    for (int i = 0; i < n; i++) {
        comms[i] = malloc(sizeof *comms[i]);
        *comms[i] = (mock_comm){i, n, devs[i]};
        live++;
    }
    inits++;
    note("CommInitAll n%d;", n);
    return OK;
}

int ncclCommDestroy(mock_comm *c)
{
    free(c);
    live--;
    FAULT(ncclCommDestroy);
    return OK;
}

int ncclGroupStart(void)
{
    FAULT(ncclGroupStart);
    depth++;
    note("GroupStart;");
    return OK;
}

static float get(const void *p, int type, size_t i)
{
    if (type == F32) return ((const float *)p)[i];
    uint16_t h = ((const uint16_t *)p)[i];
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? INFINITY : ldexpf((float)(m | 1024), e - 25);
    return h >> 15 ? -v : v;
}

static void put(void *p, int type, size_t i, float v)
{
    if (type == F32) {
        ((float *)p)[i] = v;
        return;
    }
    uint16_t sign = v < 0 ? 0x8000 : 0;   /* round to nearest even, normal range (the tests' values) */
    float a = fabsf(v);
    int e;
    float fr = frexpf(a, &e);   /* a = fr * 2^e, fr in [0.5, 1) */
    uint16_t h = a == 0 ? 0 : (uint16_t)(((e + 14) << 10) + (uint16_t)nearbyintf(fr * 2048.0f) - 1024);
    ((uint16_t *)p)[i] = sign | h;
}

/* The group's calls: one per rank, one shape, run on the host. */
static int run_group(void)
{
    int n = nops ? ops[0].comm->n : 0, seen = 0;
    for (int i = 0; i < nops; i++) {
        if (ops[i].comm->n != n || ops[i].count != ops[0].count || ops[i].type != ops[0].type ||
            ops[i].all_gather != ops[0].all_gather || (seen >> ops[i].comm->rank & 1))
            return INVALID_USAGE;
        seen |= 1 << ops[i].comm->rank;
    }
    if (nops != n) return INVALID_USAGE;
    size_t cnt = ops[0].count;
    if (ops[0].all_gather) {
        for (int i = 0; i < n; i++)
            for (int r = 0; r < n; r++) memmove((char *)ops[i].recv + (size_t)ops[r].comm->rank * cnt, ops[r].send, cnt);
        return OK;
    }
    for (size_t j = 0; j < cnt; j++) {
        float acc = 0;
        for (int r = 0; r < n; r++) acc += get(ops[r].send, ops[0].type, j);
        for (int r = 0; r < n; r++) put(ops[r].recv, ops[0].type, j, acc);
    }
    return OK;
}

/* A failing end (injected) still ends the group and drops its calls. */
int ncclGroupEnd(void)
{
    note("GroupEnd;");
    if (depth <= 0) return INVALID_USAGE;
    if (fault(API_ncclGroupEnd)) {
        depth--;
        nops = 0;
        return SYSTEM_ERROR;
    }
    if (--depth) return OK;
    int r = nops ? run_group() : OK;
    nops = 0;
    if (r != OK) last_error = "mock nccl: a group needs one call per rank of one shape";
    return r;
}

/* The mock driver's mock_capture_other (the same library the runtime loaded). */
static int captured(void *stream)
{
    static int (*other)(void *);
    static int looked;
    if (!looked++) {
        const char *lib = getenv("KF_LIBCUDA");
        void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
        if (h) *(void **)&other = dlsym(h, "mock_capture_other");
    }
    return other && other(stream);
}

static int queue(mock_op op, void *stream)
{
    note("%s r%d n%zu t%d s%p;", op.all_gather ? "AllGather" : "AllReduce", op.comm->rank, op.count, op.type, stream);
    if (op.type != F16 && op.type != F32 && op.type != U8) return INVALID_ARGUMENT;
    if (captured(stream)) {   /* recorded into the stream's graph, not run */
        note("captured;");
        return OK;
    }
    if (!depth && op.comm->n > 1) {
        last_error = "mock nccl: several ranks from one thread need a group";
        return INVALID_USAGE;
    }
    if (nops == 64) return INVALID_USAGE;
    ops[nops++] = op;
    if (!depth) {
        int r = run_group();
        nops = 0;
        return r;
    }
    return OK;
}

int ncclAllReduce(const void *s, void *r, size_t count, int type, int op, mock_comm *c, void *stream)
{
    FAULT(ncclAllReduce);
    if (op != 0) return INVALID_ARGUMENT;
    return queue((mock_op){0, s, r, count, type, c}, stream);
}

int ncclAllGather(const void *s, void *r, size_t count, int type, mock_comm *c, void *stream)
{
    FAULT(ncclAllGather);
    return queue((mock_op){1, s, r, count, type, c}, stream);
}
