#!/usr/bin/env bash
# The whole GPU check of kforge in one call (DESIGN.md section 7).
#
#   tools/gpu_check.sh prepare [BUILD]   on the build machine, before the device call:
#                                        copies libcmocka.so.0 into BUILD/lib so the
#                                        carried test binaries run where CMocka is absent
#   tools/gpu_check.sh [run] [BUILD]     on the GPU machine (carry BUILD), from the repo root:
#       1. nvidia-smi and `kforge devices`
#       2. ctest, every label (unit, golden, ptxas, nvrtc, gpu) but difftest (and but
#          the install test, which needs a C toolchain, pytest, step 4c, and fold_gpu, 4d)
#       3. sass: the tensor cores in the machine code (issue 11): the ptxas test's
#          SASS checks (tensor.kf: HMMA, IMMA, LDSM, LDGSTS on sm_80/90; tc_gemv.kf:
#          HMMA/IMMA fed by LDG.E.128), read from step 2's log, or the test binary
#          run alone when step 2 is skipped; a SASS check that skips is a failure
#       4. `kforge test`: every golden case on every backend (cpu, cuda, ptx), the raw
#          kernels of kernels/raw/ on their GPU path among them; the summary also
#          counts the tensor cases (mma, ldmatrix, cp_async, gemm, tc_gemv:
#          $tensor_cases below) that passed on the GPU paths
#       4a. test_O0: the golden cases on the GPU paths at -O0 (the optimiser off;
#          step 4 builds at the default level), and the interpreter at -O1 bit
#          for bit against -O0 (--same-as-O0)
#       4b. raw: `kforge run` of kernels/raw/axpy.ptx and wmma_gemm.cu (twice: the
#          second from the cache), outputs checked
#       4c. python: the Python package's pytest (with PyTorch: tensors in place on
#          its stream), or test_torch.py alone where pytest is missing
#       4d. fold: tools/fold/run.sh, every operator and builtin on edge values,
#          the cuda and ptx paths against the interpreter at -O1 and -O0
#       4e. apifuzz: tools/apifuzz/compare.sh, GPU_CHECK_APIFUZZ_COUNT (default 200)
#          random sequences of public API calls on cpu, cuda and ptx, each GPU
#          backend's trace byte-identical to the cpu's (about a minute)
#       5. kforge-difftest: random programs on cpu, cuda and ptx, compared (failures
#          shrunk and saved under $OUT/difftest)
#       6. `kforge bench`: every library bench (kernels/bench, gemm and tc_gemv
#          included) on both paths, then tools/bench_torch.py, the PyTorch/cuBLAS
#          peer on the same shapes (if torch imports), both with --json (about 3
#          minutes together); the SM clock, power and the power-cap flag are
#          sampled meanwhile (nvidia-smi, every 100 ms: bench_clocks.csv) and
#          summarised in the summary's clocks line
#       7. compute-sanitizer --tool memcheck over the golden cases (both GPU paths)
#       8. kforge-decode (issue 10): --check against the C reference at the small
#          shape on cuda and ptx (f16 and q4k), cuda against ptx at the Llama-3-8B
#          shape (3 steps, f16 and q4k), and --bench at that shape (context 4096)
#          for f16 (with the PyTorch peer, --torch) and q4k in all modes (about
#          2 minutes; its tables close the summary)
#       9. racecheck: compute-sanitizer --tool racecheck over the tensor cases (the
#          shared-memory pipelines of gemm and the tensor features), cuda and ptx
#      10. variants: only with GPU_CHECK_VARIANTS=1, `kforge bench --variants` of
#          the tensor-core benches (gemm, tc_gemv: their -D knobs), ptx path
#   and ends with a summary: the steps, the kforge bench table, and both benches
#   joined by name (tools/bench_join.py: x copy of each, speedup over the peer).
#   Logs go to $OUT (the device tool's folder) when set, else to a temporary
#   directory (bench.json and bench_torch.json among them). BUILD defaults to ./build.
#
# Environment: GPU_CHECK_SKIP="sanitizer torch decode ..." skips steps by name
# (devices is never skipped; torch is the peer half of bench);
# GPU_CHECK_JOBS (default 8) is kforge test's -j in steps 4 and 4a;
# GPU_CHECK_STEP_TIMEOUT (seconds, default 240) bounds each step and
# GPU_CHECK_BUDGET (default 560) the whole run, so it fits one 10-minute
# device call; a step with no time left is reported as skipped.
# The difftest step: GPU_CHECK_DIFFTEST_COUNT programs (default 5000; 10000
# fits a call of its own: GPU_CHECK_SKIP="ctest sass test test_O0 raw python bench
# sanitizer decode racecheck"), bounded by GPU_CHECK_DIFFTEST_TIMEOUT (default 300 s);
# GPU_CHECK_DIFFTEST_AVOID names known bugs to steer around (kforge-difftest
# --avoid list; default none). GPU_CHECK_BENCH_BUDGET (ms, default 150) is
# the device time each bench row spends on timed passes (the number of passes
# adapts to the kernel's time). GPU_CHECK_BENCH="NAME|PATTERN ..." restricts
# the bench step (kforge bench names or shell patterns, and the peer to the
# same patterns), e.g. "gemm* tc_gemv*" for the tensor cores alone.
#
# Typical use from the device tool (one call):
#   locally:  tools/gpu_check.sh prepare build
#   device:   run(command="tools/gpu_check.sh run build", carry=["build"])
# The tensor cores alone (issue 11), in a call of their own:
#   run(command="GPU_CHECK_SKIP='difftest decode' GPU_CHECK_BENCH='gemm* tc_gemv*' tools/gpu_check.sh run build",
#       carry=["build"])
set -u

