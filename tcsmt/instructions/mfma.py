"""AMD MFMA instructions a HIP probe can run, and their lane layouts.

One wavefront of 64 lanes runs one ``v_mfma`` through its clang builtin
(``__builtin_amdgcn_mfma_*``). The layouts are those of the AMD Instinct
ISA documents (CDNA1, CDNA2 and CDNA3 Instruction Set Architecture, section
"Matrix Arithmetic Instructions", and AMD's matrix instruction calculator)
for the single-block instructions, where the lanes split K into G groups of
consecutive terms, G = 64 / M:

* A (M x K): lane l holds row l % M, terms E*(l // M) .. E*(l // M) + E - 1,
  E = K / G elements, element i being term E*(l // M) + i.
* B (K x N): lane l holds column l % N and the same terms.
* C/D, 32x32: lane l holds column l % 32 and 16 elements; element v is row
  8*(v // 4) + 4*(l // 32) + v % 4.  16x16: column l % 16, 4 elements, row
  4*(l // 16) + v.

Each instruction runs on every generation listed in its ``archs``; the
arithmetic differs by generation (CDNA1 sums exactly, CDNA2 adds pairwise,
CDNA3 truncates), so observations name the GPU (its gcnArchName).
"""

from __future__ import annotations

from tcsmt.instructions.instruction import Instruction

F16, BF16, F32, F64 = "float16", "bfloat16", "float32", "float64"
XF32 = "xf32"
FP8, BF8 = "float8_e4m3fnuz", "float8_e5m2fnuz"

CDNA1, CDNA2, CDNA3 = ("gfx908",), ("gfx90a",), ("gfx942",)


def a_mfma(m: int, k: int):
    """A of a single-block M x N x K MFMA: (lane, i) -> (row, term)."""
    e = k * m // 64

    def layout(lane, i):
        return lane % m, e * (lane // m) + i
    layout.__doc__ = f"row lane % {m}; term {e} * (lane // {m}) + i"
    return layout


def b_mfma(n: int, k: int):
    """B of a single-block M x N x K MFMA: (lane, i) -> (term, column)."""
    e = k * n // 64

    def layout(lane, i):
        return e * (lane // n) + i, lane % n
    layout.__doc__ = f"term {e} * (lane // {n}) + i; column lane % {n}"
    return layout


def c_mfma(m: int):
    """C/D of an M x M MFMA (M = 32 or 16): (lane, v) -> (row, column)."""
    if m == 32:
        def layout(lane, v):
            return 8 * (v // 4) + 4 * (lane // 32) + v % 4, lane % 32
        layout.__doc__ = "row 8 * (v // 4) + 4 * (lane // 32) + v % 4; column lane % 32"
    else:
        def layout(lane, v):
            return 4 * (lane // 16) + v, lane % 16
        layout.__doc__ = "row 4 * (lane // 16) + v; column lane % 16"
    return layout


# builtin suffix, M (= N), K, a, b, c/d format, generations
TABLE = [
    ("f32_32x32x2f32", 32, 2, F32, F32, F32, CDNA1 + CDNA2 + CDNA3),
    ("f32_16x16x4f32", 16, 4, F32, F32, F32, CDNA1 + CDNA2 + CDNA3),
    ("f32_32x32x8f16", 32, 8, F16, F16, F32, CDNA1 + CDNA2 + CDNA3),
    ("f32_16x16x16f16", 16, 16, F16, F16, F32, CDNA1 + CDNA2 + CDNA3),
    ("f32_32x32x4bf16", 32, 4, BF16, BF16, F32, CDNA1 + CDNA2),
    ("f32_16x16x8bf16", 16, 8, BF16, BF16, F32, CDNA1 + CDNA2),
    ("f32_32x32x8bf16_1k", 32, 8, BF16, BF16, F32, CDNA2 + CDNA3),
    ("f32_16x16x16bf16_1k", 16, 16, BF16, BF16, F32, CDNA2 + CDNA3),
    ("f64_16x16x4f64", 16, 4, F64, F64, F64, CDNA2 + CDNA3),
    ("f32_32x32x4_xf32", 32, 4, XF32, XF32, F32, CDNA3),
    ("f32_16x16x8_xf32", 16, 8, XF32, XF32, F32, CDNA3),
    *[(f"f32_{m}x{m}x{k}_{ta}_{tb}", m, k, fa, fb, F32, CDNA3)
      for m, k in ((32, 16), (16, 32))
      for ta, fa in (("fp8", FP8), ("bf8", BF8)) for tb, fb in (("fp8", FP8), ("bf8", BF8))],
]


def _mfma(suffix, m, k, fa, fb, fc, archs) -> Instruction:
    per_lane = k * m // 64
    return Instruction(f"v_mfma_{suffix}", "mfma", m, m, k, fa, fc, fc, 0, archs[0],
                       a_mfma(m, k), b_mfma(m, k), c_mfma(m), per_lane, per_lane, m * m // 64,
                       b_format=fb if fb != fa else "", threads=64, archs=archs)


CDNA4 = ("gfx950",)
E8M0 = "float8_e8m0fnu"
F8F6F4 = (("fp8", "float8_e4m3fn"), ("bf8", "float8_e5m2"), ("fp6", "float6_e2m3fn"),
          ("bf6", "float6_e3m2fn"), ("fp4", "float4_e2m1fn"))


def _f8f6f4(m: int, k: int, fa: str, fb: str, scaled: bool) -> Instruction:
    """CDNA4's v_mfma_scale_f32_{16x16x128,32x32x64}_f8f6f4: A and B in any of
    five formats (32 per lane, packed), one E8M0 scale per 32 terms of a row
    of A and of a column of B (the lane's own 32 terms: lane l holds row
    l % M, terms 32 (l // M) ..). Unscaled plans run it with every scale 1."""
    name = f"v_mfma_{'scale_' if scaled else ''}f32_{m}x{m}x{k}_f8f6f4"
    ta = next(t for t, f in F8F6F4 if f == fa)
    tb = next(t for t, f in F8F6F4 if f == fb)
    return Instruction(f"{name} ({ta} x {tb})", "mfma", m, m, k, fa, F32, F32, 0, CDNA4[0],
                       a_mfma(m, k), b_mfma(m, k), c_mfma(m), 32, 32, m * m // 64,
                       b_format=fb if fb != fa else "", kind="f8f6f4",
                       scale_format=E8M0 if scaled else "", scale_block=32 if scaled else 0,
                       threads=64, archs=CDNA4)


MFMA: list[Instruction] = [_mfma(*row) for row in TABLE] + [
    _f8f6f4(m, k, fa, fb, scaled) for m, k in ((16, 128), (32, 64)) for _, fa in F8F6F4
    for _, fb in F8F6F4 for scaled in (True, False)]


def builtin(ins: Instruction) -> str:
    """The clang builtin of an MFMA instruction (CDNA4's f8f6f4 forms all run
    the scale builtin: the formats and scales are its arguments)."""
    if ins.kind == "f8f6f4":
        return f"__builtin_amdgcn_mfma_scale_f32_{ins.m}x{ins.n}x{ins.k}_f8f6f4"
    return "__builtin_amdgcn_mfma_" + ins.name.removeprefix("v_mfma_")
