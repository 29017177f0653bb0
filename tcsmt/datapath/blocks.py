"""One block: products and c to a rounded result, in the IEEE reference
orders, with late c placement, exact sums or the block's register.
(tcsmt.datapath.chain chains blocks along a dot product.)"""

from __future__ import annotations

from dataclasses import replace

from tcsmt.datapath import bv, late
from tcsmt.datapath.exact import exact_sum
from tcsmt.datapath.register import block_sum
from tcsmt.datapath.rounding import round_fixed
from tcsmt.datapath.stage import stage
from tcsmt.datapath.terms import (
    Term,
    flush_out,
    flush_steps,
    is_dead,
    lead_exp,
    plain_register,
    result_format,
    term_fixed,
    unpack,
)
from tcsmt.datapath.window import c_alone
from tcsmt.model.formats import Format, internal_format
from tcsmt.model.params import ModelParams


def acc_internal(p: ModelParams) -> Format:
    """The accumulator format each addition is rounded to in IEEE modes."""
    return internal_format(p.facc.exp_bits, p.F) if p.align_bits else p.facc


def inner_mode(p: ModelParams) -> str:
    return "rz" if p.align_rounding == "truncate" else p.align_rounding


def ieee_alignment(p: ModelParams) -> bool:
    """Whether terms are aligned with an IEEE rounding (guard, round and
    sticky bits, the alignment point at the largest leading one)."""
    return p.align_rounding in ("rz", "rne", "ru", "rd")


def by_leading_one(terms: list[Term]) -> list[Term]:
    """The terms aligned by their leading ones: IEEE rounding with guard,
    round and sticky bits needs the alignment point at the leading one of
    the largest term (a product of a subnormal input has its leading one up
    to 2*frac_bits below its raw exponent)."""
    return [replace(t, lead=True) for t in terms]


@stage()
def led(I, terms: list[Term]) -> tuple[Term, ...]:
    """by_leading_one as a stage: an interpretation that shares stage
    results hands back the same terms for the same terms, so the stages
    after it (block_sum) find them by their numbers instead of by their
    fields (a tuple: a shared result is never changed)."""
    return tuple(by_leading_one(terms))


@stage(params=0)
def add_rounded(I, p: ModelParams, terms: list[Term], ew: int, trace=None) -> Term:
    """A sum rounded to the accumulator format, as a Term (one IEEE addition
    when given two terms).

    In IEEE modes the terms are aligned by their leading ones: guard, round
    and sticky bits round correctly only when the term that sets the
    alignment point has its leading one there, and a product of a subnormal
    input has its leading one up to 2*frac_bits below its raw exponent (the
    sticky bit then landed above the rounding position)."""
    fmt = acc_internal(p)
    if p.align_rounding != "truncate":
        terms = list(led(I, terms))
    s = block_sum(I, p, terms, ew, p.F, p.align_rounding, None, trace=trace)
    bits = round_fixed(I, s, fmt, inner_mode(p), ew, p.overflow, p.zero_sign, flush_steps(p))
    return unpack(I, fmt, bits, ew, False)


def add_ieee(I, p: ModelParams, x: Term, y: Term, fmt: Format, mode: str, ew: int):
    """One IEEE addition x + y rounded into fmt with mode (guard, round and
    sticky bits make a two-term sum round exactly, the terms aligned by
    their leading ones as in add_rounded); returns fmt's bits."""
    x, y = led(I, [x, y])
    s = block_sum(I, p, [x, y], ew, fmt.frac_bits, mode, None, carry=None)
    return round_fixed(I, s, fmt, mode, ew, p.overflow, p.zero_sign, flush_out(p))


def every_add_order(I, p: ModelParams, c: Term, prods: list[Term], ew: int, trace) -> Term:
    """Sum c and the products with one rounding per addition, in p.add_order."""
    if p.add_order == "pairwise":
        level = prods
        while len(level) > 1:
            nxt = [add_rounded(I, p, level[i:i + 2], ew) if i + 1 < len(level) else level[i]
                   for i in range(0, len(level), 2)]
            level = nxt
        return add_rounded(I, p, [c, level[0]], ew, trace=trace)
    terms = [c] + prods
    if p.add_order == "reverse":
        terms = [c] + prods[::-1]
    elif p.add_order == "largest_first":
        terms = sort_by_magnitude(I, terms, ew)
    acc = terms[0]
    for t in terms[1:]:
        acc = add_rounded(I, p, [acc, t], ew)
    return acc


def magnitude_key(I, t: Term, ew: int):
    """An unsigned word ordered like |t| for finite terms of one shape."""
    zero = bv.is_zero(I, t.sig)
    e = I.ite(zero, bv.sconst(I, -(1 << (ew - 2)), ew), lead_exp(I, t, ew))
    ebias = I.add(e, I.const(1 << (ew - 1), ew))
    sw = I.width(t.sig)
    norm = I.shl(t.sig, bv.resize_u(I, bv.clz(I, t.sig), sw))
    return I.concat(ebias, norm)


def sort_by_magnitude(I, terms: list[Term], ew: int) -> list[Term]:
    """Terms in decreasing magnitude, by a network of compare-and-swap steps
    (stable: equal magnitudes keep their order)."""
    ts = _same_shape(I, terms)
    n = len(ts)
    for i in range(n):
        for j in range(n - 1 - i):
            a, b = ts[j], ts[j + 1]
            swap = I.ult(magnitude_key(I, a, ew), magnitude_key(I, b, ew))
            ts[j] = _select(I, swap, b, a)
            ts[j + 1] = _select(I, swap, a, b)
    return ts


