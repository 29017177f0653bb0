"""The block-FMA datapath, written once over the bit-vector vocabulary.

``dot(I, p, a, b, c)`` computes d = c + sum(a_i * b_i) under the parameters
``p`` with the interpretation ``I`` (Python ints, NumPy arrays or SMT terms).
Python ``if`` tests only parameters and widths; everything that depends on
data goes through ``I.ite``.

Stages (one function each):

  unpack     bits of a format -> Term (sign, exponent, significand, flags)
  multiply   two Terms -> their exact product as a Term
  align_exp  the exponent a term is aligned by (raw or normalised)
  align      a Term -> a signed fixed-point word in the block's register
  block_sum  Terms -> (sign, magnitude, scale): the register's sum
  round_fixed  (sign, magnitude, scale) -> bits of a format, with a mode
  block      one block: products and c -> rounded result bits
  dot        blocks chained over a dot product of any length

A Term's value is ``sig * 2**(exp - frac)`` where ``frac`` is a static int,
``sig`` an unsigned word and ``exp`` a signed word of width ``ew``.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcsmt import bv
from tcsmt.formats import Format, get_format, internal_format
from tcsmt.params import ModelParams


@dataclass
class Term:
    sign: object      # Bool: negative
    exp: object       # signed word, width ew
    sig: object       # unsigned word
    frac: int         # static: fraction bits of sig
    nan: object       # Bool
    inf: object       # Bool
    lead: bool = False  # static: align by the leading one, not by exp


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


UNBOUNDED_SPARE = 2

# ---------------------------------------------------------------------------
# Widths
# ---------------------------------------------------------------------------

def exp_width(p: ModelParams) -> int:
    """A signed exponent width that holds every exponent and shift the
    datapath computes for these formats (generous, static)."""
    fmts = [p.fin, p.fc, p.fout, p.facc]
    span = max(2 * (f.emax + f.frac_bits + 2) + 2 * (f.frac_bits - f.emin) for f in fmts)
    span += 4 * (p.F + 64 + (p.late_frac_bits or 0))
    return bv.bits_for(span) + 2


def guard_bits(F: int, frac: int, mode: str) -> int:
    """Extra register bits below F for IEEE alignment rounding: enough that
    the largest term is never cut (its ``frac`` bits fit) plus guard, round
    and sticky. None for truncation and floor."""
    if mode in ("truncate", "floor"):
        return 0
    return max(0, frac - F) + 3


# ---------------------------------------------------------------------------
# Unpack and multiply
# ---------------------------------------------------------------------------

def unpack(I, fmt: Format, bits, ew: int, flush: bool) -> Term:
    """Format bits -> Term. Subnormals have exponent emin and no hidden bit;
    with ``flush`` they read as zero of the same sign."""
    fb, eb = fmt.frac_bits, fmt.exp_bits
    sign = bv.bit(I, bits, fmt.bits - 1)
    expf = I.extract(bits, fb + eb - 1, fb)
    frac = I.extract(bits, fb - 1, 0)
    exp_zero = bv.is_zero(I, expf)
    hidden = I.ite(exp_zero, I.const(0, 1), I.const(1, 1))
    sig = I.concat(hidden, frac)
    if flush:
        sig = I.ite(exp_zero, I.const(0, fb + 1), sig)
    expw = bv.resize_u(I, expf, ew)
    expw = I.ite(exp_zero, I.const(1, ew), expw)
    exp = I.sub(expw, I.const(fmt.bias, ew))
    all_ones = I.eq(expf, bv.ones(I, eb))
    frac_zero = bv.is_zero(I, frac)
    if fmt.specials == "ieee":
        nan = I.and_(all_ones, I.not_(frac_zero))
        inf = I.and_(all_ones, frac_zero)
    elif fmt.specials == "fn":
        nan = I.and_(all_ones, I.eq(frac, bv.ones(I, fb)))
        inf = I.bool_const(False)
    else:
        nan = inf = I.bool_const(False)
    return Term(sign, exp, sig, fb, nan, inf)


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
    one (normalised), overflow to infinity, rounding to a format. Queries
    that stand a free significand and exponent in for a product call this
    too, so every hypothesis sees its own product handling."""
    t = Term(t.sign, t.exp, t.sig, t.frac, t.nan, t.inf,
             lead=p.product_alignment == "normalised")
    if p.product_overflow == "inf":
        big = I.slt(I.const(p.facc.emax, ew), lead_exp(I, t, ew))
        t.inf = I.or_(t.inf, I.and_(big, I.not_(t.nan), I.not_(bv.is_zero(I, t.sig))))
    if p.product_rounding != "exact":
        fmt = p.fin if p.product_rounding == "in_format" else p.fout
        bits = round_fixed(I, term_fixed(I, t, ew), fmt, "rne", ew, "ieee", "ieee", False)
        t = unpack(I, fmt, bits, ew, False)
        t.lead = p.product_alignment == "normalised"
    return t


