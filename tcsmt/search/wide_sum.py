"""The exact sum of a block's terms stated plainly, for proofs: every term
shifted to units of 2^low in one signed register wide enough for any sum
(no sorting, no splitting: tcsmt.search.exact_register proves that the
model's bounded register rounds as this sum does)."""

from __future__ import annotations

from tcsmt.datapath import bv
from tcsmt.datapath.register import sum_flags
from tcsmt.datapath.terms import Fixed


def term_value(I, t, low: int, width: int, ew: int):
    """One term's exact value, signed, in units of 2^low."""
    sig = bv.resize_u(I, t.sig, width)
    shift = I.sub(I.sub(t.exp, I.const(t.frac, ew)), bv.sconst(I, low, ew))
    return bv.neg_if(I, t.sign, bv.shl_by(I, sig, shift))


def wide_total(I, terms, low: int, width: int, ew: int):
    """The terms' exact sum, signed, in units of 2^low in one wide register."""
    total = I.const(0, width)
    for t in terms:
        total = I.add(total, term_value(I, t, low, width, ew))
    return total


def fixed_of(I, S, low: int, ew: int, flags) -> Fixed:
    """A signed wide sum S (units of 2^low) with the sum's flags (nan, inf,
    inf_sign, neg_zeros, pos_zeros) as round_fixed reads it."""
    neg, mag = bv.abs_s(I, S)
    return Fixed(neg, mag, bv.sconst(I, low, ew), *flags)


def wide_sum(I, terms, low: int, width: int, ew: int) -> Fixed:
    """Every term shifted to units of 2^low in one wide register."""
    return fixed_of(I, wide_total(I, terms, low, width, ew), low, ew, sum_flags(I, terms))


def abs_le(I, x, limit):
    """|x| <= limit (x signed, limit a non-negative word of its width)."""
    _, mag = bv.abs_s(I, x)
    return I.not_(I.ult(limit, mag))


__all__ = ["abs_le", "fixed_of", "sum_flags", "term_value", "wide_sum", "wide_total"]
