#!/usr/bin/env bash
# check_layers.sh SOURCE_DIR: the folders include one another only along
# the pipeline (README.md, Layout; DESIGN.md section 1), so no cycle can
# hide in the build:
#
#   grammar -> ir -> emit -> runtime -> api (runtime/api_*.c) -> tools
#
# grammar/ builds ir's AST: of ir/ it includes ast.h, types.h and base.h
# only; ir/ includes nothing of grammar/ (the driver that runs the parser,
# then ir's passes, is runtime/api_compile.c). include/kforge.h, the public header,
# includes no kforge header, and python/ has no C. Every #include "..." of
# the library's folders is resolved against its file and checked. Prints
# one line per violation and "layers: ok (N includes)" when there are none.
set -uo pipefail
root=$(cd "${1:-.}" && pwd)
cd "$root" || exit 2
fail=0
n=0

# allowed FOLDER: the folders (and ir/ headers, as ir/NAME) it may include.
allowed() {
    case $1 in
    include) echo "" ;;
    ir) echo "ir include" ;;
    grammar) echo "grammar include ir/ast.h ir/types.h ir/base.h" ;;
    emit) echo "emit ir include" ;;
    runtime) echo "runtime emit ir include" ;;
    api) echo "api runtime emit ir grammar include" ;;
    esac
}

for dir in include ir grammar emit runtime api; do
    # the api layer: runtime/api_*.c (the public API's own code, above the rest of runtime/)
    src=$dir find_args=(-name '*.[chy]' -o -name '*.re')
    case $dir in
    runtime) find_args=('(' -name '*.[chy]' -o -name '*.re' ')' ! -name 'api_*') ;;
    api) src=runtime find_args=(-name 'api_*.[chy]') ;;
    esac
    ok=" $(allowed $dir) "
    while IFS= read -r f; do
        while IFS= read -r inc; do
            n=$((n + 1))
            target=$(realpath -m "$(dirname "$f")/$inc")
            rel=${target#"$root"/}
            [ "$dir" = grammar ] && [ "$inc" = parser.h ] && continue   # Lemon's, in the build tree
            top=${rel%%/*}
            if [[ $ok == *" $top "* || $ok == *" $rel "* ]]; then continue; fi
            echo "layers: $f includes \"$inc\" ($rel): $dir/ may include only: $(allowed $dir)"
            fail=1
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
    done < <(find "$src" "${find_args[@]}" | sort)
done
if grep -E '^[[:space:]]*#[[:space:]]*include' include/kforge.h | grep -vqE '<std(bool|def|int)\.h>'; then
    echo "layers: include/kforge.h includes more than <stdbool.h>, <stddef.h>, <stdint.h>"
    fail=1
fi
((fail)) && exit 1
echo "layers: ok ($n includes)"
