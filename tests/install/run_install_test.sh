#!/usr/bin/env bash
# run_install_test.sh BUILD SOURCE C_COMPILER CXX_COMPILER FLAGS [--subdir]
#
# `cmake --install BUILD` into a temporary prefix, then what a user builds
# against it: README.md's "Use it from C" program with find_package(kforge)
# (README's CMakeLists) and with pkg-config (README's commands, run as
# written but for the prefix), tests/api_header.cpp as a C++17 consumer
# (tests/install/cxx), and the installed kforge command line. Each program
# compiles a kernel from a string, runs it on the CPU interpreter and
# checks the result. --subdir also builds README's program in a project
# that add_subdirectory()s the checkout. FLAGS go to every compile and link
# (the sanitizer build's). Prints one line per step and "install: ok".
set -uo pipefail
build=$1 src=$2 cc=$3 cxx=$4 flags=$5 subdir=${6:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/kf_install_XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "install: FAIL: $*"; [ -f "$work/log" ] && tail -n 30 "$work/log"; exit 1; }
step() { echo "install: $*"; }

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/log" 2>&1 || fail "cmake --install $build"
config=$(find "$prefix" -name kforgeConfig.cmake | head -1)
[ -n "$config" ] || fail "no kforgeConfig.cmake under $prefix"
libdir=$(dirname "$(dirname "$(dirname "$config")")")
for f in "$prefix/bin/kforge" "$prefix/include/kforge.h" "$libdir/pkgconfig/kforge.pc" \
         "$(dirname "$config")/kforgeConfigVersion.cmake" "$(dirname "$config")/kforgeTargets.cmake"; do
    [ -e "$f" ] || fail "$f was not installed"
done
[ -e "$libdir/libkforge.a" ] || [ -e "$libdir/libkforge.so" ] || fail "no libkforge.a or libkforge.so in $libdir"
[ -z "$(find "$prefix/include" -type f ! -name kforge.h)" ] || fail "headers other than kforge.h were installed"
step "installed $(cd "$prefix" && find . -type f -o -type l | sort | tr '\n' ' ')"

# README.md's "Use it from C" blocks: the program, the CMakeLists, the pkg-config commands.
awk '/^## Use it from C$/{on=1; next} /^## /{on=0} on' "$src/README.md" >"$work/section"
block() { awk -v lang="$1" '$0 == "```" lang {on=1; next} /^```/{if (on) exit} on' "$work/section"; }
mkdir -p "$work/c" "$work/pc" "$work/bin"
block c >"$work/c/axpy.c"
block cmake >"$work/c/CMakeLists.txt"
block sh | sed "s|/opt/kforge/lib/pkgconfig|$libdir/pkgconfig|g; s|/opt/kforge|$prefix|g" >"$work/pc/build.sh"
for f in c/axpy.c c/CMakeLists.txt pc/build.sh; do [ -s "$work/$f" ] || fail "README.md's Use it from C has no block for $f"; done
cp "$work/c/axpy.c" "$work/pc/axpy.c"

cmake_flags=(-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$cc"
             -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags"
             -DCMAKE_EXE_LINKER_FLAGS="$flags")
run_ok() {   # run_ok NAME PROGRAM: runs it, wants "ok" in its output
    "$2" >"$work/out" 2>&1 || { cat "$work/out" >"$work/log"; fail "$1 exited $?"; }
    grep -q ": ok" "$work/out" || { cat "$work/out" >"$work/log"; fail "$1 did not print ok"; }
    step "$1: $(head -1 "$work/out")"
}

{ cmake -S "$work/c" -B "$work/c/out" "${cmake_flags[@]}" && cmake --build "$work/c/out"; } >"$work/log" 2>&1 ||
    fail "README's C program with find_package(kforge)"
run_ok "C, find_package" "$work/c/out/axpy"

# pkg-config, with README's commands; `cc` is the build's compiler with FLAGS.
printf '#!/bin/sh\nexec %s %s "$@"\n' "$cc" "$flags" >"$work/bin/cc"
chmod +x "$work/bin/cc"
(cd "$work/pc" && PATH="$work/bin:$PATH" bash -e build.sh) >"$work/log" 2>&1 || fail "README's pkg-config commands"
run_ok "C, pkg-config" "$work/pc/axpy"

{ cmake -S "$src/tests/install/cxx" -B "$work/cxx" "${cmake_flags[@]}" -DKF_API_HEADER_CPP="$src/tests/api_header.cpp" &&
  cmake --build "$work/cxx"; } >"$work/log" 2>&1 || fail "the C++17 consumer (tests/install/cxx)"
run_ok "C++17, find_package" "$work/cxx/consumer"

"$prefix/bin/kforge" check "$src/kernels/saxpy.kf" >"$work/log" 2>&1 || fail "the installed kforge"
step "bin/kforge: $(cat "$work/log")"

if [ "$subdir" = --subdir ]; then
    { cmake -S "$src/tests/install/subdir" -B "$work/sub" "${cmake_flags[@]}" -DKF_CHECKOUT="$src" \
            -DKF_EXAMPLE="$work/c/axpy.c" && cmake --build "$work/sub" -j "${JOBS:-2}"; } >"$work/log" 2>&1 ||
        fail "add_subdirectory() of the checkout (tests/install/subdir)"
    run_ok "C, add_subdirectory" "$work/sub/axpy"
fi
echo "install: ok"
