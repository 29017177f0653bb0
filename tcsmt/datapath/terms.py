"""Terms: a float as (sign, exponent, significand) words, unpacked from a
format's bits, and the unrounded sums (Fixed) the datapath rounds.

A Term's value is ``sig * 2**(exp - frac)`` where ``frac`` is a static int,
``sig`` an unsigned word and ``exp`` a signed word of width ``ew``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tcsmt.datapath import bv
from tcsmt.datapath.stage import stage
from tcsmt.model.formats import Format, internal_format
from tcsmt.model.params import ModelParams


@dataclass(frozen=True)
class Term:
    sign: object      # Bool: negative
    exp: object       # signed word, width ew
    sig: object       # unsigned word
    frac: int         # static: fraction bits of sig
    nan: object       # Bool
    inf: object       # Bool
    lead: bool = False  # static: align by the leading one, not by exp
    live: object = None  # Bool: takes part in the alignment (None: when sig is non-zero)


def is_dead(I, t: Term):
    """Whether a term stays out of the alignment: a zero significand, or,
    for an exact group sum, no non-zero product in the group."""
    return bv.is_zero(I, t.sig) if t.live is None else I.not_(t.live)


def term_int_bits(I, t: Term) -> int:
    return 1 if t.lead else max(1, I.width(t.sig) - t.frac)


@dataclass
class Fixed:
    """An unrounded result: (-1)**sign * mag * 2**scale, with flags."""
    sign: object
    mag: object       # unsigned word
    scale: object     # signed word, width ew
    nan: object
    inf: object
    inf_sign: object
    neg_zeros: object  # Bool: every term was -0
    pos_zeros: object  # Bool: every term was +0


def exp_width(p: ModelParams) -> int:
    """A signed exponent width that holds every exponent and shift the
    datapath computes for these formats (generous, static)."""
    fmts = [p.fin, p.fb, p.fc, p.fout, p.facc]
    span = max(2 * (f.emax + f.frac_bits + 2) + 2 * (f.frac_bits - f.emin) for f in fmts)
    span += 4 * (p.F + 64 + (p.late_frac_bits or 0))
    if p.fscale is not None:   # two scale exponents join every product's
        f = p.fscale
        span += 4 * (f.emax - f.emin + f.frac_bits + 2)
    return bv.bits_for(span) + 2


@stage()
def unpack(I, fmt: Format, bits, ew: int, flush: bool) -> Term:
    """Format bits -> Term. Subnormals have exponent emin and no hidden bit;
    with ``flush`` they read as zero of the same sign. A format without
    subnormals (ue8m0) has its hidden bit everywhere; an unsigned one
    (ue8m0, ue4m3) is positive. An integer is read as a float with
    exponent 0: its sign and magnitude (unpack_int)."""
    if fmt.is_integer:
        return unpack_int(I, fmt, bits, ew)
    fb, eb = fmt.frac_bits, fmt.exp_bits
    sign = bv.bit(I, bits, fmt.bits - 1) if fmt.signed else I.bool_const(False)
    expf = I.extract(bits, fb + eb - 1, fb)
    exp_zero = bv.is_zero(I, expf)
    expw = bv.resize_u(I, expf, ew)
    if fmt.subnormals:
        hidden = I.ite(exp_zero, I.const(0, 1), I.const(1, 1))
        expw = I.ite(exp_zero, I.const(1, ew), expw)
    else:
        hidden = I.const(1, 1)
    frac = I.extract(bits, fb - 1, 0) if fb else None
    sig = I.concat(hidden, frac) if fb else hidden
    if flush and fmt.subnormals:
        sig = I.ite(exp_zero, I.const(0, fb + 1), sig)
    exp = I.sub(expw, I.const(fmt.bias, ew))
    all_ones = I.eq(expf, bv.ones(I, eb))
    frac_zero = bv.is_zero(I, frac) if fb else I.bool_const(True)
    if fmt.specials == "ieee":
        nan = I.and_(all_ones, I.not_(frac_zero))
        inf = I.and_(all_ones, frac_zero)
    elif fmt.specials == "fn":
        nan = I.and_(all_ones, I.eq(frac, bv.ones(I, fb))) if fb else all_ones
        inf = I.bool_const(False)
    elif fmt.specials == "fnuz":
        nan = I.and_(sign, exp_zero, frac_zero)       # the encoding of -0
        inf = I.bool_const(False)
    else:
        nan = inf = I.bool_const(False)
    return Term(sign, exp, sig, fb, nan, inf)


def unpack_int(I, fmt: Format, bits, ew: int) -> Term:
    """Integer bits -> Term: the sign (two's complement, none for an
    unsigned format) and the magnitude as an unsigned word of the same
    width (|-2^(w-1)| = 2^(w-1) fits), exponent 0, no fraction bits, never
    NaN or infinite."""
    sign = bv.msb(I, bits) if fmt.signed else I.bool_const(False)
    mag = bv.neg_if(I, sign, bits) if fmt.signed else bits
    false = I.bool_const(False)
    return Term(sign, I.const(0, ew), mag, 0, false, false)


def lead_exp(I, t: Term, ew: int):
    """Exponent of the term's leading one (meaningless for a zero term)."""
    sw = I.width(t.sig)
    top = I.const(sw - 1 - t.frac, ew)
    return I.sub(I.add(t.exp, top), bv.resize_u(I, bv.clz(I, t.sig), ew))