mode=run
if [ "${1:-}" = prepare ] || [ "${1:-}" = run ]; then mode=$1; shift; fi
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
case $build in /*) ;; *) build="$root/$build" ;; esac

if [ "$mode" = prepare ]; then
    lib=$(ls /usr/lib/x86_64-linux-gnu/libcmocka.so.0 /usr/lib/*/libcmocka.so.0 /usr/local/lib/libcmocka.so.0 2>/dev/null | head -1)
    [ -n "$lib" ] || { echo "gpu_check prepare: libcmocka.so.0 not found" >&2; exit 2; }
    [ -x "$build/kforge" ] || { echo "gpu_check prepare: $build/kforge missing: build first" >&2; exit 2; }
    mkdir -p "$build/lib"
    cp -L "$lib" "$build/lib/libcmocka.so.0"
    echo "prepared $build (libcmocka.so.0 in $build/lib); carry '${build#$root/}' in the device call"
    exit 0
fi

logs=${OUT:-}
[ -n "$logs" ] || logs=$(mktemp -d /tmp/gpu-check-XXXXXX)
mkdir -p "$logs"
export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KFORGE_CACHE_DIR=$(mktemp -d /tmp/kforge-cache-XXXXXX)
export KF_SOURCE_DIR="$root"
export PATH="$PATH:/usr/local/cuda/bin"
kforge="$build/kforge"
step_timeout=${GPU_CHECK_STEP_TIMEOUT:-240}
jobs=${GPU_CHECK_JOBS:-8}     # kforge test -j: 906 runs in 24 s at 8 against 163 s at 1 (H200, 2026-12-02)
bench_budget=${GPU_CHECK_BENCH_BUDGET:-150}   # ms of timed passes per bench row (kforge and torch)
budget=${GPU_CHECK_BUDGET:-560}
t_start=$(date +%s)
skip=" ${GPU_CHECK_SKIP:-} "
read -r -a bench_names <<<"${GPU_CHECK_BENCH:-}"   # no globbing: patterns go to kforge bench as they are
summary=()
# The tensor-core cases (issue 11): the mma, ldmatrix and cp_async features and
# the kernels built on them; racecheck runs over these, and the test step counts them.
tensor_cases=(kernels/cases/feature_mma*.case kernels/cases/feature_ldmatrix*.case
              kernels/cases/feature_cp_async*.case kernels/cases/gemm_*.case kernels/cases/tc_gemv_*.case)
tensor_re='(feature_(mma|ldmatrix|cp_async)|gemm_|tc_gemv_)[^ ]*'

