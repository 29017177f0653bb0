"""NVIDIA matrix instructions a probe can run: mma.sync, wmma, wgmma, tcgen05.

Built from small tables: every format pair an instruction takes gives one
``Instruction``. Names are the PTX instruction names, except for tcgen05.mma,
whose operand types live in the instruction descriptor rather than in its
name: there the name is followed by dtype.atype.btype (and the scale type)
the way wgmma's is, e.g. ``tcgen05.mma.cta_group::1.kind::f8f6f4.f32.e4m3.e2m1``.

Sources: PTX ISA 9.x, sections "Warp Level Matrix Multiply-Accumulate
Instructions" (mma, its .kind::f8f6f4 and .block_scale forms for sm_120a),
"Asynchronous Warpgroup Level Matrix Multiply-Accumulate" (wgmma, sm_90a) and
"TensorCore 5th Generation Family Instructions" (tcgen05, sm_100a).
"""

from __future__ import annotations

from itertools import product

from tcsmt.instructions import layouts as L
from tcsmt.instructions.instruction import Instruction

F16, BF16, TF32, F32 = "float16", "bfloat16", "tf32", "float32"
E4M3, E5M2 = "float8_e4m3fn", "float8_e5m2"
E3M2, E2M3, E2M1 = "float6_e3m2fn", "float6_e2m3fn", "float4_e2m1fn"
UE8M0, UE4M3 = "float8_e8m0fnu", "ue4m3"
S8, U8, S4, U4, S32 = "int8", "uint8", "int4", "uint4", "int32"
FP8 = (E4M3, E5M2)
F8F6F4 = (E4M3, E5M2, E3M2, E2M3, E2M1)

PTX_TYPES = {F16: "f16", BF16: "bf16", TF32: "tf32", F32: "f32", E4M3: "e4m3", E5M2: "e5m2",
             E3M2: "e3m2", E2M3: "e2m3", E2M1: "e2m1", UE8M0: "ue8m0", UE4M3: "ue4m3",
             S8: "s8", U8: "u8", S4: "s4", U4: "u4", S32: "s32"}


def _shape(shape: str) -> tuple[int, int, int]:
    m, n, k = (int(x) for x in shape[1:].replace("n", " ").replace("k", " ").split())
    return m, n, k


def compute_capability(arch: str) -> int | None:
    """The number of an NVIDIA architecture: 80 for ``sm_80``, 90 for
    ``sm_90a``, 100 for ``sm_100f``; None for anything else (``gfx90a``)."""
    digits = arch.strip().lower().removeprefix("sm_").rstrip("af")
    return int(digits) if arch.strip().lower().startswith("sm_") and digits.isdigit() else None


def _sm(arch: str) -> int:
    cc = compute_capability(arch)
    assert cc is not None, arch
    return cc


# (A layout, B layout, C layout, A, B, C elements per lane) of mma.sync shapes
FRAGMENTS = {
    ("m16n8k16", 16): (L.a_m16n8k16_16bit, L.b_m16n8k16_16bit, L.c_m16n8, 8, 4, 4),
    ("m16n8k8", 16): (L.a_m16n8k8_16bit, L.b_m16n8k8_16bit, L.c_m16n8, 4, 2, 4),
    ("m16n8k8", 32): (L.a_m16n8k8_tf32, L.b_m16n8k8_tf32, L.c_m16n8, 4, 2, 4),
    ("m16n8k4", 32): (L.a_m16n8k4_tf32, L.b_m16n8k4_tf32, L.c_m16n8, 2, 1, 4),
    ("m16n8k32", 8): (L.a_m16n8k32_8bit, L.b_m16n8k32_8bit, L.c_m16n8, 16, 8, 4),
    ("m16n8k64", 4): (L.a_m16n8k64_4bit, L.b_m16n8k64_4bit, L.c_m16n8, 32, 16, 4),
    # mma.sp: the compressed A (16 x k/2) and the dense B (k x 8)
    ("sp.m16n8k32", 16): (L.a_m16n8k16_16bit, L.b_m16n8k32_16bit, L.c_m16n8, 8, 8, 4),
}


def _mma(shape, fa, fc, arch, fb=None, fout=None, kind="", scale="", block=0, vec="",
         frag_bits=None, sat=False) -> Instruction:
    m, n, k = _shape(shape)
    fb, fout = fb or fa, fout or fc
    bits = frag_bits or (32 if fa == TF32 else 16 if fa in (F16, BF16) else 8)
    a, b, c, na, nb, nc = FRAGMENTS[(shape, bits)]
    t = PTX_TYPES
    types = f"{t[fout]}.{t[fa]}.{t[fb]}.{t[fc]}"
    if sat:
        name = f"mma.sync.aligned.{shape}.row.col.satfinite.{types}"
    elif kind and scale:
        name = (f"mma.sync.aligned.kind::{kind}.block_scale.scale_vec::{vec}.{shape}.row.col."
                f"{types}.{t[scale]}")
    elif kind:
        name = f"mma.sync.aligned.kind::{kind}.{shape}.row.col.{types}"
    else:
        name = f"mma.sync.aligned.{shape}.row.col.{types}"
    return Instruction(name, "mma", m, n, k, fa, fc, fout, _sm(arch), arch, a, b, c, na, nb, nc,
                       b_format=fb if fb != fa else "", kind=kind, scale_format=scale,
                       scale_block=block, satfinite=sat)


