"""Products: the exact product of two Terms, then the model's product
handling (alignment by the leading one, overflow, rounding to a format)."""

from __future__ import annotations

from dataclasses import replace

from tcsmt.datapath import bv
from tcsmt.datapath.rounding import round_fixed
from tcsmt.datapath.stage import stage
from tcsmt.datapath.terms import Term, flush_steps, lead_exp, term_fixed, unpack
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
    lead = p.product_alignment == "normalised"
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
