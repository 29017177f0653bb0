"""Products: the exact product of two Terms, then the model's product
handling (alignment by the leading one, overflow, rounding to a format)."""

from __future__ import annotations

from dataclasses import replace

from tcsmt.datapath import bv
from tcsmt.datapath.rounding import round_fixed
from tcsmt.datapath.stage import stage
from tcsmt.datapath.terms import (
    Term,
    flush_steps,
    lead_exp,
    plain_register,
    result_format,
    term_fixed,
    unpack,
)
from tcsmt.model.params import ModelParams


@stage(params=2)
def multiply(I, x: Term, y: Term, p: ModelParams, ew: int) -> Term:
    """The exact product: significands multiplied in full width, exponents
    added. NaN for NaN inputs and for infinity times zero. Then
    ``finish_product`` applies the model's product handling."""
    w = I.width(x.sig) + I.width(y.sig)
    sig = I.mul(bv.resize_u(I, x.sig, w), bv.resize_u(I, y.sig, w))
    exp = I.add(x.exp, y.exp)
    xz, yz = bv.is_zero(I, x.sig), bv.is_zero(I, y.sig)
    nan = I.or_(x.nan, y.nan, I.and_(x.inf, yz), I.and_(y.inf, xz))
    inf = I.and_(I.or_(x.inf, y.inf), I.not_(nan))
    t = Term(bv.xor_b(I, x.sign, y.sign), exp, sig, x.frac + y.frac, nan, inf)
    return finish_product(I, t, p, ew)


def finish_product(I, t: Term, p: ModelParams, ew: int) -> Term:
    """Product handling after the exact multiply: alignment by the leading
    one (normalised), overflow to infinity, flushing (flush_every_step),
    rounding to a format. Queries
    that stand a free significand and exponent in for a product call this
    too, so every hypothesis sees its own product handling."""
    lead = p.product_alignment == "normalised" and not lead_is_moot(p)
    t = replace(t, lead=lead)
    if p.product_overflow == "inf":
        big = I.slt(I.const(p.facc.emax, ew), lead_exp(I, t, ew))
        t = replace(t, inf=I.or_(t.inf, I.and_(big, I.not_(t.nan), I.not_(bv.is_zero(I, t.sig)))))
    if flush_steps(p):       # a product below acc_format's normal range: a zero of its sign
        tiny = I.slt(lead_exp(I, t, ew), bv.sconst(I, p.facc.emin, ew))
        t = replace(t, sig=I.ite(tiny, I.const(0, I.width(t.sig)), t.sig))
    if p.product_rounding != "exact":
        fmt = p.fin if p.product_rounding == "in_format" else p.fout
        bits = round_fixed(I, term_fixed(I, t, ew), fmt, "rne", ew, "ieee", "ieee", False)
        t = replace(unpack(I, fmt, bits, ew, False), lead=lead)
    return t


def lead_is_moot(p: ModelParams) -> bool:
    """Whether aligning rounded products by their leading one gives every
    block the very sum aligning them by their exponent gives, so the
    datapath reads no product_alignment (and both build one circuit).

    A product rounded to a format (product_rounding) is unpacked with one
    integer bit: a normal one's leading one is its exponent, so the two
    alignments differ only where a product subnormal in that format sets
    the alignment point, every other term lying below the format's emin.
    By its exponent the point is then emin, by its leading one lower. In
    the block register (block normalisation, c placed globally, no pair
    sums, scales or windows, truncating or flooring alignment) both sums
    are exact, hence equal, when
      * F >= the format's fraction bits (no product bit lies below
        emin - F),
      * emin - F <= the last place of c's format and of the block result's
        format (no bit of a c, the first or a chained one, lies below it),
      * 2**carry_bits > block_size + 1 (no register wraps: each of the
        block's terms is below 2 units of the alignment point).
    Rounding to nearest at the alignment aligns every term by its leading
    one anyway (blocks.by_leading_one); a format without subnormals has
    no such product."""
    if p.product_rounding == "exact" or p.product_alignment == "raw":
        return False
    fmt = p.fin if p.product_rounding == "in_format" else p.fout
    if not fmt.subnormals:
        return True
    if not plain_register(p) or p.fscale is not None or p.c_lead_bits:
        return False
    last = min(p.fc.last_exp, result_format(p).last_exp)
    carry_ok = p.carry_bits is None or 2 ** p.carry_bits > p.block_size + 1
    return p.F >= fmt.frac_bits and fmt.emin - p.F <= last and carry_ok
