"""The matrix instructions a hardware probe can run, and their fragment layouts.

One warp runs one instruction D = A*B + C. For ``mma.sync`` every lane holds
a few elements of A, B, C and D in registers (a "fragment"); which lane and
which element hold A[row][col] is fixed by the PTX ISA ("Matrix Fragments for
mma.m16n8k16" and its siblings). This module writes those rules once, as
Python functions ``(lane, i) -> (row, col)`` of the element ``i`` a lane
holds. The CUDA generator turns them into tables; the tests check that every
layout covers its matrix exactly once.

Notation of the PTX ISA: ``groupID = lane >> 2``, ``threadID_in_group =
lane % 4``. Elements are numbered low to high inside each 32-bit register
(a .f16x2 register holds element 2j in its low half).

``mma.sync.aligned.m8n8k4`` (Volta) is different: a warp runs four separate
8x8x4 products, one per quad pair (lanes 0-3 with 16-19, 4-7 with 20-23, ...).
Its layouts here number the rows of A, C and D (and the columns of B) of quad
pair q as 8q..8q+7, so one bijection check covers all four products and only
quad pair 0 holds the row and column the probe uses.

``wmma`` (nvcuda::wmma) fragments are opaque: the probe loads them from
shared memory with ``load_matrix_sync`` and needs no layout.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tcsmt.errors import UserError
from tcsmt.model.formats import get_format

Layout = Callable[[int, int], tuple[int, int]]


# ---------------------------------------------------------------------------
# Fragment layouts (PTX ISA, "Matrix Fragments for mma.mXnYkZ")
# ---------------------------------------------------------------------------

def _gt(lane: int) -> tuple[int, int]:
    return lane >> 2, lane & 3


def a_m16n8k16_16bit(lane, i):
    """a0..a7 in four .f16x2/.bf16x2 registers: rows g, g+8; cols 2t.., +8 for i >= 4."""
    g, t = _gt(lane)
    return g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)


def b_m16n8k16_16bit(lane, i):
    """b0..b3 in two 16x2 registers: k = 2t + (i & 1), +8 for i >= 2; column g."""
    g, t = _gt(lane)
    return 2 * t + (i & 1) + 8 * (i >> 1), g


def a_m16n8k8_16bit(lane, i):
    """a0..a3 in two 16x2 registers: rows g (a0, a1) and g+8 (a2, a3)."""
    g, t = _gt(lane)
    return g + 8 * (i >> 1), 2 * t + (i & 1)


def b_m16n8k8_16bit(lane, i):
    """b0, b1 in one 16x2 register: k = 2t + i; column g."""
    g, t = _gt(lane)
    return 2 * t + i, g


def a_m16n8k8_tf32(lane, i):
    """a0..a3 in four .b32 registers: rows g (a0, a2), g+8 (a1, a3); cols t, t+4 (a2, a3)."""
    g, t = _gt(lane)
    return g + 8 * (i & 1), t + 4 * (i >> 1)


def b_m16n8k8_tf32(lane, i):
    """b0, b1 in two .b32 registers: k = t (b0), t+4 (b1); column g."""
    g, t = _gt(lane)
    return t + 4 * i, g


def a_m16n8k4_tf32(lane, i):
    """a0, a1: rows g (a0) and g+8 (a1); column t."""
    g, t = _gt(lane)
    return g + 8 * i, t


def b_m16n8k4_tf32(lane, i):
    """b0: k = t; column g."""
    g, t = _gt(lane)
    return t, g


def a_m16n8k32_8bit(lane, i):
    """a0..a15 in four .b32 registers of four bytes: rows g (a0-a3, a8-a11) and
    g+8 (a4-a7, a12-a15); cols 4t + (i & 3), +16 for i >= 8."""
    g, t = _gt(lane)
    return g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3)


def b_m16n8k32_8bit(lane, i):
    """b0..b7 in two .b32 registers: k = 4t + (i & 3), +16 for i >= 4; column g."""
    g, t = _gt(lane)
    return 4 * t + (i & 3) + 16 * (i >> 2), g


def c_m16n8(lane, i):
    """c0..c3 (four .f32 registers or two .f16x2): rows g (c0, c1) and g+8; cols 2t + (i & 1)."""
    g, t = _gt(lane)
    return g + 8 * (i >> 1), 2 * t + (i & 1)


def _m8n8k4_lane(lane: int) -> tuple[int, int, int]:
    """(quad pair, 1 for the high group of lanes 16-31, lane % 4)."""
    return (lane >> 2) & 3, lane >> 4, lane & 3


def a_m8n8k4_row(lane, i):
    """Row-major A: row lane % 4 (+4 for lanes 16-31), column i; rows 8q.. for quad pair q."""
    q, hi, lt = _m8n8k4_lane(lane)
    return 8 * q + lt + 4 * hi, i


def b_m8n8k4_col(lane, i):
    """Column-major B: k = i, column lane % 4 (+4 for lanes 16-31); columns 8q.. for quad pair q."""
    q, hi, lt = _m8n8k4_lane(lane)
    return i, 8 * q + lt + 4 * hi


def c_m8n8k4_f16(lane, i):
    """.f16 C/D, c0..c7 in four .f16x2 registers: row lane % 4 (+4 high), column i."""
    q, hi, lt = _m8n8k4_lane(lane)
    return 8 * q + lt + 4 * hi, i


def c_m8n8k4_f32(lane, i):
    """.f32 C/D, c0..c7: row (lane % 2) + (i & 2) (+4 high), column (i & 4) + (lane & 2) + (i & 1)."""
    q, hi, lt = _m8n8k4_lane(lane)
    return 8 * q + (lt & 1) + (i & 2) + 4 * hi, (i & 4) + (lt & 2) + (i & 1)


# ---------------------------------------------------------------------------
# The instruction table
# ---------------------------------------------------------------------------

PTX_TYPES = {"float16": "f16", "bfloat16": "bf16", "tf32": "tf32", "float32": "f32",
             "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}


@dataclass(frozen=True)
class Instruction:
    """One matrix instruction: D (m x n) = A (m x k) * B (k x n) + C.

    The fragment fields are None for wmma; ``layout_sizes`` gives the
    matrix each layout covers (four products side by side for m8n8k4).
    """
    name: str
    api: str                      # "mma" (inline PTX mma.sync) or "wmma" (nvcuda::wmma)
    m: int
    n: int
    k: int
    in_format: str
    c_format: str
    out_format: str
    min_sm: int
    a_layout: Layout | None = None
    b_layout: Layout | None = None
    c_layout: Layout | None = None
    a_elems: int = 0              # elements of A, B, C/D held by one lane
    b_elems: int = 0
    c_elems: int = 0
    quad_pairs: int = 1           # separate products one warp runs (4 for m8n8k4)

    @property
    def ptx_types(self) -> str:
        """dtype.atype.btype.ctype as in the PTX name."""
        t = PTX_TYPES
        return f"{t[self.out_format]}.{t[self.in_format]}.{t[self.in_format]}.{t[self.c_format]}"

    @property
    def shape(self) -> str:
        return f"m{self.m}n{self.n}k{self.k}"

    @property
    def a_rows(self) -> int:
        return self.m * self.quad_pairs

    @property
    def b_cols(self) -> int:
        return self.n * self.quad_pairs

    def layout_sizes(self) -> dict[str, tuple[int, int]]:
        """Rows and columns each fragment layout covers: quad pair q of
        m8n8k4 owns rows 8q.. of A and C/D and columns 8q.. of B."""
        return {"a": (self.a_rows, self.k), "b": (self.k, self.b_cols), "c": (self.a_rows, self.n)}

    def formats(self) -> dict[str, str]:
        return {"in": self.in_format, "c": self.c_format, "out": self.out_format}


def _mma(shape, fin, fc, min_sm, a, b, c, na, nb, nc, quad_pairs=1) -> Instruction:
    m, n, k = (int(x) for x in shape[1:].replace("n", " ").replace("k", " ").split())
    fout = fc
    types = f"{PTX_TYPES[fout]}.{PTX_TYPES[fin]}.{PTX_TYPES[fin]}.{PTX_TYPES[fc]}"
    return Instruction(f"mma.sync.aligned.{shape}.row.col.{types}", "mma", m, n, k, fin, fc, fout,
                       min_sm, a, b, c, na, nb, nc, quad_pairs)


def _wmma(shape, fin, fc, min_sm) -> Instruction:
    m, n, k = (int(x) for x in shape[1:].replace("n", " ").replace("k", " ").split())
    types = f"{PTX_TYPES[fc]}.{PTX_TYPES[fin]}.{PTX_TYPES[fin]}.{PTX_TYPES[fc]}"
    return Instruction(f"wmma.{shape}.row.col.{types}", "wmma", m, n, k, fin, fc, fc, min_sm)


F16, BF16, TF32, F32 = "float16", "bfloat16", "tf32", "float32"
E4M3, E5M2 = "float8_e4m3fn", "float8_e5m2"

INSTRUCTIONS: list[Instruction] = [
    _mma("m16n8k16", F16, F32, 80, a_m16n8k16_16bit, b_m16n8k16_16bit, c_m16n8, 8, 4, 4),
    _mma("m16n8k16", F16, F16, 80, a_m16n8k16_16bit, b_m16n8k16_16bit, c_m16n8, 8, 4, 4),
    _mma("m16n8k16", BF16, F32, 80, a_m16n8k16_16bit, b_m16n8k16_16bit, c_m16n8, 8, 4, 4),
    _mma("m16n8k8", F16, F32, 75, a_m16n8k8_16bit, b_m16n8k8_16bit, c_m16n8, 4, 2, 4),
    _mma("m16n8k8", F16, F16, 75, a_m16n8k8_16bit, b_m16n8k8_16bit, c_m16n8, 4, 2, 4),
    _mma("m16n8k8", BF16, F32, 80, a_m16n8k8_16bit, b_m16n8k8_16bit, c_m16n8, 4, 2, 4),
    _mma("m16n8k8", TF32, F32, 80, a_m16n8k8_tf32, b_m16n8k8_tf32, c_m16n8, 4, 2, 4),
    _mma("m16n8k4", TF32, F32, 80, a_m16n8k4_tf32, b_m16n8k4_tf32, c_m16n8, 2, 1, 4),
    _mma("m16n8k32", E4M3, F32, 89, a_m16n8k32_8bit, b_m16n8k32_8bit, c_m16n8, 16, 8, 4),
    _mma("m16n8k32", E5M2, F32, 89, a_m16n8k32_8bit, b_m16n8k32_8bit, c_m16n8, 16, 8, 4),
    _mma("m8n8k4", F16, F32, 70, a_m8n8k4_row, b_m8n8k4_col, c_m8n8k4_f32, 4, 4, 8, 4),
    _mma("m8n8k4", F16, F16, 70, a_m8n8k4_row, b_m8n8k4_col, c_m8n8k4_f16, 4, 4, 8, 4),
    _wmma("m16n16k16", F16, F32, 70),
    _wmma("m16n16k16", F16, F16, 70),
    _wmma("m16n16k16", BF16, F32, 80),
    _wmma("m16n16k8", TF32, F32, 80),
]

BY_NAME = {ins.name: ins for ins in INSTRUCTIONS}

# The instruction a probe uses when none is named, per (in, c, out) formats.
DEFAULTS = {
    (F16, F32, F32): "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
    (F16, F16, F16): "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
    (BF16, F32, F32): "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
    (TF32, F32, F32): "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
    (E4M3, F32, F32): "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
    (E5M2, F32, F32): "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32",
}


def _pair_label(fin: str, fc: str, fout: str) -> str:
    return f"in {fin}, c {fc}, out {fout}"


def choose_instruction(fin: str, fc: str, fout: str, name: str | None = None) -> Instruction:
    """The instruction for a format triple (canonical format names).

    ``name`` may be a full name (``mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32``),
    an API (``mma``/``mma.sync``/``wmma``: that API's instruction for the
    formats, the largest k first), or a shape (``m16n8k8``, ``wmma.m16n16k8``).
    """
    pair = (fin, fc, fout)
    fits = [ins for ins in INSTRUCTIONS if (ins.in_format, ins.c_format, ins.out_format) == pair]
    if not fits:
        have = "; ".join(sorted({_pair_label(*k) for k in DEFAULTS}))
        raise UserError(f"no supported instruction for {_pair_label(*pair)} (supported: {have})")
    if name is None or not str(name).strip():
        return BY_NAME[DEFAULTS[pair]]
    key = str(name).strip().lower()
    if key in BY_NAME:
        ins = BY_NAME[key]
        if ins not in fits:
            raise UserError(f"instruction {key} computes {_pair_label(*ins.formats().values())}, "
                            f"not {_pair_label(*pair)}")
        return ins
    if key in ("mma", "mma.sync"):
        match = [i for i in fits if i.api == "mma"]
    elif key == "wmma":
        match = [i for i in fits if i.api == "wmma"]
    else:
        api, _, shape = key.rpartition(".")
        api = "mma" if api == "mma.sync" else api
        match = [i for i in fits if i.shape == shape and api in ("", i.api)]
    if not match:
        known = ", ".join(i.name for i in fits)
        raise UserError(f"unknown instruction {name!r} for {_pair_label(*pair)} (known: {known})")
    return max(match, key=lambda i: (i.api == "mma", i.k))


def check_layout(layout: Layout, elems: int, rows: int, cols: int) -> None:
    """Raise ValueError unless the 32 lanes x ``elems`` elements cover the
    rows x cols matrix exactly once."""
    seen: dict[tuple[int, int], tuple[int, int]] = {}
    for lane in range(32):
        for i in range(elems):
            rc = layout(lane, i)
            if not (0 <= rc[0] < rows and 0 <= rc[1] < cols):
                raise ValueError(f"lane {lane} element {i} -> {rc} is outside {rows}x{cols}")
            if rc in seen:
                raise ValueError(f"lane {lane} element {i} and lane/element {seen[rc]} both hold {rc}")
            seen[rc] = (lane, i)
    if len(seen) != rows * cols:
        raise ValueError(f"{len(seen)} of {rows * cols} elements covered")


def element_bits(fmt_name: str) -> int:
    """Bits one element takes in a fragment register (tf32 sits in 32 bits)."""
    return get_format(fmt_name).storage_bits
