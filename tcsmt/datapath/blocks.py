"""Blocks and dot products: one block (products and c to a rounded
result), the IEEE reference orders, late c placement, chaining of blocks
along a dot product, and the final NaN."""

from __future__ import annotations

import math
from dataclasses import replace

from tcsmt.datapath import bv, late, sparse
from tcsmt.datapath.exact import exact_sum
from tcsmt.datapath.integer import int_dot
from tcsmt.datapath.products import multiply
from tcsmt.datapath.register import block_sum
from tcsmt.datapath.rounding import round_fixed
from tcsmt.datapath.scales import block_terms
from tcsmt.datapath.terms import (
    Term,
    exp_width,
    flush_in,
    flush_out,
    flush_steps,
    is_dead,
    lead_exp,
    result_format,
    term_fixed,
    unpack,
    unpack_input,
    widen,
)
from tcsmt.datapath.window import c_alone, window_block
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
        terms = by_leading_one(terms)
    s = block_sum(I, p, terms, ew, p.F, p.align_rounding, None, trace=trace)
    bits = round_fixed(I, s, fmt, inner_mode(p), ew, p.overflow, p.zero_sign, flush_steps(p))
    return unpack(I, fmt, bits, ew, False)


def add_ieee(I, p: ModelParams, x: Term, y: Term, fmt: Format, mode: str, ew: int):
    """One IEEE addition x + y rounded into fmt with mode (guard, round and
    sticky bits make a two-term sum round exactly, the terms aligned by
    their leading ones as in add_rounded); returns fmt's bits."""
    x, y = by_leading_one([x, y])
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
        return add_rounded(I, p, [c, level[0]], ew, trace)
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
    if p.pair_sums:
        prods = pair_terms(I, p, prods, ew)
    terms = [lift_c(I, c, p.c_lead_bits, ew)] + prods
    if ieee_alignment(p):
        terms = by_leading_one(terms)
    c_tiny = p.fc.emin if p.align_rounding == "floor" and p.pair_sums else None
    s = block_sum(I, p, terms, ew, p.F, p.align_rounding, p.min_exponent, trace=trace,
                  frame=c.sign, c_tiny=c_tiny)
    if ieee_alignment(p):
        fmt = acc_internal(p)
        bits = round_fixed(I, s, fmt, p.align_rounding, ew, p.overflow, p.zero_sign, False)
        s = term_fixed(I, unpack(I, fmt, bits, ew, False), ew)
    bits = round_fixed(I, s, out, p.final_rounding, ew, p.overflow, p.zero_sign, flush_out(p))
    return c_alone(I, p, bits, out, c, prods)


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


def dot(I, p: ModelParams, a: list, b: list, c, trace=None, sa=None, sb=None, mask=None):
    """d = c + sum a_i b_i as bits of out_format, block after block.

    ``a`` and ``b`` are lists of words in in_format and b_format, ``c`` a
    word in c_format; with a scale format, ``sa`` and ``sb`` are the words
    of the scales of a and b, one per scale_block products. A dot product
    longer than block_size runs as consecutive blocks (see p.chaining).
    Integer formats take the integer datapath (tcsmt.datapath.integer).
    A sparse model (p.sparsity) takes ``mask``, one 1-bit word per product,
    set where the metadata selects it (tcsmt.datapath.sparse)."""
    if len(a) != len(b) or not a:
        raise ValueError("a and b must be non-empty and of equal length")
    live = None
    if p.sparsity != "dense":
        a, b, live = sparse.select(I, p, a, b, mask)
    ew = exp_width(p)
    ta = [unpack_input(I, p, p.fin, x, ew) for x in a]
    tb = [unpack_input(I, p, p.fb, y, ew) for y in b]
    prods = [multiply(I, x, y, p, ew) for x, y in zip(ta, tb)]
    if p.fout.is_integer:
        return int_dot(I, p, prods, c, trace, live)
    c_term = unpack_input(I, p, p.fc, c, ew, is_c=True)
    if p.scale_window_bits is not None:
        return window_dot(I, p, prods, c_term, sa, sb, ew, trace)
    if p.scale_format is not None or p.group_size > 1:
        prods = block_terms(I, p, prods, sa, sb, ew, trace)
    return dot_terms(I, p, prods, c_term, ew, trace, live)


def window_dot(I, p: ModelParams, prods: list[Term], c_term: Term, sa: list, sb: list,
               ew: int, trace=None):
    """The raw-exponent window (tcsmt.datapath.window), block after block:
    each block's rounded result is the next block's c."""
    out, bs, per = result_format(p), p.block_size, p.block_size // p.scaling()[1]
    bits = None
    for n, i in enumerate(range(0, len(prods), bs)):
        if n:
            c_term = unpack(I, out, bits, ew, flush_in(p))
        bits = window_block(I, p, prods[i:i + bs], c_term, (sa or [])[n * per:(n + 1) * per],
                            (sb or [])[n * per:(n + 1) * per], out, ew, trace)
    return finish(I, p, bits, out)


