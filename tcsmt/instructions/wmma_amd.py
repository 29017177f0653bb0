"""AMD RDNA WMMA instructions a HIP probe can run, and their lane layouts.

One wave of 32 lanes runs one ``v_wmma`` through its clang builtin
(``__builtin_amdgcn_wmma_*_w32`` on gfx11, ``..._w32_gfx12`` on gfx12). The
layouts are those of AMD's RDNA3 and RDNA4 ISA guides (section "Wave
Matrix Multiply Accumulate"), GPUOpen's "How to accelerate AI applications
on RDNA 3 using WMMA" and LLVM's AMDGPU WMMA tests:

* RDNA3 (gfx11), 16x16x16 with 16-bit inputs: lane l holds row l % 16 of A
  (column l % 16 of B), all 16 terms, element i being term i; lanes 16-31
  hold the same elements as lanes 0-15 (the ISA asks for both halves). C/D
  with 32-bit elements: 8 per lane, element v is row 2v + l // 16, column
  l % 16.
* RDNA4 (gfx12), 16x16x16: lane l holds row l % 16 of A (column of B) and 8
  terms: lanes 0-15 terms 0-3 and 8-11, lanes 16-31 terms 4-7 and 12-15
  (element i is term (i % 4) + 4 (l // 16) + 8 (i // 4); "K bits 2 and 3
  occupy the lane and register selectors"), for 16-bit and 8-bit inputs
  alike. C/D: 8 elements per lane, element v is row v + 8 (l // 16),
  column l % 16.

The arithmetic differs by generation (RDNA3 runs dot2 steps, RDNA4 dot4
steps: see the rdna3 and rdna4 models), so observations name the GPU.
"""

from __future__ import annotations

from tcsmt.instructions.instruction import Instruction

F16, BF16, F32 = "float16", "bfloat16", "float32"
FP8, BF8 = "float8_e4m3fn", "float8_e5m2"

RDNA3 = ("gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152")
RDNA4 = ("gfx1200", "gfx1201")


def a_gfx11(lane, i):
    return lane % 16, i


a_gfx11.__doc__ = "row lane % 16; term i (lanes 16-31 repeat lanes 0-15)"


def b_gfx11(lane, i):
    return i, lane % 16


b_gfx11.__doc__ = "term i; column lane % 16 (lanes 16-31 repeat lanes 0-15)"


def c_gfx11(lane, v):
    return 2 * v + lane // 16, lane % 16


c_gfx11.__doc__ = "row 2 * v + lane // 16; column lane % 16"


def _k_gfx12(lane, i):
    return i % 4 + 4 * (lane // 16) + 8 * (i // 4)


def a_gfx12(lane, i):
    return lane % 16, _k_gfx12(lane, i)


a_gfx12.__doc__ = "row lane % 16; term i % 4 + 4 * (lane // 16) + 8 * (i // 4)"


def b_gfx12(lane, i):
    return _k_gfx12(lane, i), lane % 16


b_gfx12.__doc__ = "term i % 4 + 4 * (lane // 16) + 8 * (i // 4); column lane % 16"


def c_gfx12(lane, v):
    return v + 8 * (lane // 16), lane % 16


c_gfx12.__doc__ = "row v + 8 * (lane // 16); column lane % 16"


def _wmma(name, fa, fb, archs, gfx12: bool) -> Instruction:
    a, b, c = (a_gfx12, b_gfx12, c_gfx12) if gfx12 else (a_gfx11, b_gfx11, c_gfx11)
    per_lane = 8 if gfx12 else 16
    return Instruction(name, "amd_wmma", 16, 16, 16, fa, F32, F32, 0, archs[0], a, b, c,
                       per_lane, per_lane, 8, b_format=fb if fb != fa else "", threads=32,
                       archs=archs)


AMD_WMMA: list[Instruction] = [
    _wmma("v_wmma_f32_16x16x16_f16", F16, F16, RDNA3, False),
    _wmma("v_wmma_f32_16x16x16_bf16", BF16, BF16, RDNA3, False),
    _wmma("v_wmma_f32_16x16x16_f16 (gfx12)", F16, F16, RDNA4, True),
    _wmma("v_wmma_f32_16x16x16_bf16 (gfx12)", BF16, BF16, RDNA4, True),
    *[_wmma(f"v_wmma_f32_16x16x16_{ta}_{tb}", fa, fb, RDNA4, True)
      for ta, fa in (("fp8", FP8), ("bf8", BF8)) for tb, fb in (("fp8", FP8), ("bf8", BF8))],
]


def wmma_builtin(ins: Instruction) -> str:
    """The clang builtin of an RDNA WMMA instruction."""
    base = ins.name.split(" ")[0].removeprefix("v_wmma_")
    return f"__builtin_amdgcn_wmma_{base}_w32" + ("_gfx12" if ins.arch.startswith("gfx12") else "")
