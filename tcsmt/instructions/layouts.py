"""Fragment layouts of the matrix instructions a probe runs.

One warp (NVIDIA) or one wavefront (AMD) runs one instruction D = A*B + C.
Every lane holds a few elements of A, B, C and D in registers (a
"fragment"); which lane and which element hold A[row][col] is fixed by the
vendor's documentation. Each rule is written here once, as a function
``(lane, i) -> (row, col)`` of the element ``i`` a lane holds; the program
generators turn them into tables, and the tests check that every layout
covers its matrix exactly once and spot-check entries typed from the
documents.

NVIDIA (PTX ISA, "Matrix Fragments for mma.mXnYkZ"): ``groupID = lane >> 2``,
``threadID_in_group = lane % 4``. Elements are numbered low to high inside
each 32-bit register (a .f16x2 register holds element 2j in its low half).

``mma.sync.aligned.m8n8k4`` (Volta) is different: a warp runs four separate
8x8x4 products, one per quad pair (lanes 0-3 with 16-19, 4-7 with 20-23, ...).
Its layouts here number the rows of A, C and D (and the columns of B) of quad
pair q as 8q..8q+7, so one bijection check covers all four products and only
quad pair 0 holds the row and column the probe uses.

The AMD MFMA layouts are in ``tcsmt.instructions.mfma``.
"""

from __future__ import annotations

from collections.abc import Callable

Layout = Callable[[int, int], tuple[int, int]]


def _gt(lane: int) -> tuple[int, int]:
    return lane >> 2, lane & 3


# ---------------------------------------------------------------------------
# mma.sync m16n8kK
# ---------------------------------------------------------------------------

def a_m16n8k16_16bit(lane, i):
    """a0..a7 in four .f16x2/.bf16x2 registers: rows g, g+8; cols 2t.., +8 for i >= 4."""
    g, t = _gt(lane)
    return g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)


def b_m16n8k16_16bit(lane, i):
    """b0..b3 in two 16x2 registers: k = 2t + (i & 1), +8 for i >= 2; column g."""
    g, t = _gt(lane)
    return 2 * t + (i & 1) + 8 * (i >> 1), g


def b_m16n8k32_16bit(lane, i):
    """mma.sp m16n8k32 with .f16/.bf16 (B dense, 32 x 8): b0..b7 in four
    16x2 registers: k = 2t + (i & 1), +8 per register; column g. (The
    compressed A of that shape, 16 x 16, has the layout of a_m16n8k16_16bit.)"""
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
    g+8 (a4-a7, a12-a15); cols 4t + (i & 3), +16 for i >= 8. The same for
    .e4m3/.e5m2 and for kind::f8f6f4, whose fp6 and fp4 elements sit in
    8-bit containers."""
    g, t = _gt(lane)
    return g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3)


def b_m16n8k32_8bit(lane, i):
    """b0..b7 in two .b32 registers: k = 4t + (i & 3), +16 for i >= 4; column g."""
    g, t = _gt(lane)
    return 4 * t + (i & 3) + 16 * (i >> 2), g


def a_m16n8k64_4bit(lane, i):
    """a0..a31 in four .b32 registers of eight .e2m1 (or .u4/.s4): rows g for
    i < 8 and 16 <= i < 24, else g+8; cols 8t + (i & 7), +32 for i >= 16."""
    g, t = _gt(lane)
    return g + 8 * ((i >> 3) & 1), 8 * t + (i & 7) + 32 * (i >> 4)


def b_m16n8k64_4bit(lane, i):
    """b0..b15 in two .b32 registers: k = 8t + (i & 7), +32 for i >= 8; column g."""
    g, t = _gt(lane)
    return 8 * t + (i & 7) + 32 * (i >> 3), g


def c_m16n8(lane, i):
    """c0..c3 (four .f32 registers or two .f16x2): rows g (c0, c1) and g+8; cols 2t + (i & 1)."""
    g, t = _gt(lane)
    return g + 8 * (i >> 1), 2 * t + (i & 1)


# ---------------------------------------------------------------------------
# mma.sync m8n8k4 (Volta)
# ---------------------------------------------------------------------------

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
# wgmma A from registers (PTX ISA, "Register Fragments" of wgmma .m64nNk*)
# ---------------------------------------------------------------------------
# A warpgroup of four warps runs m64: warp w holds rows 16w..16w+15 with the
# m16n8kK layout of mma.sync inside its 16 rows.

def wgmma_a(per_warp: Layout) -> Layout:
    """The m64 A layout for 128 threads from a warp's m16 layout."""
    def layout(thread, i):
        r, col = per_warp(thread & 31, i)
        return 16 * (thread >> 5) + r, col
    layout.__doc__ = f"warp w: rows 16w + ({per_warp.__name__})"
    return layout


# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------

def check_layout(layout: Layout, elems: int, rows: int, cols: int, lanes: int = 32) -> None:
    """Raise ValueError unless the lanes x ``elems`` elements cover the
    rows x cols matrix exactly once."""
    seen: dict[tuple[int, int], tuple[int, int]] = {}
    for lane in range(lanes):
        for i in range(elems):
            rc = layout(lane, i)
            if not (0 <= rc[0] < rows and 0 <= rc[1] < cols):
                raise ValueError(f"lane {lane} element {i} -> {rc} is outside {rows}x{cols}")
            if rc in seen:
                raise ValueError(f"lane {lane} element {i} and lane/element {seen[rc]} both hold {rc}")
            seen[rc] = (lane, i)
    if len(seen) != rows * cols:
        raise ValueError(f"{len(seen)} of {rows * cols} elements covered")