def order_terms(p: ModelParams, prods: list) -> list:
    """Products in the order the blocks take them (p.term_order)."""
    if p.term_order == "pairs_mod4":
        first = [t for k, t in enumerate(prods) if k % 4 < 2]
        return first + [t for k, t in enumerate(prods) if k % 4 >= 2]
    return list(prods)


def dot_terms(I, p: ModelParams, prods: list[Term], c_term: Term, ew: int, trace=None,
              live=None):
    """The dot product from finished product Terms and the Term of c.

    Blocks take the products in p.term_order, block_size at a time (with
    exact groups, block_size / group_size group terms at a time). With c
    placed "after", the blocks start from zero and c is added to their
    result at the end with one IEEE addition rounded with p.c_rounding.
    ``live`` (sparse models read compressed): one Bool per block, whether
    it holds a selected product; a block that holds none leaves the result
    of the block before it as it is."""
    out = result_format(p)
    prods = order_terms(p, prods)
    label = "group" if p.group_size > 1 else "product"
    if trace is not None:
        for i, t in enumerate(prods):
            trace.append((f"{label} {i}", t, "term"))
    per = p.block_size // p.group_size
    chunks = [prods[i:i + per] for i in range(0, len(prods), per)]
    start = c_term
    if p.c_placement == "after":
        start = unpack(I, p.fc, I.const(0, p.fc.bits), ew, False)
    if p.chaining == "separate" and len(chunks) > 1:
        bits = _separate_blocks(I, p, chunks, start, ew)
    else:
        bits = None
        for k, chunk in enumerate(chunks):
            if k:
                start = unpack(I, out, bits, ew, flush_in(p))
            new = block(I, p, chunk, start, ew, trace if k == len(chunks) - 1 else None)
            bits = new if live is None or not k else I.ite(live[k], new, bits)
            if trace is not None:
                trace.append((f"block {k} result", bits, f"bits:{out.name}"))
    if p.c_placement == "after":
        bits = add_ieee(I, p, unpack(I, out, bits, ew, False), c_term, out, p.c_rounding, ew)
        if trace is not None:
            trace.append(("c added", bits, f"bits:{out.name}"))
    return finish(I, p, bits, out)


def split_step(p: ModelParams) -> int | None:
    """The products (a multiple of) which a dot product may be cut into parts
    so that each part, run by ``dot`` with the result of the part before as
    its c, gives the bits of the whole: with recursive chaining
    (``dot_terms``) block k + 1 starts from block k's result unpacked from
    result_format; a part's d is that result (``finish`` widens nothing
    when result_format, c_format and out_format are one format), and the
    next part unpacks its c as that same format with the same flushing. A
    cut at a block boundary (and at a scale block's) keeps every block's
    products. None when no cut keeps the bits: c added after the blocks,
    "separate" chaining (a part of one block adds c inside it), terms
    reordered across the whole K (pairs_mod4), a sparse model (read
    compressed, its slots span the whole K), or a block result held in
    another format than c (e8m13 blocks of binary32 d)."""
    fmt = result_format(p)
    if p.chaining != "recursive" or p.c_placement == "after" or p.term_order != "sequential" \
            or p.sparsity != "dense":
        return None
    if (fmt.name, fmt.exp_bits, fmt.frac_bits) != (p.fc.name, p.fc.exp_bits, p.fc.frac_bits) \
            or p.fc.name != p.fout.name:
        return None
    step = p.block_size
    if p.scale_format is not None:
        step = math.lcm(step, p.scaling()[1])
    return step


def _separate_blocks(I, p: ModelParams, chunks, c_term: Term, ew: int):
    """Every block summed from zero; the rounded block results added to c
    one after another with IEEE additions rounded with p.c_rounding."""
    out = result_format(p)
    zero = unpack(I, p.fc, I.const(0, p.fc.bits), ew, False)
    results = [block(I, p, chunk, zero, ew) for chunk in chunks]
    acc, bits = c_term, None
    for bits in results:
        t = unpack(I, out, bits, ew, flush_in(p))
        bits = add_ieee(I, p, acc, t, out, p.c_rounding, ew)
        acc = unpack(I, out, bits, ew, flush_in(p))
    return bits


def finish(I, p: ModelParams, bits, out: Format):
    """Result bits in out_format, with the model's NaN (nan_bits, else
    out_format's: a NaN of a narrower result format, e8m13, is not widened
    with zero fraction bits but replaced)."""
    fout = p.fout
    bits = widen(I, bits, out, fout)
    nan = p.nan_bits if p.nan_bits is not None or out.bits == fout.bits or not fout.has_nan \
        else fout.hex(fout.nan_bits())
    if nan is not None:
        nan_val = fout.from_storage(int(nan, 16))
        is_nan = unpack(I, fout, bits, exp_width(p), False).nan
        bits = I.ite(is_nan, I.const(nan_val, fout.bits), bits)
    return bits
