"""The raw-exponent window: a block whose quantum is set by the largest raw
product exponent, the largest pair of scale exponents and c's exponent, not
by its largest term (the reading of B200's block-scaled e2m1 arithmetic in
sf-tensor/tcgen05, tcgen05_model/MODEL.md section 5).

Every product's raw exponent is the sum of its inputs' and its scales'
unbiased exponents (a subnormal counts as emin). Let R be the largest over
the non-zero products, S the largest scale pair (sa + sb exponents) over
them, and C the exponent of a non-zero c.

  c dominant (c non-zero and C >= R): groups of c_group_size products
    (group_size when None), each summed exactly and scaled, and c are
    truncated to multiples of 2^(C - c_window_bits) and added.
  otherwise: q = max(R - F, S - scale_window_bits, C - F) (C only for a
    non-zero c); groups of group_size products and c are truncated to
    multiples of 2^q and added. With c_group_window, a group whose largest
    product is not above c (C >= its own R) is truncated to the coarser
    2^max(q, C - c_window_bits). With group_floor, when that sum rounds to a
    subnormal, the groups whose scale pair is below S and whose truncated
    value lies below 2^group_floor are left out of it.

The integers are added exactly and the sum is rounded once to the result
format with final_rounding. Each truncation drops bits toward zero.

Where no group can lose a bit to q when c does not dominate
(``grouping_is_moot``: enough bits below R and S for the widest span of
scale pairs), the block reads c_group_size for both cases, and models that
differ only in group_size there build one circuit.
"""

from __future__ import annotations

from dataclasses import replace

from tcsmt.datapath import bv
from tcsmt.datapath.register import block_sum
from tcsmt.datapath.rounding import round_fixed
from tcsmt.datapath.scales import apply_scales, group_sum
from tcsmt.datapath.terms import Term, is_dead, lead_exp
from tcsmt.model.formats import Format
from tcsmt.model.params import ModelParams


def lowest(I, ew: int):
    return bv.sconst(I, -(1 << (ew - 2)), ew)


def max_live(I, terms: list[Term], values: list, ew: int):
    """The largest of ``values`` over the live terms (``lowest`` if none)."""
    e = lowest(I, ew)
    for t, v in zip(terms, values):
        e = I.ite(is_dead(I, t), e, bv.smax(I, e, v))
    return e


def truncate_at(I, t: Term, q, ew: int) -> Term:
    """t with the bits of its significand below 2^q cleared (toward zero)."""
    n = bv.smax(I, I.sub(q, I.sub(t.exp, I.const(t.frac, ew))), I.const(0, ew))
    return replace(t, sig=bv.shl_by(I, bv.lshr_by(I, t.sig, n), n))


def keep_if(I, t: Term, keep) -> Term:
    """t where ``keep`` holds, else a zero that takes no part (its NaN and
    infinity flags stay: they belong to the products either way)."""
    live = I.not_(is_dead(I, t))
    return replace(t, sig=I.ite(keep, t.sig, I.const(0, I.width(t.sig))), live=I.and_(keep, live))


def is_subnormal(I, fmt: Format, bits):
    fb, eb = fmt.frac_bits, fmt.exp_bits
    return I.and_(bv.is_zero(I, I.extract(bits, fb + eb - 1, fb)),
                  I.not_(bv.is_zero(I, I.extract(bits, fb - 1, 0))))


def c_alone(I, p: ModelParams, bits, fmt: Format, c: Term, terms: list[Term]):
    """zero_sign "keep_c": with no non-zero product (and no NaN or infinite
    one), d is c itself, so a c of -0 gives -0; every other zero is +0."""
    if p.zero_sign != "keep_c" or not fmt.has_negative_zero:
        return bits
    quiet = bv.all_(I, [I.and_(is_dead(I, t), I.not_(t.nan), I.not_(t.inf)) for t in terms])
    neg_zero = I.and_(quiet, c.sign, bv.is_zero(I, c.sig), I.not_(c.nan))
    return I.ite(neg_zero, I.const(1 << (fmt.bits - 1), fmt.bits), bits)


def groups(I, p: ModelParams, prods: list[Term], ta, tb, size: int, ew: int):
    """Exact sums of ``size`` products, each times its scales (those of its
    first product: a group lies in one scale block), with the scale pair's
    exponent of each group."""
    out, pair = [], []
    for i in range(0, len(prods), size):
        sa, sb = ta[i], tb[i]
        out.append(apply_scales(I, p, group_sum(I, p, prods[i:i + size], ew), sa, sb))
        pair.append(I.add(sa.exp, sb.exp))
    return out, pair


def register_fraction_bits(p: ModelParams) -> int:
    """K, the bits the register keeps between the quantum 2^q and its point
    q + K, a point no live term's exponent exceeds: a group's exponent is
    e0 + its scale pair (e0 = emin of a + emin of b) <= S <= q + Fs; with c
    dominant c's exponent is q + Fc; otherwise c lies below R, and
    R <= q + F (q >= R - F) and R <= S + E <= q + Fs + E (a product's raw
    exponent is at most E = emax of a + emax of b above its scale pair).
    So K = max(Fc, Fs + max(0, e0), min(F, Fs + E)): where F > Fs + E the
    term R - F never sets q and F leaves the circuit (models that differ
    only there build one circuit but for q, which the solvers show equal)."""
    F, Fs, Fc = p.F, p.scale_window_bits, p.c_window_bits
    assert Fs is not None and Fc is not None
    E = p.fin.emax + p.fb.emax
    return max(Fc, Fs + max(0, p.fin.emin + p.fb.emin), min(F, Fs + E))


