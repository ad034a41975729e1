#!/usr/bin/env bash
# GPU tuning sweep of the decode kernels' -D knobs at the issue-8 bench shapes,
# in one device call (run from the repository root on the GPU machine, with the
# build folder carried):
#
#   tools/sweep_decode.sh [BUILD] [FILTER]      e.g. tools/sweep_decode.sh build gemv
#
# Each line runs one kernel variant once through the PTX path with
# `kforge run --time` (event-timed device time of one launch; its inputs were
# just uploaded, so up to the 60 MB L2 of them may be warm: the shapes here move
# 117 MB to 805 MB, and the attention sweep uses B 4 for that reason) and prints
# ms, GB/s and the ratio to the copy bandwidth `kforge bench saxpy` measures
# first. It finds the variants worth making the defaults; the real numbers come
# from `kforge bench` (issue 8, section 3) once it takes a FILE and -D.
# Knobs: gemv.kf NWARPS ROWS UNROLL GRID_MAX; q4k.kf F32_WARPS F32_LOG_BL
# F32_ROWS F32_UNROLL Q8_WARPS Q8_LOG_BL Q8_RSTEPS; sdpa.kf SWARPS CHUNK GQ and
# the split argument; rope.kf HPT BLOCK; silu_mul.kf UNROLL GRID_MAX;
# add_rmsnorm.kf BLOCK VPT (BLOCK·8·VPT >= cols keeps the register path).
set -u
build=${1:-build}
filter=${2:-}
kf="$build/kforge"
export CUDA_MODULE_LOADING=EAGER
[ -x "$kf" ] || { echo "sweep: $kf missing" >&2; exit 2; }

copy=$("$kf" bench --runs 20 saxpy 2>/dev/null | sed -n 's/.*copy bandwidth \([0-9.]*\) GB\/s.*/\1/p')
echo "copy bandwidth: ${copy:-unknown} GB/s"
printf '%-22s %-44s %10s %8s %7s\n' kernel variant ms GB/s xcopy

# one NAME BYTES FILE KERNEL "DEFINES" ARGS...
one() {
    local name=$1 bytes=$2 file=$3 kernel=$4 defs=$5
    shift 5
    case "$name" in *"$filter"*) ;; *) return ;; esac
    local dflags=() d
    for d in $defs; do dflags+=(-D "$d"); done
    local out ms
    out=$("$kf" run "kernels/$file" -k "$kernel" --backend ptx "${dflags[@]}" --time "$@" 2>&1)
    ms=$(printf '%s\n' "$out" | sed -n 's/^time: \([0-9.]*\) ms.*/\1/p')
    if [ -z "$ms" ]; then
        printf '%-22s %-44s %s\n' "$name" "${defs:-default}" "FAILED: $(printf '%s' "$out" | tail -1)"
        return
    fi
    awk -v n="$name" -v v="${defs:-default}" -v ms="$ms" -v b="$bytes" -v c="${copy:-0}" 'BEGIN {
        gbs = b / (ms * 1e6); x = 0; if (c > 0) x = gbs / c
        printf "%-22s %-44s %10.4f %8.0f %7.3f\n", n, v, ms, gbs, x }'
}

# gemv f16 14336 x 4096: W 117440512 B + x 8192 + y 28672
G="w=rand(58720256,1) x=rand(4096,2) y=zeros(14336) m=14336 k=4096"
for v in "" "ROWS=1 UNROLL=8" "ROWS=1 UNROLL=4" "ROWS=2 UNROLL=2" "ROWS=4 UNROLL=2" "ROWS=4 UNROLL=4" \
         "NWARPS=4" "NWARPS=4 ROWS=4 UNROLL=2" "GRID_MAX=528" "GRID_MAX=1056" "NWARPS=16 ROWS=1 UNROLL=8"; do
    one gemv_f16_f16_f16 117477376 gemv.kf gemv_f16_f16_f16 "$v" $G
done
one gemv_bf16_f16_f16 117477376 gemv.kf gemv_bf16_f16_f16 "" $G
one gemv_f16_f16_f16_acc 117506048 gemv.kf gemv_f16_f16_f16_acc "" $G
for v in "" "BROWS=1" "BROWS=4 BUNROLL=1" "BUNROLL=1"; do
    one gemv_batch_f16x8 117768192 gemv.kf gemv_batch_f16_f16_f16 "$v" \
        w="rand(58720256,1)" x="rand(32768,2)" y="zeros(114688)" m=14336 k=4096 nb=8
done