def align_exp(I, t: Term, ew: int):
    return lead_exp(I, t, ew) if t.lead else t.exp


def term_fixed(I, t: Term, ew: int) -> Fixed:
    """A Term (from unpacked bits) as an unrounded Fixed of the same value."""
    return Fixed(t.sign, t.sig, I.sub(t.exp, I.const(t.frac, ew)), t.nan, t.inf, t.sign,
                 t.sign, I.not_(t.sign))


def widen(I, bits, src: Format, dst: Format):
    """Bits of an internal format with dst's exponent field -> dst's bits."""
    if src.bits == dst.bits:
        return bits
    assert src.exp_bits == dst.exp_bits and src.frac_bits <= dst.frac_bits
    return I.concat(bits, I.const(0, dst.frac_bits - src.frac_bits))


def result_format(p: ModelParams) -> Format:
    """The format a block result is rounded to (e8m13 for fp8 on Ada)."""
    out = p.fout
    if p.final_frac_bits is None or p.final_frac_bits == out.frac_bits:
        return out
    return internal_format(out.exp_bits, p.final_frac_bits)


def flush_in(p: ModelParams) -> bool:
    """Whether a subnormal c (and a block result read as the next c) reads as zero."""
    return p.flushes_c


def flush_ab(p: ModelParams) -> bool:
    """Whether subnormal a and b read as zero."""
    return p.flushes_ab


def flush_out(p: ModelParams) -> bool | str:
    """Whether subnormal results are flushed (ModelParams.flushes_out)."""
    return p.flushes_out


def plain_register(p: ModelParams) -> bool:
    """Whether every block sums its c and products in the one register of
    blocks.block_sum, truncating or flooring at the alignment: block
    normalisation, c placed globally, no pair sums, exact groups or scale
    windows, a float output."""
    return (p.normalisation == "block" and p.c_placement == "global" and not p.pair_sums
            and p.group_size == 1 and p.scale_window_bits is None and not p.fout.is_integer
            and p.align_rounding in ("truncate", "floor"))


def flush_steps(p: ModelParams) -> bool:
    """Whether every product and every rounded sum is flushed too."""
    return p.flushes_steps


def unpack_input(I, p: ModelParams, fmt: Format, bits, ew: int, is_c: bool = False) -> Term:
    """An input a, b or c as the model reads it: subnormals flushed as
    p.subnormals says; with flush_every_step every zero input, flushed or
    not, reads as +0."""
    t = unpack(I, fmt, bits, ew, flush_in(p) if is_c else flush_ab(p))
    if flush_steps(p):
        t = replace(t, sign=I.and_(t.sign, I.not_(bv.is_zero(I, t.sig))))
    return t
