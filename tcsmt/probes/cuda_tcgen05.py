"""The tcgen05.mma kernel of a probe (sm_100a; see ``tcsmt.probes.cuda_async``).

One CTA of 128 threads per vector: warp 0 allocates 32 columns of tensor
memory; every thread writes its share of A (128 rows) and B (16 columns)
into shared memory and its lane's row of C (and of the scale factors) into
tensor memory; thread 0 issues the MMA and commits it to an mbarrier; every
warp reads its 32 lanes of D back with tcgen05.ld. The instruction
descriptor is computed here (PTX ISA, "Instruction descriptor" of tcgen05.mma
and of its .block_scale form).
"""

from __future__ import annotations

from string import Template

from tcsmt.instructions.instruction import Instruction
from tcsmt.instructions.nvidia import SCALE_VEC
from tcsmt.probes.fragments import chunk_geometry, mask

M, N = 128, 16
SFA_COL, SFB_COL = 16, 24

UNCONFIRMED = """\
//
// Not confirmed on a GPU when this generator was written (the calibration vectors
// check the first three on the device):
//   - the shared-memory layout of A and B: canonical K-major without swizzling, LBO the
//     stride of K chunks, SBO that of 8-row blocks; sub-byte terms in the padded layouts
//     (16 fp4 in 8 bytes, 16 fp6 in 12 bytes of each 16) for kind::f8f6f4/mxf8f6f4;
//   - the instruction descriptor's fields (format codes, N >> 3 at bit 17, M >> 4 at bit 24;
//     block-scaled: scale type at bit 23, scale factor ids 0);
//   - the scale factors in tensor memory: byte j of one 32-bit column holds block j's factor
//     for every lane (the same word in all 128 lanes, so the lane that serves a column of B
//     does not matter);
//   - an f16 accumulator in tensor memory: one element per 32-bit column in its low half
//     (C is written to both halves, and only the low halves of columns 0 .. N/2-1 are
//     compared, which holds for one element and for two elements per column alike);
//   - N = 16 with M = 128 for every kind.
"""

# Format codes of the instruction descriptor (a_format, b_format).
FORMAT_CODES = {
    "f16": {"float16": 0, "bfloat16": 1}, "tf32": {"tf32": 2},
    "f8f6f4": {"float8_e4m3fn": 0, "float8_e5m2": 1, "float6_e2m3fn": 3, "float6_e3m2fn": 4,
               "float4_e2m1fn": 5},
    "mxf4": {"float4_e2m1fn": 1}, "mxf4nvf4": {"float4_e2m1fn": 1},
}
FORMAT_CODES["mxf8f6f4"] = FORMAT_CODES["f8f6f4"]


def instruction_descriptor(ins: Instruction) -> int:
    """The 32-bit instruction descriptor: K-major A and B, no negation, dense."""
    codes = FORMAT_CODES[ins.kind]
    desc = codes[ins.in_format] << 7 | codes[ins.b_fmt] << 10 | (N >> 3) << 17 | (M >> 4) << 24
    if ins.scale_format:
        return desc | (1 if ins.scale_format == "float8_e8m0fnu" else 0) << 23
    return desc | (0 if ins.out_format == "float16" else 1) << 4