# A FAIL of a step whose runs either passed or were cut short by run_step
# because the run's budget ran out (not the step's own timeout) is noted as
# "cut": it did not fail, it did not finish. One run that failed on its own
# keeps the FAIL.
note() {
    local verdict=$2 detail=$3
    if [ "$verdict" = FAIL ] && [ "${step_cut:-0}" = 1 ] && [ "${step_failed:-0}" = 0 ]; then
        verdict=cut; detail="stopped by GPU_CHECK_BUDGET=${budget}s after ${step_limit}s; $detail"
    fi
    step_cut=0 step_failed=0
    summary+=("$(printf '%-12s %-6s %s' "$1" "$verdict" "$detail")")
}
# clock_summary CSV: "VERDICT|DETAIL" over nvidia-smi samples (MHz, W, reasons)
# taken while the GPU was busy (above 150 W: a kernel or the flush running; an
# idle H200 draws 75-120 W, at 1980 MHz for a while after work).
clock_summary() {
    local busy n
    busy=$(awk -F', *' '$2 + 0 > 150' "$1" 2>/dev/null)
    n=$(printf '%s\n' "$busy" | grep -c .)
    if [ "$n" = 0 ]; then echo "skip|no busy samples from nvidia-smi"; return; fi
    printf '%s\n' "$busy" | awk -F', *' -v n="$n" '
        { c = c " " ($1 + 0); if ($2 + 0 > pmax) pmax = $2 + 0
          if (index("4567cdefCDEF", substr($3, length($3), 1))) cap++ }   # bit 2: SW power cap
        END { printf "%d %d %.0f\n", 100 * cap / n, n, pmax }' | {
        read -r cap cnt pmax
        local sorted
        sorted=$(printf '%s\n' "$busy" | awk -F', *' '{ print $1 + 0 }' | sort -n)
        echo "ok|SM MHz median $(sed -n "$(( (cnt + 1) / 2 ))p" <<<"$sorted"), min $(head -1 <<<"$sorted") over $cnt busy samples (100 ms apart); SW power cap (0x4) in ${cap}% of them; peak ${pmax} W"
    }
}
left() { echo $((budget - ($(date +%s) - t_start))); }
skipped() {
    case $skip in *" $1 "*) note "$1" skip "GPU_CHECK_SKIP"; return 0 ;; esac
    [ "$(left)" -gt 20 ] || { note "$1" skip "no time left in GPU_CHECK_BUDGET=${budget}s"; return 0; }
    return 1
}
# run_step LOG CMD...: runs bounded by the step timeout and the budget left,
# output to LOG (a timeout is noted in it) and the tail to stdout.
run_step() {
    local log=$1; shift
    local limit=$step_timeout l
    l=$(( $(left) - 10 ))
    [ "$l" -lt "$limit" ] && limit=$l
    local t0=$(date +%s)
    timeout "$limit" "$@" >"$log" 2>&1
    local rc=$?
    step_limit=$limit
    if [ $rc = 124 ] && [ "$limit" -lt "$step_timeout" ]; then step_cut=1; elif [ $rc != 0 ]; then step_failed=1; fi
    [ $rc = 124 ] && echo "gpu_check: timed out after ${limit}s" >>"$log"
    tail -n 25 "$log"
    echo "(step took $(( $(date +%s) - t0 ))s, rc $rc)"
    return $rc
}

echo "== devices"
{ nvidia-smi -L 2>&1; "$kforge" devices 2>&1; } >"$logs/devices.txt"
rc=$?
cat "$logs/devices.txt"
note devices "$([ $rc = 0 ] && echo ok || echo FAIL)" "$(grep -m1 -E "^GPU 0|kforge devices:" "$logs/devices.txt" | cut -c1-90)"