def grouping_is_moot(p: ModelParams) -> bool:
    """Whether the groups of group_size products give every block the very
    sum that groups of c_group_size give, so that the datapath reads one of
    them (and models that differ only there build one circuit), as
    products.lead_is_moot does for product_alignment.

    When c dominates, the block takes groups of c_group_size anyway. When it
    does not, q = max(R - F, S - Fs, C - F) with C < R (C only for a live
    c), and a group lies on multiples of 2^(e0 + P - f): e0 = emin of a +
    emin of b (group_sum), P its scale pair's exponent, f the fraction bits
    of a product and of both scales (apply_scales). With R <= S + E (E =
    emax of a + emax of b), S <= Pmax and P >= Pmin (the scale format's
    exponents, twice), every group's last place is at least q when

        e0 - f + Pmin - Pmax >= max(E - F, -Fs);

    then no group loses a bit to the window, every term is a multiple of
    2^q and the register (carry bits without bound) adds them exactly,
    whichever way the products were grouped. The flags agree (a NaN or an
    infinity of a product or a scale reaches the sum in any grouping), and
    so does the sign of a zero sum unless zero_sign = "ieee" reads the
    terms' signs; a c_group_window or a group_floor reads the groups, so
    neither may be set. Products must be exact (their raw exponents and
    fraction bits are the inputs')."""
    s = p.fscale
    if (s is None or p.scale_window_bits is None or p.c_group_window or p.group_floor is not None
            or p.product_rounding != "exact" or p.product_alignment != "raw"
            or p.zero_sign == "ieee"):
        return False
    e0 = p.fin.emin + p.fb.emin
    f = p.fin.frac_bits + p.fb.frac_bits + 2 * s.frac_bits
    E = p.fin.emax + p.fb.emax
    return e0 - f + 2 * s.emin - 2 * s.emax >= max(E - p.F, -p.scale_window_bits)


def quantum(I, p: ModelParams, scaled: list[Term], pairs: list, c: Term, ew: int):
    """(S, q, c_dom) of a block from its products times their scales and
    their scale pairs' exponents: the largest pair over the non-zero
    products, the window's quantum 2^q, and whether c dominates."""
    R = max_live(I, scaled, [t.exp for t in scaled], ew)
    S = max_live(I, scaled, pairs, ew)
    c_live = I.not_(is_dead(I, c))
    F, Fs, Fc = p.F, p.scale_window_bits, p.c_window_bits
    assert Fs is not None and Fc is not None     # validate_window: the window needs both

    def k(v: int):
        return I.const(v, ew)
    c_dom = I.and_(c_live, I.sle(R, c.exp))
    q = bv.smax(I, I.sub(R, k(F)), I.sub(S, k(Fs)))
    q = I.ite(c_live, bv.smax(I, q, I.sub(c.exp, k(F))), q)
    return S, I.ite(c_dom, I.sub(c.exp, k(Fc)), q), c_dom


def window_block(I, p: ModelParams, prods: list[Term], c: Term, ta: list[Term], tb: list[Term],
                 out: Format, ew: int, trace=None):
    """One block of the raw-exponent window: products (unscaled, exact), c,
    and the unpacked scales of each product, ta[k] and tb[k] -> bits of
    ``out``."""
    scaled = [apply_scales(I, p, t, ta[k], tb[k]) for k, t in enumerate(prods)]
    pairs = [I.add(ta[k].exp, tb[k].exp) for k in range(len(prods))]
    S, q, c_dom = quantum(I, p, scaled, pairs, c, ew)
    c_live = I.not_(is_dead(I, c))
    Fc = p.c_window_bits
    assert Fc is not None     # validate_window: the window needs it

    def k(v: int):
        return I.const(v, ew)
    if trace is not None:
        trace.append(("window quantum", q, "signed"))

    g = p.group_size
    if grouping_is_moot(p):
        g = p.c_group_size or g
    G, G_pairs = groups(I, p, prods, ta, tb, g, ew)
    if p.c_group_window:
        q_c = bv.smax(I, q, I.sub(c.exp, k(Fc)))
        R_g = [max_live(I, scaled[i:i + g], [t.exp for t in scaled[i:i + g]], ew)
               for i in range(0, len(prods), g)]
        G = [truncate_at(I, t, I.ite(I.and_(c_live, I.sle(r, c.exp)), q_c, q), ew)
             for t, r in zip(G, R_g)]
    cg = p.c_group_size or g
    if cg != g:
        Gc, _ = groups(I, p, prods, ta, tb, cg, ew)
        G = [keep_if(I, t, I.not_(c_dom)) for t in G]
        terms = [c] + G + [keep_if(I, t, c_dom) for t in Gc]
    else:
        terms = [c] + G
    K = register_fraction_bits(p)
    point = I.add(q, k(K))

    def rounded(ts, tr=None):
        s = block_sum(I, p, ts, ew, K, "truncate", None, trace=tr, carry=None, point=point)
        return round_fixed(I, s, out, p.final_rounding, ew, p.overflow, p.zero_sign, False)

    bits = rounded(terms, trace)
    if p.group_floor is not None:
        floor = k(p.group_floor)
        drop = [I.and_(I.not_(c_dom), I.slt(pr, S),
                       I.or_(bv.is_zero(I, t.sig), I.slt(lead_exp(I, t, ew), floor)))
                for t, pr in zip(G, G_pairs)]
        kept = [c] + [keep_if(I, t, I.not_(d)) for t, d in zip(G, drop)] + terms[1 + len(G):]
        bits = I.ite(is_subnormal(I, out, bits), rounded(kept), bits)
    return c_alone(I, p, bits, out, c, scaled)
