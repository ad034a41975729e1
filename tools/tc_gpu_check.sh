#!/usr/bin/env bash
# tools/tc_gpu_check.sh [BUILD]: the tensor cores (issue 11: mma, ldmatrix,
# cp_async, kernels/gemm.kf) on a GPU, in one call:
#
#  1. the tensor golden cases (feature_mma*, feature_ldmatrix, feature_cp_async*,
#     gemm_*) on cpu, cuda and ptx: the hardware's fragment layouts against the
#     interpreter's and the whole-matrix reference;
#  2. the ptxas test (SASS of tensor.kf: HMMA, IMMA, LDSM, LDGSTS on sm_80/90);
#  3. compute-sanitizer memcheck and racecheck over those cases (cuda, ptx);
#  4. kforge bench of kernels/bench/gemm.bench, then the cuBLAS peer
#     (tools/bench_torch.py --only 'gemm*') and the two joined by name
#     (tools/bench_join.py); the sweep of the gemm knobs if time is left
#     (TC_CHECK_VARIANTS=1).
# Run from the repo root on the GPU machine after `tools/gpu_check.sh prepare`,
# carrying BUILD (default build):
#   run(command="tools/tc_gpu_check.sh build", carry=["build"])
# Logs go to $OUT when set (the device tool's folder), else a temporary directory.
set -u
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
case $build in /*) ;; *) build="$root/$build" ;; esac
export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KF_SOURCE_DIR="$root"
export PATH="$PATH:/usr/local/cuda/bin"
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
kforge="$build/kforge"
status=0
cases=$(ls kernels/cases/feature_mma*.case kernels/cases/feature_ldmatrix.case kernels/cases/feature_cp_async*.case \
           kernels/cases/gemm_*.case)

echo "== tensor golden cases, every backend"
"$kforge" test $cases > "$out/test.log" 2>&1 || status=1
grep -E '^(PASS|FAIL|skipped)' "$out/test.log" | grep -v '\[cpu\]'; tail -1 "$out/test.log"

echo "== SASS of tensor.kf (ptxas test)"
"$build/tests/test_ptxas_kernels" > "$out/ptxas.log" 2>&1 || status=1
grep -E 'tensor|PASSED|FAILED' "$out/ptxas.log"

sanitizer=/usr/local/cuda/bin/compute-sanitizer
if [ -x "$sanitizer" ]; then
    for tool in memcheck racecheck; do
        for be in cuda ptx; do
            echo "== compute-sanitizer --tool $tool, $be"
            "$sanitizer" --tool "$tool" --error-exitcode 9 "$kforge" test --backend "$be" $cases \
                > "$out/sanitizer_${tool}_${be}.log" 2>&1 || status=1
            grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed,' "$out/sanitizer_${tool}_${be}.log" | tail -2
        done
    done
else
    echo "== compute-sanitizer: not found, skipped"
fi

echo "== kforge bench kernels/bench/gemm.bench"
"$kforge" bench kernels/bench/gemm.bench --json="$out/bench.json" > "$out/bench.log" 2>&1 || status=1
cat "$out/bench.log"
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    echo "== cuBLAS peer (tools/bench_torch.py --only 'gemm*')"
    python3 tools/bench_torch.py --only 'gemm*' --json "$out/bench_torch.json" > "$out/bench_torch.log" 2>&1 || status=1
    cat "$out/bench_torch.log"
    python3 tools/bench_join.py "$out/bench.json" "$out/bench_torch.json" 2>&1 || true
fi
if [ "${TC_CHECK_VARIANTS:-0}" = 1 ]; then
    echo "== gemm knob sweep (kforge bench --variants)"
    "$kforge" bench --variants kernels/bench/gemm.bench > "$out/variants.log" 2>&1 || status=1
    cat "$out/variants.log"
fi
echo "logs in $out; exit $status"
exit $status