if ! skipped ctest; then
    echo "== ctest (all labels but difftest: step 4 runs the random programs on the GPU)"
    if command -v ctest >/dev/null && [ -e "$build/tests/CTestTestfile.cmake" ]; then
        run_step "$logs/ctest.log" bash -c 'cd "$1" && ctest -V --timeout 300 -LE difftest -E "install_consumers|python_pytest|fold_gpu"' _ "$build"
        rc=$?
        line=$(grep -E 'tests passed|tests failed' "$logs/ctest.log" | tail -1)
    else
        : >"$logs/ctest.log"
        rc=0; n=0; bad=0
        for t in "$build"/tests/test_*; do
            [ -x "$t" ] || continue
            n=$((n + 1))
            echo "--- $t" >>"$logs/ctest.log"
            (cd "$build/tests" && timeout 300 "$t") >>"$logs/ctest.log" 2>&1 || { bad=$((bad + 1)); rc=1; echo "FAILED: $t" >>"$logs/ctest.log"; }
        done
        line="$((n - bad)) of $n test programs passed (no ctest or CTestTestfile here: ran the binaries)"
        tail -n 25 "$logs/ctest.log"
    fi
    gpu_skips=$(grep -c 'skipped: ' "$logs/ctest.log")
    note ctest "$([ $rc = 0 ] && echo ok || echo FAIL)" "$line; 'skipped:' lines: $gpu_skips"
fi

if ! skipped sass; then
    echo "== sass (the tensor cores in the machine code: the ptxas test's SASS checks)"
    sass_log="$logs/ctest.log"
    if ! grep -q 'test_tensor_cores_in_sass' "$sass_log" 2>/dev/null; then
        sass_log="$logs/sass.log"
        run_step "$sass_log" bash -c 'cd "$1/tests" && ./test_ptxas_kernels' _ "$build"
    fi
    verdict=ok
    detail=""
    for t in test_tensor_cores_in_sass test_tc_gemv_is_tensor_cores_fed_by_16_byte_loads; do
        if grep -qE "\[ +OK +\] $t\$" "$sass_log"; then
            detail+="$t ok; "
        else   # failed, or skipped (no cuobjdump): the check did not hold here
            verdict=FAIL
            detail+="$t $(grep -oE "\[ *(SKIPPED|FAILED|ERROR) *\] $t" "$sass_log" | head -1 | grep -oE 'SKIPPED|FAILED|ERROR' || echo 'not run'); "
        fi
    done
    grep -E "SASS has no|skipped: no cuobjdump|uses local memory" "$sass_log" | head -5
    note sass "$verdict" "${detail%; }"
fi

if ! skipped test; then
    echo "== kforge test (every case, every backend)"
    run_step "$logs/test.log" "$kforge" test -j "$jobs"
    rc=$?
    tc_pass=$(grep -cE "^PASS $tensor_re \[(cuda|ptx)\]" "$logs/test.log")
    tc_fail=$(grep -cE "^FAIL $tensor_re \[(cuda|ptx)\]" "$logs/test.log")
    note test "$([ $rc = 0 ] && echo ok || echo FAIL)" "$(tail -n 1 "$logs/test.log"); skipped backends: $(grep -c '^skipped:' "$logs/test.log"); tensor cases on cuda/ptx: $tc_pass passed, $tc_fail failed"
fi

if ! skipped test_O0; then
    echo "== kforge test at -O0 on the GPU paths, and cpu -O1 bit for bit against -O0"
    run_step "$logs/test_O0.log" bash -c '"$1" test -j "$2" -O0 --backend cuda --backend ptx && "$1" test -j "$2" --backend cpu --same-as-O0' _ "$kforge" "$jobs"
    rc=$?
    note test_O0 "$([ $rc = 0 ] && echo ok || echo FAIL)" "$(grep -E '^[0-9]+ passed' "$logs/test_O0.log" | tr '\n' ' ')"
fi

