"""Exact groups and block scales: the products of a dot product -> the terms
its blocks sum.

Block-scaled instructions (MX, NVFP4) multiply every product by a scale of
a (one per row of A and block of ``scale_block`` products along K) and one
of b (per column of B and block). Some sum ``group_size`` products exactly
before the block's window sees them. Both are defined here (group_sum,
apply_scales) and applied to each block's products by
tcsmt.datapath.chain, between the multipliers (tcsmt.datapath.products)
and the block's register (tcsmt.datapath.register).
"""

from __future__ import annotations

from dataclasses import replace

from tcsmt.datapath import bv
from tcsmt.datapath.register import specials
from tcsmt.datapath.terms import Term, is_dead
from tcsmt.model.params import ModelParams


def group_sum(I, p: ModelParams, prods: list[Term], ew: int) -> Term:
    """Products -> their exact sum as one Term.

    Every finite product is sig * 2**(exp - frac) with exp >= e0 = emin of
    a + emin of b, so each is shifted left by exp - e0 into a fixed-point
    word whose last bit is 2**(e0 - frac), and the signed sum is exact in
    a word ``bits_for(len(prods))`` bits wider than the largest product.
    The result has exponent e0 (its integer bits are in the significand),
    is live when one product is non-zero (a sum that cancels to zero still
    takes part in the alignment), and is NaN or infinite as a sum of its
    products is."""
    e0 = p.fin.emin + p.fb.emin
    span = (p.fin.emax - p.fin.emin) + (p.fb.emax - p.fb.emin)
    frac = prods[0].frac
    w = I.width(prods[0].sig) + span + bv.bits_for(len(prods)) + 1
    total = I.const(0, w)
    for t in prods:
        amount = I.sub(t.exp, bv.sconst(I, e0, ew))
        mag = bv.shl_by(I, bv.resize_u(I, t.sig, w), amount)
        total = I.add(total, bv.neg_if(I, t.sign, mag))
    neg, mag = bv.abs_s(I, total)
    nan, inf, inf_sign = specials(I, prods)
    live = bv.any_(I, [I.not_(is_dead(I, t)) for t in prods])
    return Term(I.ite(inf, inf_sign, neg), bv.sconst(I, e0, ew), mag, frac, nan, inf,
                prods[0].lead, live)


def apply_scales(I, p: ModelParams, t: Term, sa: Term, sb: Term) -> Term:
    """t times the scales sa and sb, exactly: their exponents add to t's,
    their significands multiply t's (a scale format without fraction bits
    and without subnormals, as ue8m0, has significand 1: only its exponent
    counts). A NaN scale makes the term NaN (p.scale_nan "nan"; "value":
    the number its fields spell); a zero scale (ue4m3) makes it zero (NaN
    if t is infinite), and dead (p.scale_zero "dead") or still aligned at
    its exponent ("aligned")."""
    sig, frac, exp = t.sig, t.frac, t.exp
    for s in (sa, sb):
        exp = I.add(exp, s.exp)
        if I.width(s.sig) > 1 or s.frac:
            w = I.width(sig) + I.width(s.sig)
            sig = I.mul(bv.resize_u(I, sig, w), bv.resize_u(I, s.sig, w))
            frac += s.frac
    zero_scale = I.or_(bv.is_zero(I, sa.sig), bv.is_zero(I, sb.sig))
    scale_nan = I.or_(sa.nan, sb.nan) if p.scale_nan == "nan" else I.bool_const(False)
    nan = I.or_(t.nan, scale_nan, I.and_(t.inf, zero_scale))
    live = I.not_(is_dead(I, t))
    if p.scale_zero == "dead":
        live = I.and_(live, I.not_(zero_scale))
    return replace(t, exp=exp, sig=sig, frac=frac, nan=nan, inf=I.and_(t.inf, I.not_(nan)),
                   live=live if t.live is not None or p.scale_zero != "dead" else None)
