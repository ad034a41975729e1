#!/usr/bin/env bash
# check_symbols.sh HEADER ALLOWLIST SHARED_LIB|- OBJECT...
#
# The library's symbols, with nm (STYLE.md: every exported symbol is
# kf_<module>_...; one public header):
#  1. every global symbol the library's objects define starts with kf_,
#     except the names in ALLOWLIST (tests/symbols/unprefixed.txt, the ones
#     not renamed yet; the rename script empties it); a name in ALLOWLIST
#     that the objects no longer define is an error too, so the list only
#     shrinks;
#  2. every function the header declares with KF_API is defined;
#  3. with a SHARED_LIB (not "-"), its dynamic symbol table exports exactly
#     those functions: nothing internal is visible, nothing public is lost.
# Prints one line per problem and "symbols: ok (...)" when there are none.
set -uo pipefail
header=$1 allow=$2 shared=$3
shift 3
fail=0
bad() { echo "symbols: $*"; fail=1; }

# Global symbols defined by the objects (sanitizer bookkeeping aside).
nm -g --defined-only --format=posix "$@" 2>/dev/null | awk 'NF >= 2 && $1 !~ /:$/ {print $1}' |
    grep -vE '^(__odr_asan|__asan|__ubsan)|\.' | sort -u >"${TMPDIR:-/tmp}/kf_syms.$$"
defined="${TMPDIR:-/tmp}/kf_syms.$$"
trap 'rm -f "$defined"' EXIT
[ -s "$defined" ] || { echo "symbols: nm listed no symbols in $*"; exit 1; }

allowed=$(grep -vE '^\s*(#|$)' "$allow" | sort -u)
while read -r s; do
    [[ $s == kf_* ]] && continue
    grep -qxF "$s" <<<"$allowed" || bad "'$s' is global but lacks the kf_ prefix: name it kf_<module>_..., or make it static"
done <"$defined"
while read -r s; do
    [ -n "$s" ] || continue
    grep -qxF "$s" "$defined" || bad "'$s' is listed in $(basename "$allow") but no longer defined: delete the line"
done <<<"$allowed"

# KF_API functions of the header: the name before the first '(' of each declaration.
api=$(sed -n 's/^KF_API[^(]*[^A-Za-z0-9_]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' "$header" | sort -u)
napi=$(wc -l <<<"$api")
((napi > 50)) || bad "found only $napi KF_API declarations in $header"
while read -r f; do
    grep -qxF "$f" "$defined" || bad "'$f' is declared KF_API in $(basename "$header") but not defined"
done <<<"$api"

if [ "$shared" != - ]; then
    exported=$(nm -D --defined-only --format=posix "$shared" | awk '{print $1}' | grep -vE '^(_init|_fini|_edata|_end|__bss_start)$' | sort -u)
    while read -r s; do
        grep -qxF "$s" <<<"$api" || bad "$(basename "$shared") exports '$s', which is not KF_API in $(basename "$header")"
    done <<<"$exported"
    while read -r f; do
        grep -qxF "$f" <<<"$exported" || bad "$(basename "$shared") does not export the KF_API function '$f'"
    done <<<"$api"
fi
((fail)) && exit 1
echo "symbols: ok ($napi KF_API functions$([ "$shared" != - ] && echo ", exactly these exported by $(basename "$shared")"); $(grep -c . <<<"$allowed") unprefixed names still allowed)"
