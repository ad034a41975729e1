/* The parser's entry point, the first pass of a compilation (runtime/api_compile.c
 * runs it, then the passes of ir/passes.h). grammar/ builds the AST of
 * ir/ast.h and reports on its diagnostics list; it uses nothing else of
 * ir/ and nothing above it. */
#ifndef KF_PARSE_H
#define KF_PARSE_H

#include "../ir/ast.h"

/* Parses cx->src[0 .. cx->len) (cx->src[cx->len] must be '\0') into an AST
 * (KF_N_MODULE). Syntax errors go to cx->diags; returns NULL only if
 * nothing could be built. */
kf_node *kf_parse(kf_pass_ctx *cx);

#endif
