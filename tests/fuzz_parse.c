/* libFuzzer target for the front end: any byte string through kf_parse must
 * return a module or diagnostics, never crash, hang, leak or read out of
 * bounds. Every diagnostic must point inside the input.
 *
 * Not built by CMake (it needs clang's fuzzer runtime). Build and run from
 * the repository root after a normal build (for build/gen/lexer.c, parser.c):
 *
 *   clang-14 -g -O1 -fsanitize=fuzzer,address,undefined -Iir -Igrammar -Ibuild/gen \
 *       tests/fuzz_parse.c build/gen/lexer.c build/gen/parser.c ir/ast.c ir/base.c ir/types.c \
 *       -lm -o build/fuzz_parse
 *   mkdir -p build/fuzz_corpus && ./build/fuzz_parse -max_total_time=120 -max_len=4096 build/fuzz_corpus
 *
 * (Add kernels/*.kf as seeds: ./build/fuzz_parse build/fuzz_corpus kernels/.)
 *
 * With -DKF_FUZZ_COMPILE each input also goes through kf_compile (parse, sema,
 * lowering); link every ir/*.c instead of the three files above:
 *
 *   clang-14 -g -O1 -fsanitize=fuzzer,address,undefined -DKF_FUZZ_COMPILE -Iir -Igrammar  *       -Ibuild/gen tests/fuzz_parse.c build/gen/lexer.c build/gen/parser.c ir/[a-z]*.c  *       -lm -o build/fuzz_compile */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../grammar/parse.h"
#include "../ir/passes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *src = malloc(size + 1);
    if (!src) return 0;
    memcpy(src, data, size);
    src[size] = 0;
    kf_arena arena;
    kf_arena_init(&arena);
    kf_diags diags = {0};
    kf_pass_ctx cx = {&arena, &diags, "fuzz.kf", src, size};
    kf_node *m = kf_parse(&cx);
    if (!m) abort();
    uint32_t lines = 1;
    for (size_t i = 0; i < size; i++) lines += data[i] == '\n';
    for (size_t i = 0; i < diags.items.len; i++) {
        kf_loc l = diags.items.data[i].loc;
        if (l.line < 1 || l.line > lines || l.col < 1 || l.col > size + 1) abort();
    }
    if (!diags.nerrors) {
        kf_buf dump = {0};
        kf_ast_dump(&dump, m, 0);
        kf_buf_free(&dump);
    }
    kf_buf out = {0};
    kf_diags_render(&out, &diags, src, size);
    kf_buf_free(&out);
    kf_diags_free(&diags);
    kf_arena_free(&arena);
    free(src);
#ifdef KF_FUZZ_COMPILE
    kf_module *mod = NULL;
    kf_compile("fuzz.kf", (const char *)data, size, NULL, &mod);
    kf_module_free(mod);
#endif
    return 0;
}