KERNEL = Template("""
#define DESC_FIXED (1ull << 46)
#define M $m
#define N $n
#define A_EPC $a_epc
#define A_EBITS $a_ebits
#define B_EPC $b_epc
#define B_EBITS $b_ebits
#define A_LBO ((M / 8) * 128)
#define B_LBO ((N / 8) * 128)
#define CORE_SBO 128
#define IDESC 0x${idesc}u
#define D_F16 $d_f16
#define SCALED $scaled
#define SFA_COL $sfa_col
#define SFB_COL $sfb_col
$writer
__global__ void __launch_bounds__(128) probe_kernel(const a_word* a, const b_word* b,
    const acc_word* c, const uint32_t* sa, const uint32_t* sb, acc_word* d, unsigned int* stray) {
  const int v = blockIdx.x, tid = threadIdx.x, warp = tid >> 5;
  __shared__ __align__(1024) uint32_t smem_a[M * 32 / 4];   // 128 rows of 32 bytes
  __shared__ __align__(1024) uint32_t smem_b[N * 32 / 4];   // 16 columns of 32 bytes
  __shared__ uint32_t tmem_base;
  __shared__ __align__(8) uint64_t mbar;
  const uint32_t mbar_addr = (uint32_t)__cvta_generic_to_shared(&mbar);
  if (warp == 0) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;"
                 :: "r"((uint32_t)__cvta_generic_to_shared(&tmem_base)) : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
  }
  if (tid == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(mbar_addr) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  write_operand(smem_a, a + v * K, M, A_LBO, CORE_SBO, A_EPC, A_EBITS, ${a_mask});
  write_operand(smem_b, b + v * K, N, B_LBO, CORE_SBO, B_EPC, B_EBITS, ${b_mask});
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  const uint32_t tmem = tmem_base;
  const uint32_t lanes = tmem + ((uint32_t)(warp * 32) << 16);   // this warp's 32 lanes
  uint32_t cw = (uint32_t)c[v];
  if (D_F16) cw = (cw & 0xffffu) | (cw << 16);
  asm volatile("tcgen05.st.sync.aligned.32x32b.x16.b32 [%0], "
               "{%1, %1, %1, %1, %1, %1, %1, %1, %1, %1, %1, %1, %1, %1, %1, %1};"
               :: "r"(lanes), "r"(cw) : "memory");
#if SCALED
  uint32_t sfa = 0u, sfb = 0u;
  for (int j = 0; j < NSB; ++j) {
    sfa |= (sa[v * NSB + j] & 0xffu) << (8 * j);
    sfb |= (sb[v * NSB + j] & 0xffu) << (8 * j);
  }
  asm volatile("tcgen05.st.sync.aligned.32x32b.x1.b32 [%0], {%1};"
               :: "r"(lanes + SFA_COL), "r"(sfa) : "memory");
  asm volatile("tcgen05.st.sync.aligned.32x32b.x1.b32 [%0], {%1};"
               :: "r"(lanes + SFB_COL), "r"(sfb) : "memory");
#endif
  asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  if (tid == 0) {
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    const uint64_t desc_a = smem_desc(smem_a, A_LBO, CORE_SBO);
    const uint64_t desc_b = smem_desc(smem_b, B_LBO, CORE_SBO);
    const uint32_t one = 1u;
$mma
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];"
                 :: "r"(mbar_addr) : "memory");
  }
  uint32_t done = 0u;
  while (!done) {
    asm volatile("{\\n.reg .pred p;\\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\\n"
                 "selp.u32 %0, 1, 0, p;\\n}" : "=r"(done) : "r"(mbar_addr) : "memory");
  }
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  uint32_t r[16];
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x16.b32 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, [%16];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]),
                 "=r"(r[6]), "=r"(r[7]), "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]),
                 "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15])
               : "r"(lanes) : "memory");
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
  uint32_t xs[N];
  const int n_out = D_F16 ? N / 2 : N;
  for (int j = 0; j < n_out; ++j) xs[j] = D_F16 ? (r[j] & 0xffffu) : r[j];
  check_uniform(xs, n_out, d, stray);
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  if (warp == 0) {
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 32;" :: "r"(tmem) : "memory");
  }
}
""")


def _mma(ins: Instruction) -> str:
    head = f"tcgen05.mma.cta_group::1.kind::{ins.kind}"
    if ins.scale_format:
        vec = SCALE_VEC[(ins.kind, ins.scale_block)]
        return (f'    asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, %6, 0;\\n"\n'
                f'                 "{head}.block_scale.scale_vec::{vec} "\n'
                f'                 "[%0], %1, %2, %3, [%4], [%5], p;\\n}}"\n'
                f'                 :: "r"(tmem), "l"(desc_a), "l"(desc_b), "r"(IDESC),\n'
                f'                    "r"(tmem + SFA_COL), "r"(tmem + SFB_COL), "r"(one) : "memory");')
    return (f'    asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, %4, 0;\\n"\n'
            f'                 "{head} [%0], %1, %2, %3, p;\\n}}"\n'
            f'                 :: "r"(tmem), "l"(desc_a), "l"(desc_b), "r"(IDESC), "r"(one)'
            f' : "memory");')


def tcgen05_kernel(ins: Instruction, writer: str) -> str:
    a_ebits, a_epc = chunk_geometry(ins, ins.in_format)
    b_ebits, b_epc = chunk_geometry(ins, ins.b_fmt)
    return KERNEL.substitute(
        m=M, n=N, a_epc=a_epc, a_ebits=a_ebits, b_epc=b_epc, b_ebits=b_ebits,
        idesc=f"{instruction_descriptor(ins):08x}", d_f16=int(ins.out_format == "float16"),
        scaled=int(bool(ins.scale_format)), sfa_col=SFA_COL, sfb_col=SFB_COL, writer=writer,
        a_mask=mask(a_ebits), b_mask=mask(b_ebits), mma=_mma(ins))
