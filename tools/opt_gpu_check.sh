#!/usr/bin/env bash
# tools/opt_gpu_check.sh [BUILD]: the IR optimiser (ir/opt.c) on a GPU, in one call.
#
#  1. every golden case on every backend at the default level (-O1) and at -O0,
#     and the CPU interpreter at both levels bit for bit (--same-as-O0);
#  2. the cold build time (no kforge cache, no driver JIT cache: NVRTC + JIT on
#     the cuda path, the PTX JIT on the ptx path) of the decode kernels' cases at
#     -O0 and -O1, with `kforge bench`'s device times of its own kernels.
# Run from the repo root on the GPU machine after `tools/gpu_check.sh prepare`,
# carrying BUILD (default build):
#   run(command="tools/opt_gpu_check.sh build", carry=["build"])
# Logs go to $OUT when set (the device tool's folder), else a temporary directory.
set -u
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
case $build in /*) ;; *) build="$root/$build" ;; esac
export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${OUT:-$(mktemp -d)}
kforge="$build/kforge"
status=0

echo "== golden cases, default level (-O1), every backend"
"$kforge" test --same-as-O0 kernels/cases > "$out/test_O1.log" 2>&1 || status=1
tail -1 "$out/test_O1.log"; grep '^FAIL' "$out/test_O1.log"
echo "== golden cases at -O0, GPU backends"
"$kforge" test -O0 --backend cuda --backend ptx kernels/cases > "$out/test_O0.log" 2>&1 || status=1
tail -1 "$out/test_O0.log"; grep '^FAIL' "$out/test_O0.log"

echo "== cold builds of the decode kernels' cases (seconds, whole run: JIT-bound)"
cases=$(ls kernels/cases/{gemv,q4k,q8,rope,sdpa}_*.case 2>/dev/null)
for be in ptx cuda; do
    for lvl in -O0 -O1; do
        t0=$(date +%s.%N)
        KFORGE_CACHE=0 CUDA_CACHE_DISABLE=1 "$kforge" test --backend "$be" "$lvl" $cases > "$out/cold_${be}${lvl}.log" 2>&1 || status=1
        t1=$(date +%s.%N)
        printf "%-5s %s %8.2f s  %s\n" "$be" "$lvl" "$(echo "$t1 - $t0" | bc -l)" "$(tail -1 "$out/cold_${be}${lvl}.log")"
    done
done

echo "== kforge bench (default level)"
"$kforge" bench > "$out/bench.log" 2>&1 || status=1
cat "$out/bench.log"
echo "logs in $out; exit $status"
exit $status