if ! skipped raw; then
    echo "== raw CUDA-C and PTX from the command line (kernels/raw/, README's commands)"
    run_step "$logs/raw.log" bash -c '
        set -e
        "$1" run kernels/raw/axpy.ptx -k raw_axpy --block 256 a=2 "x=iota(1000)" "y=zeros(1000)" n=1000 --time
        "$1" run kernels/raw/wmma_gemm.cu -k wmma_gemm --block 32 --grid 1,1 "a=iota(256)" "b=zeros(256)" "c=iota(256)" m=16 n=16 k=16
        "$1" run kernels/raw/wmma_gemm.cu -k wmma_gemm --block 32 --grid 1,1 "a=iota(256)" "b=zeros(256)" "c=iota(256)" m=16 n=16 k=16 --time
        "$1" cache stats' _ "$kforge"
    rc=$?
    grep -q '^y: &mut \[f32\], 1000 elements = \[0, 2, 4, 6, 8, 10, 12, 14, \.\.\.\]$' "$logs/raw.log" || rc=1
    [ "$(grep -c '^c: &mut \[f32\], 256 elements = \[0, 0, 0, 0, 0, 0, 0, 0, \.\.\.\]$' "$logs/raw.log")" = 2 ] || rc=1
    note raw "$([ $rc = 0 ] && echo ok || echo FAIL)" "$(grep -c '^time:' "$logs/raw.log") timed runs; $(grep -m1 '^entries:' "$logs/raw.log")"
fi

if ! skipped apifuzz; then
    echo "== kforge-apifuzz: random sequences of API calls, cuda and ptx against cpu seed by seed"
    run_step "$logs/apifuzz.log" "$root/tools/apifuzz/compare.sh" "$build/kforge-apifuzz" \
        "${GPU_CHECK_APIFUZZ_COUNT:-200}" "$logs/apifuzz"
    rc=$?
    note apifuzz "$([ $rc = 0 ] && echo ok || echo FAIL)" "$(grep -E '^(cuda|ptx) against cpu' "$logs/apifuzz.log" | tr '\n' ' ')"
fi

if ! skipped python; then
    echo "== the Python package: pytest (CPU tests and PyTorch interop) on the GPU machine"
    if [ -e "$build/libkforge.so" ]; then
        run_step "$logs/python.log" bash -c '
            if "$4" -c "import numpy, pytest" 2>/dev/null; then
                KF_REQUIRE_PYTHON=1 "$1/tests/python/run_pytest.sh" "$2/libkforge.so" "$1" -v
            else
                echo "no pytest here: the PyTorch tests run without it"
                cd "$1/python" && KFORGE_LIBRARY="$2/libkforge.so" PYTHONPATH="$1/python" "$4" tests/test_torch.py
            fi' _ "$root" "$build" - python3
        rc=$?
        note python "$([ $rc = 0 ] && echo ok || echo FAIL)" "$(grep -E 'passed|failed' "$logs/python.log" | tail -1 | cut -c1-90)"
    else
        note python skip "$build/libkforge.so missing: configure with -DBUILD_SHARED_LIBS=ON (tools/setup.sh does)"
    fi
fi

if ! skipped fold; then
    echo "== the fold differential: every operator on edge values, cuda and ptx against the cpu (-O1, -O0)"
    run_step "$logs/fold.log" env FOLD_JOBS="$(nproc)" "$root/tools/fold/run.sh" "$kforge" cuda ptx
    rc=$?
    note fold "$([ $rc = 0 ] && echo ok || echo FAIL)" "$(tail -1 "$logs/fold.log" | cut -c1-90)"
fi

if ! skipped difftest; then
    echo "== kforge-difftest (random programs: cpu vs cuda vs ptx)"
    n=${GPU_CHECK_DIFFTEST_COUNT:-5000}
    avoid=${GPU_CHECK_DIFFTEST_AVOID:-}
    saved_timeout=$step_timeout
    step_timeout=${GPU_CHECK_DIFFTEST_TIMEOUT:-300}
    run_step "$logs/difftest.log" "$build/kforge-difftest" --seed "${GPU_CHECK_DIFFTEST_SEED:-1}" --count "$n" \
        -j "$(nproc)" --timeout 200 --max-saves 10 --shrink-time 90 --save "$logs/difftest" ${avoid:+--avoid "$avoid"}
    rc=$?
    step_timeout=$saved_timeout
    note difftest "$([ $rc = 0 ] && echo ok || echo FAIL)" "$(grep -m1 '^difftest:' "$logs/difftest.log")"
fi

