"""Rounding an unrounded sum (Fixed) into a format: normalisation, guard and
sticky bits, the rounding modes, overflow, signed zeros and specials."""

from __future__ import annotations

from tcsmt.datapath import bv
from tcsmt.datapath.stage import stage
from tcsmt.datapath.terms import Fixed
from tcsmt.model.formats import Format, internal_format


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


@stage()
def round_fixed(I, x: Fixed, fmt: Format, mode: str, ew: int, overflow: str,
                zero_sign: str, flush: bool | str):
    """Normalise (-1)**sign * mag * 2**scale and round it into ``fmt``
    (IEEE specials) with ``mode``; returns fmt's bits. ``flush``: False
    (subnormal results kept), True (rounded on the subnormal grid, then a
    zero of their sign) or "rounded" (rounded to fmt's full precision at
    their own exponent, then +0 below the smallest normal)."""
    fb, w = fmt.frac_bits, I.width(x.mag)
    lz = bv.resize_u(I, bv.clz(I, x.mag), ew)
    e_lead = I.sub(I.add(x.scale, I.const(w - 1, ew)), lz)
    if flush == "rounded":
        return _round_then_flush(I, x, fmt, mode, ew, overflow, zero_sign, e_lead)
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
    if not fmt.has_negative_zero or zero_sign in ("all_positive", "keep_c"):
        # a zero result is +0: fnuz has no -0 (it is the NaN); "all_positive"
        # also makes a sum that rounds to zero +0 (MMA-Sim adds +0.0 to d);
        # "keep_c" too, but for a c of -0 with no non-zero product (window.c_alone)
        sbit = bv.from_bool(I, I.and_(sign, I.not_(bv.is_zero(I, I.concat(expf, fracf)))))
    bits = I.concat(I.concat(sbit, expf), fracf)
    over = I.and_(normal, I.slt(bv.sconst(I, fmt.emax, ew), e_f))
    bits = I.ite(over, overflow_bits(I, fmt, mode, sign, overflow), bits)
    nan = I.const(nan_or_max(fmt, 0), fmt.bits)
    inf = I.ite(x.inf_sign, I.const(inf_or_nan(fmt, 1), fmt.bits), I.const(inf_or_nan(fmt, 0), fmt.bits))
    return I.ite(x.nan, nan, I.ite(x.inf, inf, bits))


def _round_then_flush(I, x: Fixed, fmt: Format, mode: str, ew: int, overflow: str,
                      zero_sign: str, e_lead):
    """round_fixed's "rounded" flush: the value rounded as if fmt's exponent
    had no floor, then +0 where the rounded exponent is below emin (AMD
    RDNA3: a value just under the smallest normal that rounds up to it
    stays; one that does not is +0, never a subnormal)."""
    wide = internal_format(fmt.exp_bits + 2, fmt.frac_bits)
    bits = round_fixed(I, x, wide, mode, ew, overflow, zero_sign, False)
    t = unpack_bits(I, wide, bits, ew)
    tiny = I.and_(I.slt(t[1], bv.sconst(I, fmt.emin, ew)), I.not_(I.or_(x.nan, x.inf)))
    huge = I.and_(I.slt(bv.sconst(I, fmt.emax, ew), t[1]), I.not_(I.or_(x.nan, x.inf)))
    biased = bv.resize_u(I, I.add(t[1], I.const(fmt.bias, ew)), fmt.exp_bits)
    is_zero = bv.is_zero(I, t[2])
    expf = I.ite(I.or_(tiny, is_zero), I.const(0, fmt.exp_bits), biased)
    fracf = I.ite(tiny, I.const(0, fmt.frac_bits), I.extract(t[2], fmt.frac_bits - 1, 0))
    sign = I.and_(t[0], I.not_(tiny))
    if zero_sign in ("all_positive", "keep_c") or not fmt.has_negative_zero:
        sign = I.and_(sign, I.not_(is_zero))
    out = I.concat(I.concat(bv.from_bool(I, sign), expf), fracf)
    out = I.ite(huge, overflow_bits(I, fmt, mode, t[0], overflow), out)
    nan = I.const(nan_or_max(fmt, 0), fmt.bits)
    inf = I.ite(x.inf_sign, I.const(inf_or_nan(fmt, 1), fmt.bits), I.const(inf_or_nan(fmt, 0), fmt.bits))
    return I.ite(x.nan, nan, I.ite(x.inf, inf, out))


def unpack_bits(I, fmt: Format, bits, ew: int):
    """(sign, unbiased exponent, significand with its hidden bit) of a
    normal or zero value of an IEEE-like format."""
    fb, eb = fmt.frac_bits, fmt.exp_bits
    sign = bv.bit(I, bits, fmt.bits - 1)
    expf = I.extract(bits, fb + eb - 1, fb)
    hidden = I.ite(bv.is_zero(I, expf), I.const(0, 1), I.const(1, 1))
    sig = I.concat(hidden, I.extract(bits, fb - 1, 0))
    return sign, I.sub(bv.resize_u(I, expf, ew), I.const(fmt.bias, ew)), sig


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
    e4m3fn with the sign, the fnuz formats' one NaN), else the largest
    finite number (formats with neither)."""
    if fmt.has_inf:
        return fmt.inf_bits(sign)
    if fmt.specials == "fnuz":
        return fmt.nan_bits()
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