def lead_exp(I, t: Term, ew: int):
    """Exponent of the term's leading one (meaningless for a zero term)."""
    sw = I.width(t.sig)
    top = I.const(sw - 1 - t.frac, ew)
    return I.sub(I.add(t.exp, top), bv.resize_u(I, bv.clz(I, t.sig), ew))


def align_exp(I, t: Term, ew: int):
    return lead_exp(I, t, ew) if t.lead else t.exp


# ---------------------------------------------------------------------------
# Alignment and the block's register
# ---------------------------------------------------------------------------

def alignment_point(I, terms: list[Term], ew: int, floor: int | None):
    """The largest alignment exponent among the non-zero terms, raised to
    ``floor`` if given. Zero terms do not take part."""
    lowest = bv.sconst(I, -(1 << (ew - 2)), ew)
    e_max = lowest
    for t in terms:
        e = I.ite(bv.is_zero(I, t.sig), lowest, align_exp(I, t, ew))
        e_max = bv.smax(I, e_max, e)
    if floor is not None:
        e_max = bv.smax(I, e_max, bv.sconst(I, floor, ew))
    return e_max


def align(I, t: Term, e_max, keep: int, rl: int, rw: int, mode: str, ew: int):
    """Term -> signed rw-bit word in units of 2**(e_max - rl).

    The term keeps ``keep`` fraction bits below ``e_max`` (keep <= rl); the
    bits below are dropped toward zero ("truncate"), or OR-ed into the last
    kept bit as a sticky bit (IEEE modes), or rounded toward minus infinity
    ("floor"). Invariant: |result| < 2**(int bits + rl).
    """
    sw = I.width(t.sig)
    d0 = t.frac + 1 if t.lead else 0           # how far exp may exceed e_max
    l0 = keep - t.frac + d0                    # static left shift
    lpos, lneg = max(0, l0), max(0, -l0)
    x = I.concat(t.sig, I.const(0, lpos)) if lpos else t.sig
    # dynamic right shift: (e_max - exp) + d0 + lneg, >= 0 for non-zero terms
    amount = I.add(I.sub(e_max, t.exp), I.const(d0 + lneg, ew))
    y = bv.lshr_by(I, x, amount)
    mag = bv.resize_u(I, y, rw)
    if mode != "truncate":
        lost = bv.shifted_out(I, x, amount)
        one = I.const(1, rw)
        if mode == "floor":
            mag = I.ite(I.and_(lost, t.sign), I.add(mag, one), mag)
        else:
            mag = I.ite(lost, I.bvor(mag, one), mag)
    if rl > keep:
        mag = I.shl(mag, I.const(rl - keep, rw))
    return bv.neg_if(I, t.sign, mag)


def specials(I, terms: list[Term]):
    """(nan, inf, sign of the infinity) of a sum of terms."""
    pos_inf = bv.any_(I, [I.and_(t.inf, I.not_(t.sign)) for t in terms])
    neg_inf = bv.any_(I, [I.and_(t.inf, t.sign) for t in terms])
    nan = I.or_(bv.any_(I, [t.nan for t in terms]), I.and_(pos_inf, neg_inf))
    return nan, I.or_(pos_inf, neg_inf), neg_inf