def _mma_sp(shape, fa, fc, arch) -> Instruction:
    """mma.sp::ordered_metadata (2:4 sparse A): the selected elements of A
    stored compressed, a 32-bit metadata word of 2-bit indices per lane and
    sparsity selector 0 (PTX ISA 9.x, "Sparse matrix multiply-accumulate",
    metadata layout of m16n8k32 with 16-bit types)."""
    m, n, k = _shape(shape)
    a, b, c, na, nb, nc = FRAGMENTS[(f"sp.{shape}", 16)]
    t = PTX_TYPES
    name = f"mma.sp::ordered_metadata.sync.aligned.{shape}.row.col.{t[fc]}.{t[fa]}.{t[fa]}.{t[fc]}"
    return Instruction(name, "mma", m, n, k, fa, fc, fc, _sm(arch), arch, a, b, c, na, nb, nc,
                       sparsity="2:4")


def _volta(fc, c_layout, nc) -> Instruction:
    t = PTX_TYPES
    return Instruction(f"mma.sync.aligned.m8n8k4.row.col.{t[fc]}.f16.f16.{t[fc]}", "mma", 8, 8, 4,
                       F16, fc, fc, 70, "sm_70", L.a_m8n8k4_row, L.b_m8n8k4_col, c_layout, 4, 4, nc,
                       quad_pairs=4)


def _wmma(shape, fin, fc, arch) -> Instruction:
    m, n, k = _shape(shape)
    t = PTX_TYPES
    return Instruction(f"wmma.{shape}.row.col.{t[fc]}.{t[fin]}.{t[fin]}.{t[fc]}", "wmma", m, n, k,
                       fin, fc, fc, _sm(arch), arch)


# wgmma: A from registers (the m16 layouts of mma.sync per warp), B from shared memory.
WGMMA_A = {16: (L.a_m16n8k16_16bit, 8), 32: (L.a_m16n8k8_tf32, 4), 8: (L.a_m16n8k32_8bit, 16)}


def _wgmma(fa, fd, fb=None) -> Instruction:
    fb = fb or fa
    bits = 32 if fa == TF32 else 16 if fa in (F16, BF16) else 8
    k = 256 // bits
    a_layout, na = WGMMA_A[bits]
    t = PTX_TYPES
    return Instruction(f"wgmma.mma_async.sync.aligned.m64n8k{k}.{t[fd]}.{t[fa]}.{t[fb]}", "wgmma",
                       64, 8, k, fa, fd, fd, 90, "sm_90a", L.wgmma_a(a_layout), None, None, na,
                       b_format=fb if fb != fa else "", placement="broadcast", threads=128)


# Scale factors per 32-bit word of the block-scaled kinds: (kind, block) -> .scale_vec
SCALE_VEC = {("mxf8f6f4", 32): "1X", ("mxf4", 32): "2X", ("mxf4nvf4", 32): "2X",
             ("mxf4nvf4", 16): "4X"}


def _tcgen05(kind, fa, fd, fb=None, scale="", block=0) -> Instruction:
    fb = fb or fa
    k = {"f16": 16, "tf32": 8, "f8f6f4": 32, "mxf8f6f4": 32, "mxf4": 64, "mxf4nvf4": 64}[kind]
    t = PTX_TYPES
    name = f"tcgen05.mma.cta_group::1.kind::{kind}"
    if scale:
        vec = SCALE_VEC[(kind, block)]
        name += f".block_scale.scale_vec::{vec}.{t[fd]}.{t[fa]}.{t[fb]}.{t[scale]}"
    else:
        name += f".{t[fd]}.{t[fa]}.{t[fb]}"
    return Instruction(name, "tcgen05", 128, 16, k, fa, fd, fd, 100, "sm_100a",
                       b_format=fb if fb != fa else "", kind=kind, scale_format=scale,
                       scale_block=block, placement="broadcast", threads=128)


def _pairs(formats) -> list[tuple[str, str]]:
    return list(product(formats, formats))


