#!/usr/bin/env bash
# tools/setup.sh: set up kforge on a fresh Debian/Ubuntu machine and build it.
#
#   tools/setup.sh            install missing packages (when run as root),
#                             configure build/ (Release, -Werror, the shared
#                             libkforge.so that Python loads) and build
#   tools/setup.sh --deps     only install missing packages
#
# Packages: re2c and lemon (the grammar is generated at build time), CMocka
# and xxHash (tests, cache keys), pkg-config, cmake, gcc, make, and clang-14
# with its sanitizer and libFuzzer runtimes (libclang-rt-14-dev; the fuzz
# stage, tools/fuzz.sh), g++ (the C++ users of kforge.h), python3-numpy and
# python3-pytest (the Python package's tests). Nothing is installed when everything is present;
# without root, missing packages are listed with the command that installs
# them. JOBS sets the build
# parallelism (default: the number of CPUs, at most 8).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(re2c lemon libcmocka-dev libxxhash-dev pkg-config cmake gcc g++ make clang-14 libclang-rt-14-dev
          python3-numpy python3-pytest)

install_missing() {
    command -v dpkg-query >/dev/null 2>&1 || return 0   # not Debian: trust the environment
    local missing=()
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    ((${#missing[@]} == 0)) && return 0
    if [ "$(id -u)" = 0 ]; then
        echo "setup: installing ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
    else
        echo "setup: missing packages: ${missing[*]}" >&2
        echo "setup: run as root, or: sudo apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
}

install_missing
[ "${1:-}" = "--deps" ] && exit 0

jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
((jobs > 8)) && jobs=8
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DKF_WERROR=ON -DBUILD_SHARED_LIBS=ON >/dev/null
cmake --build build -j "$jobs"