def block_sum(I, p: ModelParams, terms: list[Term], ew: int, F: int, mode: str,
              floor: int | None, keeps: list[int] | None = None, trace=None,
              carry: str | int | None = "model") -> Fixed:
    """Align every term to the largest exponent, keep F fraction bits (plus
    guard bits in IEEE modes), add them in a register with ``carry`` integer
    bits above the largest term (p.carry_bits by default; None: enough never
    to overflow), and return the signed sum."""
    g = max(guard_bits(F, t.frac, mode) for t in terms)
    keeps = keeps or [F + g] * len(terms)
    rl = max(keeps)
    ib = max(term_int_bits(I, t) for t in terms)
    carry = p.carry_bits if carry == "model" else carry
    if carry is None:
        # |sum| < len(terms) * 2**ib: bits_for(len(terms)) more bits hold it;
        # UNBOUNDED_SPARE more make "unbounded" differ from every count a
        # query compares it with, so equality needs a real proof
        ri = ib + bv.bits_for(len(terms)) + UNBOUNDED_SPARE + (1 if mode == "floor" else 0)
    else:
        ri = ib + carry
    rw = 1 + ri + rl
    e_max = alignment_point(I, terms, ew, floor)
    aligned = [align(I, t, e_max, k, rl, rw, mode, ew) for t, k in zip(terms, keeps)]
    total = aligned[0]
    for x in aligned[1:]:
        total = I.add(total, x)
    neg, mag = bv.abs_s(I, total)
    scale = I.sub(e_max, I.const(rl, ew))
    nan, inf, inf_sign = specials(I, terms)
    neg_zeros = bv.all_(I, [I.and_(t.sign, bv.is_zero(I, t.sig)) for t in terms])
    pos_zeros = bv.all_(I, [I.and_(I.not_(t.sign), bv.is_zero(I, t.sig)) for t in terms])
    if trace is not None:
        trace.append(("alignment point", e_max, "signed"))
        for i, x in enumerate(aligned):
            trace.append((f"aligned term {i}", x, f"fixed:{rl}"))
        trace.append(("raw sum", total, f"fixed:{rl}"))
        trace.append(("register", (rl, ib, ri), "layout"))
    return Fixed(neg, mag, scale, nan, inf, inf_sign, neg_zeros, pos_zeros)


# ---------------------------------------------------------------------------
# Rounding
# ---------------------------------------------------------------------------

def round_increment(I, mode: str, sign, lsb, guard, sticky):
    if mode == "rz":
        return I.bool_const(False)
    if mode == "rne":
        return I.and_(guard, I.or_(sticky, lsb))
    inexact = I.or_(guard, sticky)
    if mode == "ru":
        return I.and_(inexact, I.not_(sign))
    if mode == "rd":
        return I.and_(inexact, sign)
    raise ValueError(f"unknown rounding mode {mode!r}")


def round_fixed(I, x: Fixed, fmt: Format, mode: str, ew: int, overflow: str,
                zero_sign: str, flush: bool):
    """Normalise (-1)**sign * mag * 2**scale and round it into ``fmt``
    (IEEE specials) with ``mode``; returns fmt's bits."""
    fb, w = fmt.frac_bits, I.width(x.mag)
    lz = bv.resize_u(I, bv.clz(I, x.mag), ew)
    e_lead = I.sub(I.add(x.scale, I.const(w - 1, ew)), lz)
    e_t = bv.smax(I, e_lead, bv.sconst(I, fmt.emin, ew))
    if w + fb + 2 <= NARROW_WORD:
        q, qw, guard, sticky = _fields_one_shift(I, x, fb, w, e_t, ew)
    else:
        q, qw, guard, sticky = _fields_two_way(I, x, fb, w, e_t, ew)
    inc = round_increment(I, mode, x.sign, bv.bit(I, q, 0), guard, sticky)
    q = I.ite(inc, I.add(q, I.const(1, qw)), q)
    carry = bv.bit(I, q, fb + 1)
    q = I.ite(carry, I.lshr(q, I.const(1, qw)), q)
    e_f = I.ite(carry, I.add(e_t, I.const(1, ew)), e_t)
    normal = bv.bit(I, q, fb)
    biased = I.add(e_f, I.const(fmt.bias, ew))
    expf = I.ite(normal, bv.resize_u(I, biased, fmt.exp_bits), I.const(0, fmt.exp_bits))
    fracf = I.extract(q, fb - 1, 0)
    is_zero = bv.is_zero(I, x.mag)
    if zero_sign == "ieee":
        zsign = I.not_(x.pos_zeros) if mode == "rd" else x.neg_zeros
    else:
        zsign = I.bool_const(False)
    sign = I.ite(is_zero, zsign, x.sign)
    if flush:
        tiny = I.not_(normal)
        fracf = I.ite(tiny, I.const(0, fb), fracf)
    sbit = bv.from_bool(I, sign)
    bits = I.concat(I.concat(sbit, expf), fracf)
    over = I.and_(normal, I.slt(bv.sconst(I, fmt.emax, ew), e_f))
    bits = I.ite(over, overflow_bits(I, fmt, mode, sign, overflow), bits)
    nan = I.const(nan_or_max(fmt, 0), fmt.bits)
    inf = I.ite(x.inf_sign, I.const(inf_or_nan(fmt, 1), fmt.bits), I.const(inf_or_nan(fmt, 0), fmt.bits))
    return I.ite(x.nan, nan, I.ite(x.inf, inf, bits))


