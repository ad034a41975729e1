// tie_probe (CUDA-C, the cuda path: NVRTC then the driver's JIT): the slots
// of tie_probe.ptx in C. a and b are kernel parameters (run time); A and B
// the same bits as constants, which NVRTC (NVVM) or the JIT may fold.
//   o[0] a + b    o[1] truncf(a) + b    o[2] A + B    o[3] truncf(A) + B
//   o[4] truncf(A) + b    o[5] a + B    o[6] truncf(a) + B    o[7] A + b
// Every slot must be 0xff73cd9c (4285779356); 0xff73cd9b (4285779355) is the
// tie rounded toward zero.
//
//   kforge run kernels/raw/tie_probe.cu -k tie_probe --block 1 --grid 1 a=4286578687 b=2101552696 'o=zeros(8)' -o o=tie_probe_cu.npy
//
// kforge: params a: u32, b: u32, o: &mut [u32]
extern "C" __global__ void tie_probe(unsigned a, unsigned b, unsigned *o)
{
    float x = __uint_as_float(a), y = __uint_as_float(b);
    const float X = __uint_as_float(0xff7fffffu), Y = __uint_as_float(0x7d432638u);
    o[0] = __float_as_uint(__fadd_rn(x, y));
    o[1] = __float_as_uint(__fadd_rn(truncf(x), y));
    o[2] = __float_as_uint(__fadd_rn(X, Y));
    o[3] = __float_as_uint(__fadd_rn(truncf(X), Y));
    o[4] = __float_as_uint(__fadd_rn(truncf(X), y));
    o[5] = __float_as_uint(__fadd_rn(x, Y));
    o[6] = __float_as_uint(__fadd_rn(truncf(x), Y));
    o[7] = __float_as_uint(__fadd_rn(X, y));
}
