#!/usr/bin/env bash
# GPU tuning sweep of the decode kernels' -D knobs at the issue-8 shapes, in
# one device call (run from the repository root on the GPU machine, with the
# build folder carried):
#
#   tools/sweep_decode.sh [BUILD] [FILTER] [kforge bench options...]
#       e.g. tools/sweep_decode.sh build gemv
#            tools/sweep_decode.sh build sdpa_decode_b4 --budget 100
#            tools/sweep_decode.sh build misses
#
# FILTER `misses` runs, in one call, every variant of the issue-8 targets
# not yet met on 2026-12-01 (gemv f16 at 0.896 of 0.90; the three sdpa
# shapes) and the sdpa launches timed alone (sdpa_split_only,
# sdpa_combine_only at B1 L8192): 33 rows, about 2-3 minutes (each one
# compiles its module and fills its inputs; the timed passes are ~0.1 s).
#
# A thin wrapper: the variants live beside the kernels, as `variant` lines of
# kernels/bench/{gemv,tc_gemv,q4k,sdpa,rope,silu_mul,add_rmsnorm}.bench, and
# `kforge bench --variants` times each (event-timed passes, L2 flushed, copy
# bandwidth of the same run) on the PTX path, prints one row per variant and
# the best variant of each bench. FILTER selects benches whose name contains
# it. Knobs: gemv.kf PNWARPS PGRID_MAX PONE_K FSUM (the plain f16-x forms),
# NWARPS GRID_MAX (the fused gemv_rms/gemv_silu forms), ROWS UNROLL PIPE WSTAGES BROWS BUNROLL TCB
# TB_UNROLL TB_GRID BNWARPS; tc_gemv.kf TG_WARPS TG_TILES TG_UNROLL (f16)
# TQ_WARPS TQ_TILES (Q4_K); q4k.kf
# TQ_WARPS TQ_GRID (tensor cores), F32_WARPS F32_LOG_BL F32_ROWS F32_UNROLL (SIMT), Q8_WARPS Q8_LOG_BL Q8_RSTEPS;
# sdpa.kf TWARPS TSTAGES TGQ SPEC QREG TFAST EARLY (tensor cores), FSHM FUNROLL (fused), CUNROLL (combine),
# SWARPS CHUNK (SIMT) and the split argument; rope.kf HPT BLOCK RGRID RIPT EARLY TRIGGER;
# silu_mul.kf UNROLL GRID_MAX; add_rmsnorm.kf BLOCK VPT. Other variants, with
# no file edit: kforge bench gemv_f16_14336x4096 --sweep ROWS=1,2,4 --sweep UNROLL=2,4,8
set -u
build=${1:-build}
filter=${2:-}
shift $(( $# < 2 ? $# : 2 ))
[ -x "$build/kforge" ] || { echo "sweep: $build/kforge missing" >&2; exit 2; }
if [ "$filter" = misses ]; then
    names=('gemv_f16_14336x4096' 'sdpa_decode_b1_l8192' 'sdpa_decode_b4_l8192' 'sdpa_decode_b1_l32768'
           'sdpa_split_only_b1_l8192' 'sdpa_combine_only_b1_l8192')
elif [ -n "$filter" ]; then
    names=("*$filter*")
else
    names=('gemv*' 'tc_gemv*' 'q4k*' 'sdpa*' 'rope*' 'silu_mul*' 'add_rmsnorm*')
fi
exec "$build/kforge" bench --variants --backend ptx "${names[@]}" "$@"