NVIDIA: list[Instruction] = [
    _mma("m16n8k16", F16, F32, "sm_80"),
    _mma("m16n8k16", F16, F16, "sm_80"),
    _mma("m16n8k16", BF16, F32, "sm_80"),
    _mma("m16n8k8", F16, F32, "sm_75"),
    _mma("m16n8k8", F16, F16, "sm_75"),
    _mma("m16n8k8", BF16, F32, "sm_80"),
    _mma("m16n8k8", TF32, F32, "sm_80"),
    _mma("m16n8k4", TF32, F32, "sm_80"),
    *[_mma("m16n8k32", a, d, "sm_89", fb=b) for d in (F32, F16) for a, b in _pairs(FP8)],
    # integer mma.sync (sm_80): s8/u8 and s4/u4 with s32 c and d, wrapping or .satfinite
    *[_mma("m16n8k32", a, S32, "sm_80", fb=b, sat=sat) for a, b in _pairs((S8, U8))
      for sat in (False, True)],
    *[_mma("m16n8k64", a, S32, "sm_80", fb=b, frag_bits=4, sat=sat) for a, b in _pairs((S4, U4))
      for sat in (False, True)],
    # 2:4 sparse mma.sp (sm_80)
    _mma_sp("m16n8k32", F16, F32, "sm_80"), _mma_sp("m16n8k32", BF16, F32, "sm_80"),
    _volta(F32, L.c_m8n8k4_f32, 8),
    _volta(F16, L.c_m8n8k4_f16, 8),
    _wmma("m16n16k16", F16, F32, "sm_70"),
    _wmma("m16n16k16", F16, F16, "sm_70"),
    _wmma("m16n16k16", BF16, F32, "sm_80"),
    _wmma("m16n16k8", TF32, F32, "sm_80"),
    # Hopper wgmma (sm_90a)
    _wgmma(F16, F32), _wgmma(F16, F16), _wgmma(BF16, F32), _wgmma(TF32, F32),
    *[_wgmma(a, d, b) for d in (F32, F16) for a, b in _pairs(FP8)],
    # Blackwell tcgen05.mma (sm_100a)
    _tcgen05("f16", F16, F32), _tcgen05("f16", F16, F16), _tcgen05("f16", BF16, F32),
    _tcgen05("tf32", TF32, F32),
    *[_tcgen05("f8f6f4", a, d, b) for d in (F32, F16) for a, b in _pairs(F8F6F4)],
    *[_tcgen05("mxf8f6f4", a, F32, b, UE8M0, 32) for a, b in _pairs(F8F6F4)],
    _tcgen05("mxf4", E2M1, F32, scale=UE8M0, block=32),
    _tcgen05("mxf4nvf4", E2M1, F32, scale=UE8M0, block=32),
    _tcgen05("mxf4nvf4", E2M1, F32, scale=UE8M0, block=16),
    _tcgen05("mxf4nvf4", E2M1, F32, scale=UE4M3, block=16),
    # RTX Blackwell mma.sync (sm_120a): kind::f8f6f4 and the block-scaled kinds
    *[_mma("m16n8k32", a, d, "sm_120a", fb=b, kind="f8f6f4")
      for d in (F32, F16) for a, b in _pairs(F8F6F4)],
    *[_mma("m16n8k32", a, F32, "sm_120a", fb=b, kind="mxf8f6f4", scale=UE8M0, block=32, vec="1X")
      for a, b in _pairs(F8F6F4)],
    # kind::mxf4nvf4 with ue8m0 per 16 terms (MMA-Sim's m16n8k64 block16 ue8m0) is left
    # out: CUDA 13.0's ptxas refuses .scale_vec::4X with .ue8m0 for mma on sm_120a.
    *[_mma("m16n8k64", E2M1, F32, "sm_120a", kind=kind, scale=scale, block=block,
           vec=SCALE_VEC[(kind, block)], frag_bits=4)
      for kind, scale, block in (("mxf4", UE8M0, 32), ("mxf4nvf4", UE8M0, 32),
                                 ("mxf4nvf4", UE4M3, 16))],
]

# The instruction a probe uses when none is named, per (a, b, c, out, scale, block, sparsity):
# mma.sync where one exists (it runs on the most GPUs), else the only one.
DEFAULTS = {
    (F16, F16, F32, F32, "", 0, ""): "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
    (F16, F16, F16, F16, "", 0, ""): "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
    (BF16, BF16, F32, F32, "", 0, ""): "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
    (TF32, TF32, F32, F32, "", 0, ""): "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
    **{(a, b, d, d, "", 0, ""): f"mma.sync.aligned.m16n8k32.row.col.{PTX_TYPES[d]}.{PTX_TYPES[a]}."
                                  f"{PTX_TYPES[b]}.{PTX_TYPES[d]}"
       for d in (F32, F16) for a, b in _pairs(FP8)},
    # integer: the wrapping form (a .satfinite probe is asked for by name)
    **{(a, b, S32, S32, "", 0, ""): f"mma.sync.aligned.m16n8k32.row.col.s32.{PTX_TYPES[a]}."
                                      f"{PTX_TYPES[b]}.s32" for a, b in _pairs((S8, U8))},
    **{(a, b, S32, S32, "", 0, ""): f"mma.sync.aligned.m16n8k64.row.col.s32.{PTX_TYPES[a]}."
                                      f"{PTX_TYPES[b]}.s32" for a, b in _pairs((S4, U4))},
}