if ! skipped bench; then
    echo "== kforge bench (kernels/bench/*.bench${GPU_CHECK_BENCH:+: $GPU_CHECK_BENCH}, both GPU paths)"
    # The SM clock and the power-cap flag sampled while the benches run: the
    # rows within a point of a target move with them from call to call.
    smi_pid=
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi --query-gpu=clocks.sm,power.draw,clocks_event_reasons.active --format=csv,noheader,nounits \
            -lms 100 >"$logs/bench_clocks.csv" 2>/dev/null &
        smi_pid=$!
    fi
    run_step "$logs/bench.txt" "$kforge" bench --budget "$bench_budget" --json="$logs/bench.json" "${bench_names[@]}"
    rc=$?
    if [ -n "$smi_pid" ]; then
        kill "$smi_pid" 2>/dev/null
        wait "$smi_pid" 2>/dev/null
        clk=$(clock_summary "$logs/bench_clocks.csv")
        note clocks "${clk%%|*}" "${clk#*|}"
    fi
    met=$(grep -E '^[^ ]+ +(cuda|ptx) ' "$logs/bench.txt" | grep -c ' met (')
    missed=$(grep -cE 'MISSED|SPILLS' "$logs/bench.txt")
    # kforge bench exits 1 when it ran but missed a target, 3 when it failed
    note bench "$([ $rc = 0 ] && echo ok || { [ $rc = 1 ] && echo MISSED || echo FAIL; })" "targets: $met rows met, $missed MISSED; $(grep -m1 '^device:' "$logs/bench.txt" | cut -c9-80)"
    # The PyTorch peer in the same call, on the same shapes, timed the same way.
    if skipped torch; then
        :
    elif python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
        echo "== PyTorch peer (tools/bench_torch.py)"
        run_step "$logs/bench_torch.txt" env PYTHONUNBUFFERED=1 python3 "$root/tools/bench_torch.py" --budget "$bench_budget" \
            --only "${GPU_CHECK_BENCH:-*}" --json "$logs/bench_torch.json"
        rc=$?
        note torch "$([ $rc = 0 ] && echo ok || echo FAIL)" "$(grep -m1 '^device:' "$logs/bench_torch.txt" | cut -c9-90); $(grep -c ' ERROR: ' "$logs/bench_torch.txt") peer errors"
    else
        note torch skip "torch with CUDA not importable"
    fi
fi

if ! skipped sanitizer; then
    echo "== compute-sanitizer memcheck over the golden cases"
    if command -v compute-sanitizer >/dev/null; then
        # (the GPU paths only: the interpreter's runs under the sanitizer took a cold machine past the step's 240 s)
        run_step "$logs/sanitizer.log" compute-sanitizer --tool memcheck --error-exitcode 9 "$kforge" test \
            --backend cuda --backend ptx
        rc=$?
        errs=$(grep -E 'ERROR SUMMARY' "$logs/sanitizer.log" | tail -1)
        note sanitizer "$([ $rc = 0 ] && echo ok || echo FAIL)" "${errs:-no summary (rc $rc)}; $(grep -E '^[0-9]+ passed' "$logs/sanitizer.log" | tail -1)"
    else
        note sanitizer skip "compute-sanitizer not found"
    fi
fi

