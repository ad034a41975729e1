#!/usr/bin/env bash
# The fold-versus-run-time differential: every operator and builtin on edge
# values, each case computed five to nine ways (untyped literals, typed lets,
# module consts, consts over consts, vars, run-time loads, @unroll forms; see
# gen.py), checked against ref.py, an independent model of LANGUAGE.md's
# scalar semantics. The random differential tester cannot see a front-end
# bug (its reference, the interpreter, shares sema and lowering with the GPU
# paths); this can.
#
#   tools/fold/run.sh KFORGE cpu [--emit]     the cpu interpreter against the model
#                                             at -O1 and -O0, the must-refuse
#                                             programs, special.py's probes;
#                                             --emit: every kernel's PTX through
#                                             ptxas and its CUDA-C through NVRTC
#   tools/fold/run.sh KFORGE cuda ptx         each GPU back end against the cpu's
#                                             outputs at -O1 and -O0 (and the
#                                             probes); "skipped: no GPU" without one
#
# Then tree/gen.py: random expression trees (untyped constants in every
# context, @unroll, consts and -D, generic builtins, casts, vectors) against
# tree/model.py, 1,500 statements a seed (seeds 1-4 on the cpu, 1 on a GPU
# path), -O1 and -O0.
#
# Environment: FOLD_FULL=1 the 17k-case set (default 3.8k), FOLD_JOBS (2),
# FOLD_TREE_SEEDS (the tree seeds), FOLD_KEEP=1 keeps the work folder.
# Prints PASS/FAIL lines and a total; exits 1 on any problem, 77 when skipped.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kf=$(readlink -f "${1:?usage: run.sh KFORGE cpu|cuda|ptx... [--emit]}")
shift
backends=() emit=0
for a in "$@"; do
    case $a in
    cpu | cuda | ptx) backends+=("$a") ;;
    --emit) emit=1 ;;
    *) echo "run.sh: unknown argument '$a' (want cpu, cuda, ptx or --emit)" >&2; exit 2 ;;
    esac
