"""Calibration vectors: what every probe runs besides the user's vectors.

A probe cannot see where its operands landed inside the matrix unit. It
runs, after the user's vectors, K + 1 vectors whose results are exact under
every model and say whether the terms reached the right places:

* for each k: a = b = the unit vector e_k (1 at term k, +0 elsewhere), c = +0,
  and, for a block-scaled instruction, scale factor 2^j on block j of a and
  1 on every block of b. The exact result is 2^(k // scale_block) (1 without
  scales): a wrong pairing of A's and B's terms gives 0, a term in the wrong
  scale block gives the wrong power of two;
* a = b = 0 and c = 1.5: d = 1.5 shows that c was loaded and D read back.

A sparse instruction's calibration masks select term k and its neighbour
in k's group of four (and the first two terms of every other group), so a
wrong metadata layout or a wrong compressed column of A gives 0.

The probe compares each with its expected d and reports the first
mismatches under "layout_check". The calibration cannot see a reordering
that moves the terms of A and B alike inside one scale block (a dot product
does not change under it); such an order is taken from the vendor's
documentation.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from tcsmt.instructions.instruction import Instruction
from tcsmt.model.formats import Format, get_format


@dataclass(frozen=True)
class Calibration:
    label: str
    a: list[int]
    b: list[int]
    c: int
    scale_a: list[int]
    scale_b: list[int]
    d: int            # the exact result in the out format
    mask: list[int] | None = None    # sparse instructions: the selected terms


def _one(fmt: Format) -> int:
    return fmt.round_value(Fraction(1))


def _power(fmt: Format, j: int) -> int:
    """2^j in a scale format."""
    return fmt.pack(0, fmt.bias + j, 0)


def calibration_vectors(ins: Instruction) -> list[Calibration]:
    fa, fb = get_format(ins.in_format), get_format(ins.b_fmt)
    fc, fout = get_format(ins.c_format), get_format(ins.out_format)
    blocks = ins.scale_blocks
    fs = get_format(ins.scale_format) if blocks else None
    ones_b = [_power(fs, 0)] * blocks if fs else []
    powers = [_power(fs, j) for j in range(blocks)] if fs else []
    out = []
    for k in range(ins.k):
        a, b = [0] * ins.k, [0] * ins.k
        a[k], b[k] = _one(fa), _one(fb)
        j = k // ins.scale_block if blocks else 0
        out.append(Calibration(f"term {k}", a, b, 0, powers, ones_b,
                               fout.round_value(Fraction(2) ** j), _selecting(ins, k)))
    zeros = [0] * ins.k
    out.append(Calibration("c alone", zeros, zeros, fc.round_value(Fraction(3, 2)),
                           powers, ones_b, fout.round_value(Fraction(3, 2)), _selecting(ins, 0)))
    return out


def _selecting(ins: Instruction, k: int) -> list[int] | None:
    """A 2:4 mask selecting term k and its neighbour (k ^ 1), and the first
    two terms of every other group of four; None for a dense instruction."""
    if not ins.sparsity:
        return None
    return [int(i in (k, k ^ 1) if i // 4 == k // 4 else i % 4 < 2) for i in range(ins.k)]