NARROW_WORD = 64
"""The widest word ``round_fixed`` builds for its one-shift form (the batch
interpreter's words are 64 bits); wider registers take the two-way form."""


def _fields_one_shift(I, x: Fixed, fb: int, w: int, e_t, ew: int):
    """The output's fb+1 significand bits q, guard and sticky of x at the
    output position e_t (its leading one, or emin for a subnormal result),
    with one left shift: e_t goes to the top of a word P = fb + 2 bits wider
    than the register, and the fields are fixed. A register whose top lies
    more than P bits below e_t is not shifted: all of it is then below the
    guard bit and makes only the sticky bit, which is exactly right."""
    P = fb + 2
    W = w + P
    m = bv.resize_u(I, x.mag, W)
    t = I.sub(I.add(x.scale, I.const(W - 1, ew)), e_t)       # <= clz + P: no one bit lost
    t = bv.smax(I, t, I.const(0, ew))
    n = bv.shl_by(I, m, t)
    qw = fb + 2
    q = bv.resize_u(I, I.extract(n, W - 1, W - 1 - fb), qw)
    guard = bv.bit(I, n, W - 2 - fb)
    sticky = I.not_(bv.is_zero(I, I.extract(n, W - 3 - fb, 0)))
    return q, qw, guard, sticky


def _fields_two_way(I, x: Fixed, fb: int, w: int, e_t, ew: int):
    """The same fields for registers too wide for the one-shift form: a right
    shift (with the bits shifted out as guard and sticky) when the output's
    last position lies above the register's, else a left shift."""
    qw = max(w, fb + 2) + 1
    m = bv.resize_u(I, x.mag, qw)
    sh = I.sub(I.sub(e_t, I.const(fb, ew)), x.scale)   # LSB position - scale
    right = I.slt(I.const(0, ew), sh)
    sh1 = I.sub(sh, I.const(1, ew))
    q = I.ite(right, bv.lshr_by(I, m, sh), bv.shl_by(I, m, I.neg(sh)))
    guard = I.and_(right, bv.bit(I, bv.lshr_by(I, m, sh1), 0))
    sticky = I.and_(right, bv.shifted_out(I, m, sh1))
    return q, qw, guard, sticky


def inf_or_nan(fmt: Format, sign: int) -> int:
    """The encoding an infinite result takes: infinity, else NaN (float8
    e4m3fn), else the largest finite number (formats with neither)."""
    if fmt.has_inf:
        return fmt.inf_bits(sign)
    if fmt.has_nan:
        return fmt.pack(sign, (1 << fmt.exp_bits) - 1, (1 << fmt.frac_bits) - 1)
    return fmt.max_finite_bits(sign)


def nan_or_max(fmt: Format, sign: int) -> int:
    return fmt.nan_bits() if fmt.has_nan else fmt.max_finite_bits(sign)