def _widen_term(I, t: Term, sw: int, frac: int) -> Term:
    """The same value with ``frac`` fraction bits in a wider significand."""
    extra = frac - t.frac
    sig = I.concat(t.sig, I.const(0, extra)) if extra else t.sig
    need = max(sw, I.width(sig))
    sig = bv.resize_u(I, sig, need)
    return replace(t, sig=sig, frac=frac)


def _select(I, c, x: Term, y: Term) -> Term:
    return Term(I.ite(c, x.sign, y.sign), I.ite(c, x.exp, y.exp), I.ite(c, x.sig, y.sig),
                x.frac, I.ite(c, x.nan, y.nan), I.ite(c, x.inf, y.inf), x.lead)


def _same_shape(I, terms: list[Term]) -> list[Term]:
    """Terms widened to one significand width and fraction count, all
    aligned the same way (by the leading one if any term is)."""
    fr = max(t.frac for t in terms)
    sw = max(I.width(t.sig) + fr - t.frac for t in terms)
    lead = any(t.lead for t in terms)
    return [replace(_widen_term(I, t, sw, fr), lead=lead) for t in terms]


def block(I, p: ModelParams, prods: list[Term], c: Term, ew: int, trace=None):
    """One block: c plus up to block_size products -> bits of result_format."""
    out = result_format(p)
    if p.normalisation == "every_add":
        acc = every_add_order(I, p, c, prods, ew, trace)
        return round_fixed(I, term_fixed(I, acc, ew), out, p.final_rounding, ew, p.overflow, p.zero_sign,
                           flush_out(p))
    if p.c_placement == "late":
        return late.late_block(I, p, prods, c, ew, trace)
    if p.align_rounding == "exact":
        s = exact_sum(I, [c] + prods, out.frac_bits, ew, trace)
        bits = round_fixed(I, s, out, p.final_rounding, ew, p.overflow, p.zero_sign, flush_out(p))
        return c_alone(I, p, bits, out, c, prods)
    terms = block_terms(I, p, prods, c, ew)
    c_tiny = p.fc.emin if p.align_rounding == "floor" and p.pair_sums else None
    s = block_sum(I, p, terms, ew, p.F, p.align_rounding, acting_floor(p), trace=trace,
                  frame=c.sign, c_tiny=c_tiny)
    if ieee_alignment(p):
        fmt = acc_internal(p)
        bits = round_fixed(I, s, fmt, p.align_rounding, ew, p.overflow, p.zero_sign, False)
        s = term_fixed(I, unpack(I, fmt, bits, ew, False), ew)
    bits = round_fixed(I, s, out, p.final_rounding, ew, p.overflow, p.zero_sign, flush_out(p))
    return c_alone(I, p, bits, out, c, prods)


def block_terms(I, p: ModelParams, prods: list[Term], c: Term, ew: int) -> list[Term]:
    """The terms the block register aligns and sums: c (lifted by
    c_lead_bits) and the products (summed in pairs with pair_sums), aligned
    by their leading ones under an IEEE alignment rounding."""
    if p.pair_sums:
        prods = pair_terms(I, p, prods, ew)
    terms = [lift_c(I, c, p.c_lead_bits, ew)] + list(prods)
    if ieee_alignment(p):
        terms = list(led(I, terms))
    return terms


def lift_c(I, c: Term, k: int, ew: int) -> Term:
    """c with its alignment exponent k below its own, the same value (its
    significand read with k more integer bits): see ModelParams.c_lead_bits."""
    if not k:
        return c
    return replace(c, exp=I.sub(c.exp, I.const(k, ew)), frac=c.frac - k)


def pair_terms(I, p: ModelParams, prods: list[Term], ew: int) -> list[Term]:
    """Adjacent pairs of products, each summed against its own largest raw
    exponent with F fraction bits (see ModelParams.pair_sums), as Terms at
    that exponent: they take part in the alignment when one of their
    products is live, even if the pair cancels to zero."""
    out = []
    for i in range(0, len(prods), 2):
        pair = prods[i:i + 2]
        s = block_sum(I, p, pair, ew, p.F, p.align_rounding, None, carry=None)
        live = bv.any_(I, [I.not_(is_dead(I, t)) for t in pair])
        out.append(Term(I.ite(s.inf, s.inf_sign, s.sign), I.add(s.scale, I.const(p.F, ew)),
                        s.mag, p.F, s.nan, s.inf, live=live))
    return out


def acting_floor(p: ModelParams) -> int | None:
    """p.min_exponent, or None where that floor of the alignment point
    changes no output (and the datapath does not read it, so the floor and
    none build one circuit).

    A floor f acts only on a block whose terms all lie below 2^f. A c that
    is not zero lies at or above 2^(its format's emin - c_lead_bits), so
    with f at most that (for c's format and for the block result's, which
    chained blocks take as c) such a block has c = 0, and its products sum
    (truncated or floored at the alignment, with or without the floor)
    below 2^(f + 2 + max(bits of block_size, carry_bits)). Where that is
    at most half the output's smallest subnormal, the sum rounds to zero
    (toward zero or to nearest), which is +0 whatever its sign when zero
    results are all positive: the same output with the floor and without.
    Only the block register (block normalisation, c placed globally, no
    pair sums, groups, or scale windows) is covered."""
    f = p.min_exponent
    if f is None:
        return None
    if (not plain_register(p) or p.final_rounding not in ("rz", "rne")
            or p.zero_sign not in ("all_positive", "keep_c")):
        return f
    rf = result_format(p)
    c_low = min(p.fc.emin, rf.emin) - p.c_lead_bits
    last = min(p.fout.last_exp, rf.last_exp)
    spread = max(bv.bits_for(p.block_size), p.carry_bits or 0)
    moot = f <= c_low and f + 2 + spread <= last - 1
    return None if moot else f
