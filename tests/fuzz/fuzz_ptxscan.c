/* libFuzzer target for the PTX scanners of emit/ptx_hazards.h (ptx_hazard,
 * ptx_merged_lanes): the cuda device runs ptx_merged_lanes on NVRTC's PTX of
 * every CUDA-C build, and a raw kernel's inline asm puts any text its author
 * likes into that PTX. Any byte string (cut at its first NUL) is scanned
 * without a crash or sanitizer report; a finding is "line N: ..." with N a
 * line of the input, cut to the buffer it is given; and the same input
 * gives the same answer with a buffer too small for it.
 *
 * Built by -DKF_FUZZ=ON (tests/fuzz/CMakeLists.txt); seeds (NVRTC's PTX of
 * seed 3503 program 1280 before the CUDA-C writer's fix, a masked load, a
 * hazard of each kind) in tests/fuzz/corpus/fuzz_ptxscan. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_hazards.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The answer of scan for text: NULL, or buf holding "line N: ..." with N a
 * line of text (1 .. its newlines + 1). */
static const char *check(const char *(*scan)(const char *, char *, size_t), const char *text, char *buf, size_t cap)
{
    const char *r = scan(text, buf, cap);
    if (!r) return NULL;
    if (r != buf || strlen(buf) >= cap) abort();
    unsigned long lines = 1;
    for (const char *p = text; *p; p++) lines += *p == '\n';
    if (cap > 16) {
        char *end;
        if (strncmp(buf, "line ", 5) != 0) abort();
        unsigned long n = strtoul(buf + 5, &end, 10);
        if (n < 1 || n > lines || (*end != ':' && *end)) abort();
    }
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    char big[320], small[12];
    const char *(*scans[2])(const char *, char *, size_t) = {ptx_hazard, ptx_merged_lanes};
    for (int s = 0; s < 2; s++) {
        const char *a = check(scans[s], text, big, sizeof big);
        const char *b = check(scans[s], text, small, sizeof small);
        if (!a != !b || (a && strncmp(big, small, sizeof small - 1) != 0)) abort();
    }
    free(text);
    return 0;
}
