// wmma_gemm: c = a * b on tensor cores (nvcuda::wmma), f16 inputs, f32
// accumulation and output; a is m x k, b is k x n, c is m x n, all row
// major, m, n and k multiples of 16. One warp computes one 16x16 tile of c:
// block (32), grid (n / 16, m / 16); the loop runs over k in 16x16x16 steps.
// A raw CUDA-C kernel (the seed's compile_cuda_c_source path): kforge runs
// it through NVRTC on the cuda backend, with the parameters below.
//
//   kforge run kernels/raw/wmma_gemm.cu -k wmma_gemm --block 32 --grid 1,1 \
//       'a=rand(256,1)' 'b=rand(256,2)' 'c=zeros(256)' m=16 n=16 k=16
//
// kforge: params a: &[f16], b: &[f16], c: &mut [f32], m: u32, n: u32, k: u32
#include <mma.h>

using namespace nvcuda;

extern "C" __global__ void wmma_gemm(const half *a, const half *b, float *c, unsigned m, unsigned n, unsigned k)
{
    unsigned tile_row = blockIdx.y * 16, tile_col = blockIdx.x * 16;
    if (tile_row >= m || tile_col >= n) return;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (unsigned kk = 0; kk < k; kk += 16) {
        wmma::load_matrix_sync(fa, a + (size_t)tile_row * k + kk, k);
        wmma::load_matrix_sync(fb, b + (size_t)kk * n + tile_col, n);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + (size_t)tile_row * n + tile_col, acc, n, wmma::mem_row_major);
}