if ! skipped decode; then
    echo "== kforge-decode: the decode step checked and timed (issue 10)"
    decode="$build/kforge-decode"
    dfail=0
    dmissed=0
    dskip=0
    # decode_run NAME ARGS...: one run, its log kept; a failure counts (a
    # bench that ran but missed a target exits 1: counted apart).
    decode_run() {
        local name=$1 rc; shift
        if [ "$(left)" -le 20 ]; then echo "-- skipped (no time left in GPU_CHECK_BUDGET): kforge-decode $*"; dskip=$((dskip + 1)); return; fi
        echo "-- kforge-decode $*"
        run_step "$logs/decode_$name.log" "$decode" "$@"
        rc=$?
        case $rc:$name in 0:*) ;; 1:bench_*) dmissed=$((dmissed + 1)) ;; *) dfail=$((dfail + 1)) ;; esac
    }
    for b in cuda ptx; do
        for w in f16 q4k; do decode_run "small_${b}_$w" --small --backend "$b" --weights "$w" --steps 4 --check; done
    done
    for w in f16 q4k; do decode_run "cross_$w" --weights "$w" --steps 3 --check=cross; done
    decode_run bench_f16 --bench --torch --json "$logs/decode_bench_f16.json"
    decode_run bench_q4k --weights q4k --bench --json "$logs/decode_bench_q4k.json"
    passed=$(cat "$logs"/decode_small_*.log "$logs"/decode_cross_*.log 2>/dev/null | grep -c '^check .*, 0 failed$')
    f16=$(grep -E '^graph +[0-9]' "$logs/decode_bench_f16.log" 2>/dev/null | awk '{print $4}')
    q4k=$(grep -E '^graph +[0-9]' "$logs/decode_bench_q4k.log" 2>/dev/null | awk '{print $4}')
    note decode "$([ $dfail != 0 ] && echo FAIL || { [ $dmissed != 0 ] && echo MISSED || echo ok; })" \
        "checks passed $passed of 6; graph mode x floor: f16 ${f16:-?}, q4k ${q4k:-?}; $dmissed bench(es) missed a target; $dskip run(s) skipped"
fi

if ! skipped racecheck; then
    echo "== compute-sanitizer racecheck over the tensor cases (cuda, ptx)"
    if command -v compute-sanitizer >/dev/null; then
        verdict=ok
        detail=""
        for be in cuda ptx; do
            run_step "$logs/racecheck_$be.log" compute-sanitizer --tool racecheck --error-exitcode 9 \
                "$kforge" test --backend "$be" "${tensor_cases[@]}"
            [ $? = 0 ] || verdict=FAIL
            sum=$(grep -oE 'RACECHECK SUMMARY: .*' "$logs/racecheck_$be.log" | tail -1)
            detail+="$be: ${sum:-no racecheck summary}, $(grep -E '^[0-9]+ passed' "$logs/racecheck_$be.log" | tail -1); "
        done
        note racecheck "$verdict" "${detail%; }"
    else
        note racecheck skip "compute-sanitizer not found"
    fi
fi

if [ "${GPU_CHECK_VARIANTS:-0}" != 1 ]; then
    note variants skip "opt-in: GPU_CHECK_VARIANTS=1"
elif ! skipped variants; then
    echo "== kforge bench --variants: the tensor-core kernels' -D knobs (gemm, tc_gemv), ptx path"
    run_step "$logs/variants.txt" "$kforge" bench --variants --backend ptx --budget "$bench_budget" 'gemm*' 'tc_gemv*'
    rc=$?
    note variants "$([ $rc = 3 ] && echo FAIL || echo ok)" "$(grep -c '^best ' "$logs/variants.txt") benches swept; the best of each in $logs/variants.txt"
fi

{
    echo
    echo "== gpu_check summary (logs in $logs; $(( $(date +%s) - t_start ))s)"
    printf '%s\n' "${summary[@]}"
    if [ -f "$logs/bench.txt" ]; then echo; echo "-- kforge bench"; grep -vE '^kforge bench: warning' "$logs/bench.txt"; fi
    if [ -f "$logs/bench.json" ] && [ -f "$logs/bench_torch.json" ]; then
        echo; python3 "$root/tools/bench_join.py" "$logs/bench.json" "$logs/bench_torch.json" | tee "$logs/bench_join.txt"
    elif [ -f "$logs/bench_torch.txt" ]; then
        echo; echo "-- torch peer"; cat "$logs/bench_torch.txt"
    fi
    if [ -f "$logs/variants.txt" ]; then echo; echo "-- the best variant of each tensor-core bench"; grep '^best ' "$logs/variants.txt"; fi
    for w in f16 q4k; do
        [ -f "$logs/decode_bench_$w.log" ] || continue
        echo; echo "-- kforge-decode --bench ($w)"; grep -vE '^kforge-decode: warning' "$logs/decode_bench_$w.log"
    done
} | tee "$logs/summary.txt"
rm -rf "$KFORGE_CACHE_DIR"
printf '%s\n' "${summary[@]}" | grep -q ' FAIL ' && exit 1
exit 0