done
[ ${#backends[@]} -gt 0 ] || { echo "run.sh: name the back ends: cpu, cuda, ptx" >&2; exit 2; }
[ -x "$kf" ] || { echo "FAIL setup: no kforge binary at $kf"; exit 1; }
py=
for p in ${KF_PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1; then py=$p; break; fi
done
if [ -z "$py" ]; then
    echo "skipped: no python3 (apt-get install python3; tools/setup.sh does)"
    [ "${KF_REQUIRE_PYTHON:-0}" = 1 ] && exit 1
    exit 77
fi
gpu=0
for b in "${backends[@]}"; do [ "$b" != cpu ] && gpu=1; done
if [ $gpu = 1 ] && ! "$kf" devices >/dev/null 2>&1; then
    echo "skipped: no GPU ($("$kf" devices 2>&1 >/dev/null | head -1 | cut -c1-120))"
    exit 77
fi
export PYTHONDONTWRITEBYTECODE=1
jobs=${FOLD_JOBS:-2}
work=$(mktemp -d "${TMPDIR:-/tmp}/kf-fold.XXXXXX")
[ "${FOLD_KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
export FOLD_OUT=$work/kernels
start=$(date +%s)
fail=0
step() {   # step NAME CMD...: runs CMD, prints its problems and its last line
    local name=$1 log
    shift
    log=$work/$name.log
    if "$@" >"$log" 2>&1; then
        echo "PASS $name: $(tail -1 "$log")"
    else
        fail=$((fail + 1))
        echo "FAIL $name: $(tail -1 "$log")"
        grep -E '^(MISMATCH|FORMDIFF|REJECT|ERROR|FAIL|ACCEPTED|FALSE-REJECT|RUN-ERROR|SHRUNK)' "$log" | head -20 | sed 's/^/  /'
    fi
}
"$py" "$here/gen.py" "$FOLD_OUT" ${FOLD_FULL:+--full} >"$work/gen.log" 2>&1 || {
    echo "FAIL gen: $(tail -3 "$work/gen.log")"
    exit 1
}
echo "kernels: $(cat "$work/gen.log")"
for opt in -O1 -O0; do
    # the cpu's outputs are what the GPU back ends are compared with, so they run first
    step "cpu$opt" "$py" "$here/check.py" run --kforge "$kf" --backend cpu --opt $opt --save "$work/cpu$opt" --jobs "$jobs" --ref --forms
    for b in "${backends[@]}"; do
        if [ "$b" = cpu ]; then
            step "special-cpu$opt" "$py" "$here/special.py" --kforge "$kf" --backend cpu --opt $opt
            continue
        fi
        step "run-$b$opt" "$py" "$here/check.py" run --kforge "$kf" --backend "$b" --opt $opt --save "$work/$b$opt" --jobs "$jobs"
        step "$b$opt-vs-cpu" "$py" "$here/check.py" cmp "$work/cpu$opt" "$work/$b$opt" --label "$b$opt"
        step "special-$b$opt" "$py" "$here/special.py" --kforge "$kf" --backend "$b" --opt $opt --no-reject --vs-cpu
    done
done
case " ${backends[*]} " in *" cpu "*) step rejects "$py" "$here/check.py" rejects --kforge "$kf" ;; esac
# random expression trees against tree/model.py (each back end alone: the model is the reference)
trees=()
for b in "${backends[@]}"; do
    for sd in ${FOLD_TREE_SEEDS:-$([ "$b" = cpu ] && echo "1 2 3 4" || echo 1)}; do
        name=tree-$b-seed$sd
        trees+=("$name")
        { "$py" "$here/tree/gen.py" --kforge "$kf" --backend "$b" --seed "$sd" --count 1500 --quiet; echo $? >"$work/$name.rc"; } \
            >"$work/$name.out" 2>&1 &
    done
done
wait
for name in "${trees[@]}"; do
    # shellcheck disable=SC2016  # expanded by sh
    step "$name" sh -c 'cat "$1"; exit "$(cat "$2")"' _ "$work/$name.out" "$work/$name.rc"
done
if [ $emit = 1 ]; then
    # without a GPU: kforge's PTX through ptxas, its CUDA-C through NVRTC (a raw .cu's PTX)
    emit_one() {
        local kf=$1 f=$2 opt=$3 n
        n=$(basename "$f" .kf)$opt
        "$kf" emit --target ptx --verify "$opt" -o "$f.$n.ptx" "$f" >/dev/null 2>"$f.$n.err" || { echo "FAIL ptxas $n: $(head -3 "$f.$n.err")"; return; }
        "$kf" emit --target cuda "$opt" -o "$f.$n.cu" "$f" 2>"$f.$n.err" || { echo "FAIL emit cuda $n: $(head -3 "$f.$n.err")"; return; }
        "$kf" emit --target ptx -o /dev/null "$f.$n.cu" 2>"$f.$n.err" || { echo "FAIL nvrtc $n: $(head -3 "$f.$n.err")"; return; }
        echo "PASS $n"
    }
    export -f emit_one
    # shellcheck disable=SC2016  # the arguments expand in the child bash
    printf "%s\n" "$FOLD_OUT"/*.kf | sed 's/$/ -O1/; p; s/ -O1$/ -O0/' |
        xargs -P "$jobs" -L 1 bash -c 'emit_one "$0" "$1" "$2"' "$kf" >"$work/emit.log" 2>&1
    n=$(grep -c '^FAIL' "$work/emit.log")
    if [ "$n" = 0 ]; then
        echo "PASS emit: $(grep -c '^PASS' "$work/emit.log") kernel builds through ptxas and NVRTC"
    else
        fail=$((fail + 1))
        echo "FAIL emit: $n of $(wc -l <"$work/emit.log") kernel builds"
        grep '^FAIL' "$work/emit.log" | head -10 | sed 's/^/  /'
    fi
fi
echo "fold: ${backends[*]}: $fail failed steps ($(($(date +%s) - start)) s)"
[ $fail = 0 ]
