"""Kernels for the asynchronous matrix instructions: wgmma (sm_90a) and tcgen05 (sm_100a).

Both read B (tcgen05 also A) from shared memory through a 64-bit matrix
descriptor, and the probe places the vector by broadcast (every row of A is
a, every column of B is b, every element of C is c), so every element of D
is the same dot product and only the order of the terms along K depends on
the memory layout. Operands are written in the canonical K-major layout
without swizzling (PTX ISA, "Shared Memory Matrix Layout" / "Shared memory
descriptor"): 8 x 16-byte core matrices, row r of a core matrix at byte 16r,
core matrix (row block i, K chunk j) at i * SBO + j * LBO, chunk j holding
terms j*E .. j*E + E - 1 (E terms per 16 bytes), term e at bit e * bits of
the chunk's 128 little-endian bits. Sub-byte terms of kind::f8f6f4 and
kind::mxf8f6f4 use the padded layouts: 16 fp4 terms in the first 8 bytes
and 16 fp6 terms in the first 12 bytes of a 16-byte chunk, the rest zero;
kind::mxf4 and kind::mxf4nvf4 pack 32 fp4 terms in 16 bytes.

wgmma takes A from registers (the per-warp layouts of mma.sync, warp w
holding rows 16w..16w+15) and B (n = 8) from shared memory; C starts in the
accumulator registers. tcgen05.mma (cta_group::1, M = 128, N = 16) takes A
and B from shared memory and C from tensor memory (lane i = row i, column j
= column j), where the scale factors of the block-scaled kinds also live:
one 32-bit column each for A and B, byte j holding block j's factor (scale
factor id 0), written to all 128 lanes.
"""

from __future__ import annotations

from string import Template

from tcsmt.instructions.instruction import Instruction, register_element
from tcsmt.model.formats import get_format
from tcsmt.probes.fragments import chunk_geometry, mask, term_table

WRITER = """
// Writes `rows` equal rows of a K-major operand (terms x[0..K-1]) into shared memory in
// the canonical no-swizzle layout described in the header.
__device__ void write_operand(uint32_t* smem, const uint32_t* x, int rows, int lbo, int sbo,
                              int epc, int ebits, uint32_t emask) {
  const int chunks = K / epc;
  for (int idx = threadIdx.x; idx < rows * chunks; idx += blockDim.x) {
    const int row = idx / chunks, ch = idx % chunks;
    uint32_t w[4] = {0u, 0u, 0u, 0u};
    for (int e = 0; e < epc; ++e) {
      const uint32_t t = x[ch * epc + e] & emask;
      const int off = e * ebits;
      w[off >> 5] |= t << (off & 31);
      if ((off & 31) + ebits > 32) w[(off >> 5) + 1] |= t >> (32 - (off & 31));
    }
    uint32_t* p = smem + ((row / 8) * sbo + ch * lbo + (row % 8) * 16) / 4;
    p[0] = w[0]; p[1] = w[1]; p[2] = w[2]; p[3] = w[3];
  }
}

__device__ __forceinline__ uint64_t smem_desc(const void* p, uint32_t lbo, uint32_t sbo) {
  const uint64_t addr = (uint32_t)__cvta_generic_to_shared(p);
  return ((addr & 0x3ffffull) >> 4) | ((uint64_t)((lbo >> 4) & 0x3fff) << 16) |
         ((uint64_t)((sbo >> 4) & 0x3fff) << 32) | DESC_FIXED;
}

// Counts the elements of D that differ from D[0][0] (thread 0's first element).
__device__ void check_uniform(const uint32_t* xs, int n, acc_word* d, unsigned int* stray) {
  __shared__ uint32_t ref;
  if (threadIdx.x == 0) { ref = xs[0]; d[blockIdx.x] = xs[0]; }
  __syncthreads();
  for (int i = 0; i < n; ++i)
    if (xs[i] != ref) atomicAdd(stray, 1u);
}
"""