# q4k_gemv f32 x, 128256 x 4096: W 295501824 B + x 16384 + y 513024
Q="w=rand(295501824,1) x=rand(4096,2) y=zeros(128256) m=128256 k=4096"
for v in "" "F32_UNROLL=1" "F32_UNROLL=4" "F32_ROWS=32" "F32_ROWS=128" "F32_WARPS=4 F32_LOG_BL=2" \
         "F32_WARPS=4 F32_LOG_BL=2 F32_ROWS=128" "F32_LOG_BL=0 F32_ROWS=128"; do
    one q4k_gemv 296031232 q4k.kf q4k_gemv "$v" $Q
done
# q4k x q8, 128256 x 4096 and 14336 x 4096 (W 33030144 B)
Q8="xq=rand(4096,2) xds=rand(128,3) k=4096"
for v in "" "Q8_RSTEPS=1" "Q8_RSTEPS=4" "Q8_WARPS=8" "Q8_LOG_BL=2 Q8_RSTEPS=2" "Q8_LOG_BL=0 Q8_RSTEPS=1" "Q8_LOG_BL=2 Q8_RSTEPS=4"; do
    one q4k_q8_gemv_f32 296019968 q4k.kf q4k_q8_gemv_f32 "$v" w="rand(295501824,1)" y="zeros(128256)" m=128256 $Q8
    one q4k_q8_gemv_f32_14336 33092096 q4k.kf q4k_q8_gemv_f32 "$v" w="rand(33030144,1)" y="zeros(14336)" m=14336 $Q8
done
one q8_quantize_f32 21120 q4k.kf q8_quantize_f32 "" x="rand(4096,1)" xq="zeros(4096)" xds="zeros(128)" n=4096

# sdpa B 4, H 32, Hkv 8, D 128, L 8192: K + V 134217728 B (+ partials: b*h*ns*(D+1)*4)
for split in 128 256 512; do
    ns=$(( (8192 + split - 1) / split ))
    for v in "" "SWARPS=8" "SWARPS=2" "CHUNK=2" "SWARPS=8 CHUNK=2"; do
        one "sdpa_split_b4_s$split" $(( 134217728 + 4 * 32 * ns * 129 * 4 )) sdpa.kf sdpa_decode_split "$v" \
            q="rand(16384,1)" kc="rand(33554432,2)" vc="rand(33554432,3)" lens="rand(4,4)" \
            po="zeros($(( 4 * 32 * ns * 128 )))" plse="zeros($(( 4 * 32 * ns )))" b=4 h=32 hkv=8 l=8192 split=$split
    done
done
one sdpa_split_b1_l32768 134742016 sdpa.kf sdpa_decode_split "" q="rand(4096,1)" kc="rand(33554432,2)" \
    vc="rand(33554432,3)" lens="rand(1,4)" po="zeros(524288)" plse="zeros(4096)" b=1 h=32 hkv=8 l=32768 split=256
one sdpa_combine_b4_s256 2146304 sdpa.kf sdpa_decode_combine "" po="rand(524288,1)" plse="rand(4096,2)" \
    lens="rand(4,4)" o="zeros(16384)" b=4 h=32 l=8192 split=256

# rope T 4096, H 32, D 128: 67108864 B + pos
for v in "" "HPT=2" "HPT=8" "HPT=8 BLOCK=128" "BLOCK=128" "HPT=1"; do
    one rope_neox 67125248 rope.kf rope_neox "$v" x="rand(16777216,1)" pos="rand(4096,2)" t=4096 h=32 d=128 theta=500000
done
one rope_gptj 67125248 rope.kf rope_gptj "" x="rand(16777216,1)" pos="rand(4096,2)" t=4096 h=32 d=128 theta=500000

# silu_mul 2^27: 805306368 B
for v in "" "UNROLL=2" "UNROLL=8" "GRID_MAX=1056" "GRID_MAX=65535" "UNROLL=2 GRID_MAX=65535"; do
    one silu_mul 805306368 silu_mul.kf silu_mul "$v" g="rand(134217728,1)" u="rand(134217728,2)" \
        y="zeros(134217728)" n=134217728
done

# add_rmsnorm 8192 x 8192: 536870912 B + w
for v in "" "BLOCK=512 VPT=2" "BLOCK=1024 VPT=1" "BLOCK=128 VPT=8"; do
    one add_rmsnorm 536887296 add_rmsnorm.kf add_rmsnorm "$v" x="rand(67108864,1)" res="rand(67108864,2)" \
        w="rand(8192,3)" y="zeros(67108864)" rows=8192 cols=8192 eps=1e-6
done

# argmax over one vocabulary row (513 KB: latency bound)
one argmax_128256 513028 argmax.kf argmax "" x="rand(128256,1)" idx="zeros(1)" rows=1 cols=128256