def overflow_bits(I, fmt: Format, mode: str, sign, rule: str):
    inf = I.ite(sign, I.const(inf_or_nan(fmt, 1), fmt.bits), I.const(inf_or_nan(fmt, 0), fmt.bits))
    big = I.ite(sign, I.const(fmt.max_finite_bits(1), fmt.bits),
                I.const(fmt.max_finite_bits(0), fmt.bits))
    if rule == "inf" or mode == "rne":
        return inf
    if mode == "rz":
        return big
    if mode == "ru":
        return I.ite(sign, big, inf)
    return I.ite(sign, inf, big)   # rd


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


# ---------------------------------------------------------------------------
# Blocks and dot products
# ---------------------------------------------------------------------------

def result_format(p: ModelParams) -> Format:
    """The format a block result is rounded to (e8m13 for fp8 on Ada)."""
    out = p.fout
    if p.final_frac_bits is None or p.final_frac_bits == out.frac_bits:
        return out
    return internal_format(out.exp_bits, p.final_frac_bits)


def acc_internal(p: ModelParams) -> Format:
    """The accumulator format each addition is rounded to in IEEE modes."""
    return internal_format(p.facc.exp_bits, p.F) if p.align_bits else p.facc


def flush_in(p: ModelParams) -> bool:
    return p.subnormals in ("flush", "flush_inputs")


def flush_out(p: ModelParams) -> bool:
    return p.subnormals in ("flush", "flush_outputs")


def inner_mode(p: ModelParams) -> str:
    return "rz" if p.align_rounding == "truncate" else p.align_rounding


def by_leading_one(terms: list[Term]) -> list[Term]:
    """The terms aligned by their leading ones: IEEE rounding with guard,
    round and sticky bits needs the alignment point at the leading one of
    the largest term (a product of a subnormal input has its leading one up
    to 2*frac_bits below its raw exponent)."""
    return [Term(t.sign, t.exp, t.sig, t.frac, t.nan, t.inf, lead=True) for t in terms]


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
    bits = round_fixed(I, s, fmt, inner_mode(p), ew, p.overflow, p.zero_sign, False)
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
    return Term(t.sign, t.exp, sig, frac, t.nan, t.inf, t.lead)


def _select(I, c, x: Term, y: Term) -> Term:
    return Term(I.ite(c, x.sign, y.sign), I.ite(c, x.exp, y.exp), I.ite(c, x.sig, y.sig),
                x.frac, I.ite(c, x.nan, y.nan), I.ite(c, x.inf, y.inf), x.lead)


def _same_shape(I, terms: list[Term]) -> list[Term]:
    """Terms widened to one significand width and fraction count, all
    aligned the same way (by the leading one if any term is)."""
    fr = max(t.frac for t in terms)
    sw = max(I.width(t.sig) + fr - t.frac for t in terms)
    lead = any(t.lead for t in terms)
    out = [_widen_term(I, t, sw, fr) for t in terms]
    for t in out:
        t.lead = lead
    return out


def block(I, p: ModelParams, prods: list[Term], c: Term, ew: int, trace=None):
    """One block: c plus up to block_size products -> bits of result_format."""
    out = result_format(p)
    if p.normalisation == "every_add":
        acc = every_add_order(I, p, c, prods, ew, trace)
        return round_fixed(I, term_fixed(I, acc, ew), out, p.final_rounding, ew, p.overflow, p.zero_sign, flush_out(p))
    if p.c_placement == "late":
        return late_block(I, p, prods, c, ew, trace)
    terms = [c] + prods
    if p.align_rounding != "truncate":
        terms = by_leading_one(terms)
    s = block_sum(I, p, terms, ew, p.F, p.align_rounding, p.min_exponent, trace=trace)
    if p.align_rounding != "truncate":
        fmt = acc_internal(p)
        bits = round_fixed(I, s, fmt, p.align_rounding, ew, p.overflow, p.zero_sign, False)
        s = term_fixed(I, unpack(I, fmt, bits, ew, False), ew)
    return round_fixed(I, s, out, p.final_rounding, ew, p.overflow, p.zero_sign, flush_out(p))


