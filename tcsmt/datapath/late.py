"""Late c placement (AMD CDNA3): the products are summed first, in one sum
or in interleaved groups, and c is added to that unrounded sum with both
rounded down, then the sum is rounded down to late_frac_bits and rounded
to the output."""

from __future__ import annotations

from dataclasses import replace

from tcsmt.datapath import bv
from tcsmt.datapath.register import alignment_point, block_sum
from tcsmt.datapath.rounding import round_fixed
from tcsmt.datapath.terms import (
    Fixed,
    Term,
    flush_out,
    is_dead,
    result_format,
    term_fixed,
    unpack,
)
from tcsmt.model.formats import internal_format
from tcsmt.model.params import ModelParams


def sum_term(I, p: ModelParams, s: Fixed, parts: list[Term], ew: int) -> Term:
    """A sum with F fraction bits below its alignment point (s.scale + F)
    as a Term at that point. With late_sum_exponent = "products" it keeps
    the point even when it cancels to zero, as long as one of ``parts``
    is live."""
    live = None
    if p.late_sum_exponent == "products":
        live = bv.any_(I, [I.not_(is_dead(I, t)) for t in parts])
    return Term(I.ite(s.inf, s.inf_sign, s.sign), I.add(s.scale, I.const(p.F, ew)),
                s.mag, p.F, s.nan, s.inf, live=live)


def product_sum(I, p: ModelParams, prods: list[Term], ew: int, trace=None) -> Term:
    """The block's products summed, truncated to F fraction bits below their
    largest exponent; with product_groups = G, product k goes to group
    k mod G, each group is summed so against its own largest exponent, and
    the group sums are added, each rounded down to F fraction bits below
    the largest group exponent (AMD CDNA3 fp8: the even and the odd
    products)."""
    G = p.product_groups
    if G == 1:
        s = block_sum(I, p, prods, ew, p.F, p.align_rounding, p.min_exponent, trace=trace)
        return sum_term(I, p, s, prods, ew)
    groups = [prods[g::G] for g in range(G) if prods[g::G]]
    parts = [sum_term(I, p, block_sum(I, p, grp, ew, p.F, p.align_rounding, p.min_exponent), grp, ew)
             for grp in groups]
    s = block_sum(I, p, parts, ew, p.F, "floor", None, keeps=[p.F] * len(parts), trace=trace)
    return sum_term(I, p, s, parts, ew)


def drop_far_c(I, p: ModelParams, dot: Term, c: Term, ew: int) -> Term:
    """c as +0 where its exponent lies more than late_c_window below the
    alignment point of the product sum and c (its NaN and infinity flags
    stay)."""
    if p.late_c_window is None:
        return c
    e_max = alignment_point(I, [dot, c], ew, p.fc.emin)
    far = I.slt(c.exp, I.sub(e_max, I.const(p.late_c_window, ew)))
    return replace(c, sign=I.and_(c.sign, I.not_(far)),
                   sig=I.ite(far, I.const(0, I.width(c.sig)), c.sig))


def late_block(I, p: ModelParams, prods: list[Term], c: Term, ew: int, trace=None):
    """Late c placement: the product sum (product_sum), then c added to it
    with both rounded down (toward minus infinity), the sum keeping
    late_frac_bits + 1 fraction bits of the product sum and F of c below
    their common alignment point; the result rounded down to
    late_frac_bits, then rounded to the output with final_rounding."""
    dot = product_sum(I, p, prods, ew, trace)
    c = drop_far_c(I, p, dot, c, ew)
    f2 = p.late_frac_bits
    assert f2 is not None        # validate: late placement needs late_frac_bits
    # a zero c still sits at exponent emin, so emin floors the alignment point
    s2 = block_sum(I, p, [dot, c], ew, p.F, "floor", p.fc.emin,
                   keeps=[f2 + 1, p.F], trace=trace)
    mid = internal_format(p.fout.exp_bits, f2)
    bits = round_fixed(I, s2, mid, "rd", ew, p.overflow, p.zero_sign, False)
    return round_fixed(I, term_fixed(I, unpack(I, mid, bits, ew, False), ew), result_format(p),
                       p.final_rounding, ew, p.overflow, p.zero_sign, flush_out(p))