WGMMA = Template("""
#define DESC_FIXED 0ull
#define A_ELEMS $a_elems
#define A_BITS $a_bits
#define A_PER_REG (32 / A_BITS)
#define A_MASK $a_mask
#define B_EPC $b_epc
#define B_EBITS $b_ebits
#define B_MASK $b_mask
#define B_LBO 128
#define B_SBO 128
#define D_F16 $d_f16
// The term each A register element holds (every row of A is the same vector).
__constant__ int8_t A_TERM[32][A_ELEMS] = {
$a_table
};
$writer
__global__ void __launch_bounds__(128) probe_kernel(const a_word* a, const b_word* b,
    const acc_word* c, const uint32_t* sa, const uint32_t* sb, acc_word* d, unsigned int* stray) {
  const int v = blockIdx.x, tid = threadIdx.x;
  __shared__ __align__(128) uint32_t smem_b[8 * 32 / 4];   // B: 8 columns of 32 bytes
  write_operand(smem_b, b + v * K, 8, B_LBO, B_SBO, B_EPC, B_EBITS, B_MASK);
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  uint32_t ra[A_ELEMS / A_PER_REG];
#pragma unroll
  for (int r = 0; r < A_ELEMS / A_PER_REG; ++r) ra[r] = 0u;
#pragma unroll
  for (int i = 0; i < A_ELEMS; ++i)
    ra[i / A_PER_REG] |= ((uint32_t)a[v * K + A_TERM[tid & 31][i]] & A_MASK) << ((i % A_PER_REG) * A_BITS);
  // B's core matrices (K chunks 0 and 1) lie 128 bytes apart; with one core matrix along
  // N, LBO = SBO = 128 holds whichever of the two the hardware reads as the K stride.
  const uint64_t desc_b = smem_desc(smem_b, B_LBO, B_SBO);
  const uint32_t one = 1u;
$acc_init  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  asm volatile("{\\n.reg .pred p;\\nsetp.ne.b32 p, %$pred, 0;\\n"
               "$name $operands;\\n}"
               : $outs
               : $ins_
               : "memory");
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
$acc_read  check_uniform(xs, $n_out, d, stray);
}
""")


def _wgmma_kernel(ins: Instruction) -> str:
    a_bits, _ = register_element(ins, ins.in_format)
    b_ebits, b_epc = chunk_geometry(ins, ins.b_fmt)
    f16 = ins.out_format == "float16"
    nd = 2 if f16 else 4                   # accumulator registers per thread (m64n8)
    na = ins.a_elems * a_bits // 32
    d_ops = "{" + ", ".join(f"%{j}" for j in range(nd)) + "}"
    a_ops = "{" + ", ".join(f"%{nd + j}" for j in range(na)) + "}"
    imm = "1, 1, 0" if ins.in_format in ("float16", "bfloat16") else "1, 1"
    operands = f"{d_ops}, {a_ops}, %{nd + na}, p, {imm}"
    if f16:
        acc_init = ("  const uint32_t c16 = (uint32_t)c[v] & 0xffffu;\n"
                    "  uint32_t acc[2] = {c16 | (c16 << 16), c16 | (c16 << 16)};\n")
        outs = ", ".join(f'"+r"(acc[{j}])' for j in range(nd))
        acc_read = ("  uint32_t xs[4] = {acc[0] & 0xffffu, acc[0] >> 16, acc[1] & 0xffffu, "
                    "acc[1] >> 16};\n")
    else:
        acc_init = ("  float acc[4];\n"
                    "  for (int j = 0; j < 4; ++j) acc[j] = __uint_as_float((uint32_t)c[v]);\n")
        outs = ", ".join(f'"+f"(acc[{j}])' for j in range(nd))
        acc_read = "  uint32_t xs[4];\n  for (int j = 0; j < 4; ++j) xs[j] = __float_as_uint(acc[j]);\n"
    ins_ = ", ".join([f'"r"(ra[{j}])' for j in range(na)] + ['"l"(desc_b)', '"r"(one)'])
    a_layout = ins.a_layout
    if a_layout is None:
        raise ValueError(f"{ins.name}: no layout of A, which wgmma reads from registers")
    table = term_table(lambda lane, i: (0, a_layout(lane, i)[1]), ins.a_elems, True)
    return WGMMA.substitute(
        a_elems=ins.a_elems, a_bits=a_bits, a_mask=mask(get_format(ins.in_format).storage_bits),
        b_epc=b_epc, b_ebits=b_ebits, b_mask=mask(b_ebits), d_f16=int(f16), a_table=table,
        writer=WRITER, acc_init=acc_init, pred=nd + na + 1, name=ins.name, operands=operands,
        outs=outs, ins_=ins_, acc_read=acc_read, n_out=4)


def async_kernel(ins: Instruction) -> str:
    if ins.api == "wgmma":
        return _wgmma_kernel(ins)
    from tcsmt.probes.cuda_tcgen05 import tcgen05_kernel
    return tcgen05_kernel(ins, WRITER)


def layout_notes(ins: Instruction) -> str:
    """What the generated source cannot confirm without a GPU, for its header."""
    if ins.api == "wgmma":
        return ("//\n// Not confirmed on a GPU when this generator was written: the shared-memory "
                "layout of B\n// (canonical K-major, no swizzle) and the A register layout "
                "(mma.sync's per warp).\n// The calibration vectors check both on the device.\n")
    if ins.api == "tcgen05":
        from tcsmt.probes.cuda_tcgen05 import UNCONFIRMED
        return UNCONFIRMED
    return ""