def late_block(I, p: ModelParams, prods: list[Term], c: Term, ew: int, trace=None):
    """Late c placement: the products are summed (truncated to F bits), then
    c is added to that sum with both rounded down (toward minus infinity) to
    their own fraction counts, the sum rounded down to late_frac_bits, then
    rounded to the output with final_rounding."""
    s = block_sum(I, p, prods, ew, p.F, p.align_rounding, p.min_exponent, trace=trace)
    dot = Term(s.sign, I.add(s.scale, I.const(p.F, ew)), s.mag, p.F, s.nan, s.inf)
    dot.sign = I.ite(s.inf, s.inf_sign, s.sign)
    f2 = p.late_frac_bits
    # a zero c still sits at exponent emin, so emin floors the alignment point
    s2 = block_sum(I, p, [dot, c], ew, p.F, "floor", p.fc.emin,
                   keeps=[f2 + 1, p.F], trace=trace)
    mid = internal_format(p.fout.exp_bits, f2)
    bits = round_fixed(I, s2, mid, "rd", ew, p.overflow, p.zero_sign, False)
    return round_fixed(I, term_fixed(I, unpack(I, mid, bits, ew, False), ew), result_format(p), p.final_rounding, ew, p.overflow,
                       p.zero_sign, flush_out(p))


def dot(I, p: ModelParams, a: list, b: list, c, trace=None):
    """d = c + sum a_i b_i as bits of out_format, block after block.

    ``a`` and ``b`` are lists of words in in_format, ``c`` a word in
    c_format. A dot product longer than block_size runs as consecutive
    blocks (see p.chaining)."""
    if len(a) != len(b) or not a:
        raise ValueError("a and b must be non-empty and of equal length")
    ew = exp_width(p)
    ta = [unpack(I, p.fin, x, ew, flush_in(p)) for x in a]
    tb = [unpack(I, p.fin, y, ew, flush_in(p)) for y in b]
    prods = [multiply(I, x, y, p, ew) for x, y in zip(ta, tb)]
    c_term = unpack(I, p.fc, c, ew, flush_in(p))
    return dot_terms(I, p, prods, c_term, ew, trace)


def order_terms(p: ModelParams, prods: list) -> list:
    """Products in the order the blocks take them (p.term_order)."""
    if p.term_order == "pairs_mod4":
        first = [t for k, t in enumerate(prods) if k % 4 < 2]
        return first + [t for k, t in enumerate(prods) if k % 4 >= 2]
    return list(prods)


def dot_terms(I, p: ModelParams, prods: list[Term], c_term: Term, ew: int, trace=None):
    """The dot product from finished product Terms and the Term of c.

    Blocks take the products in p.term_order, block_size at a time. With c
    placed "after", the blocks start from zero and c is added to their
    result at the end with one IEEE addition rounded with p.c_rounding."""
    out = result_format(p)
    prods = order_terms(p, prods)
    if trace is not None:
        for i, t in enumerate(prods):
            trace.append((f"product {i}", t, "term"))
    chunks = [prods[i:i + p.block_size] for i in range(0, len(prods), p.block_size)]
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
            bits = block(I, p, chunk, start, ew, trace if k == len(chunks) - 1 else None)
            if trace is not None:
                trace.append((f"block {k} result", bits, f"bits:{out.name}"))
    if p.c_placement == "after":
        bits = add_ieee(I, p, unpack(I, out, bits, ew, False), c_term, out, p.c_rounding, ew)
        if trace is not None:
            trace.append(("c added", bits, f"bits:{out.name}"))
    return finish(I, p, bits, out)


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
    """Result bits in out_format, with the model's NaN."""
    fout = p.fout
    bits = widen(I, bits, out, fout)
    if p.nan_bits is not None:
        nan_val = fout.from_storage(int(p.nan_bits, 16))
        is_nan = unpack(I, fout, bits, exp_width(p), False).nan
        bits = I.ite(is_nan, I.const(nan_val, fout.bits), bits)
    return bits


def input_formats(p: ModelParams) -> tuple[Format, Format, Format]:
    return p.fin, p.fc, p.fout


__all__ = ["Term", "Fixed", "dot", "block", "unpack", "multiply", "round_fixed",
           "block_sum", "exp_width", "get_format"]
