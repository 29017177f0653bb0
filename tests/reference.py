"""An exact reference for IEEE 754 dot products, written with Fractions.

This module is a test oracle. It is written on purpose without looking at
``tcsmt.datapath``: it does not align, shift or count bits. It computes every
sum exactly with ``fractions.Fraction`` and then picks the neighbouring
representable number the rounding mode asks for. From ``tcsmt.model.formats`` it
takes only what a format *is* (field widths, bias, the value of a bit
pattern), which ``tests/test_formats.py`` checks against ml_dtypes.

The computation it describes (an IEEE fused multiply-add chain):

    for each block of ``block_size`` products, in order:
        acc = c                        (the dot product's c, or the previous
                                        block's result)
        for each product in the block, in the given order:
            acc = round_acc(acc + a_i * b_i)     one rounding per addition,
                                                 the product itself exact
        c = round_out(acc)             the block's result, in out_format
    d = c

Special values follow IEEE 754: NaN in, NaN out; infinity times zero is NaN;
infinity minus infinity is NaN. An exact zero sum of two operands of opposite
sign is +0, or -0 when rounding toward minus infinity; (-0) + (-0) is -0 and
(+0) + (+0) is +0 in every mode. A non-zero result that rounds to zero keeps
its sign. Overflow gives infinity when the mode rounds away from zero and the
largest finite number when it rounds toward zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from tcsmt.model.formats import Format

MODES = ("rne", "rz", "ru", "rd")


@dataclass(frozen=True)
class Ext:
    """An extended real: a number (with a sign that matters for zero), an
    infinity, or NaN."""

    kind: str            # "num", "inf" or "nan"
    neg: bool = False    # sign bit (for a number: also the sign of a zero)
    mag: Fraction = Fraction(0)   # magnitude of a number, >= 0

    @property
    def value(self) -> Fraction:
        """The signed value of a number."""
        assert self.kind == "num"
        return -self.mag if self.neg else self.mag

    def __str__(self) -> str:
        if self.kind == "nan":
            return "nan"
        if self.kind == "inf":
            return "-inf" if self.neg else "inf"
        if self.mag == 0:
            return "-0" if self.neg else "+0"
        return str(self.value)


NAN = Ext("nan")


def number(v: Fraction, neg_zero: bool = False) -> Ext:
    v = Fraction(v)
    if v == 0:
        return Ext("num", neg_zero, Fraction(0))
    return Ext("num", v < 0, abs(v))


def inf(neg: bool) -> Ext:
    return Ext("inf", neg)


# ---------------------------------------------------------------------------
# Bits <-> values
# ---------------------------------------------------------------------------

def decode(fmt: Format, bits: int) -> Ext:
    """The value of a bit pattern (fmt.bits wide)."""
    kind = fmt.classify(bits)
    neg = bool(bits >> (fmt.bits - 1))
    if kind == "nan":
        return NAN
    if kind == "inf":
        return inf(neg)
    return Ext("num", neg, abs(Fraction(fmt.value(bits))))


def encode(fmt: Format, x: Ext) -> int:
    """The bit pattern of a value that ``fmt`` holds exactly (as produced by
    ``round_to``). NaN is encoded as fmt's canonical NaN."""
    if x.kind == "nan":
        return fmt.nan_bits()
    if x.kind == "inf":
        return fmt.inf_bits(int(x.neg))
    sign = int(x.neg)
    if x.mag == 0:
        return fmt.pack(sign, 0, 0)
    # x.mag = sig * 2**(e - frac_bits) with e >= emin and sig < 2**(frac_bits+1)
    e = max(floor_log2(x.mag), fmt.emin)
    sig = x.mag / Fraction(2) ** (e - fmt.frac_bits)
    assert sig.denominator == 1 and sig < (1 << (fmt.frac_bits + 1)), (fmt.name, x)
    sig = int(sig)
    if sig >> fmt.frac_bits:      # normal
        return fmt.pack(sign, e + fmt.bias, sig - (1 << fmt.frac_bits))
    assert e == fmt.emin
    return fmt.pack(sign, 0, sig)


def floor_log2(x: Fraction) -> int:
    """The integer e with 2**e <= x < 2**(e+1), for x > 0 (by search, not
    by bit lengths, to stay apart from the code under test)."""
    assert x > 0
    e = 0
    while Fraction(2) ** e > x:
        e -= 64
    while Fraction(2) ** (e + 64) <= x:
        e += 64
    # now 2**e <= x < 2**(e+64)
    lo, hi = e, e + 64
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if Fraction(2) ** mid <= x:
            lo = mid
        else:
            hi = mid
    return lo


# ---------------------------------------------------------------------------
# Rounding an exact value into a format
# ---------------------------------------------------------------------------

def round_to(fmt: Format, x: Ext, mode: str) -> Ext:
    """x rounded into the IEEE format ``fmt`` with ``mode``; specials and
    zeros pass through unchanged."""
    if mode not in MODES:
        raise ValueError(mode)
    if x.kind != "num" or x.mag == 0:
        return x
    # the grid spacing at x: 2**(e - frac_bits), e the exponent of x but not
    # below emin (subnormals share emin's spacing)
    e = max(floor_log2(x.mag), fmt.emin)
    ulp = Fraction(2) ** (e - fmt.frac_bits)
    n, rem = divmod(x.mag, ulp)          # x.mag = n*ulp + rem, 0 <= rem < ulp
    n = int(n)
    down, up = n * ulp, (n + 1) * ulp    # the two candidates around |x|
    if rem == 0:
        mag = down
    elif mode == "rz":
        mag = down
    elif mode == "ru":
        mag = down if x.neg else up
    elif mode == "rd":
        mag = up if x.neg else down
    else:  # rne
        if 2 * rem < ulp:
            mag = down
        elif 2 * rem > ulp:
            mag = up
        else:
            mag = down if n % 2 == 0 else up
    if mag > fmt.max_finite():
        toward_zero = mode == "rz" or (mode == "ru" and x.neg) or (mode == "rd" and not x.neg)
        if toward_zero:
            return Ext("num", x.neg, fmt.max_finite())
        return inf(x.neg)
    return Ext("num", x.neg, mag)


# ---------------------------------------------------------------------------
# Exact arithmetic with IEEE special cases
# ---------------------------------------------------------------------------

def mul(x: Ext, y: Ext) -> Ext:
    """The exact product."""
    neg = x.neg != y.neg
    if x.kind == "nan" or y.kind == "nan":
        return NAN
    if x.kind == "inf" or y.kind == "inf":
        other = y if x.kind == "inf" else x
        if other.kind == "num" and other.mag == 0:
            return NAN          # infinity times zero
        return inf(neg)
    return Ext("num", neg, x.mag * y.mag)


def add(x: Ext, y: Ext, mode: str) -> Ext:
    """The exact sum (not rounded), with IEEE's sign of an exact zero under
    ``mode``."""
    if x.kind == "nan" or y.kind == "nan":
        return NAN
    if x.kind == "inf" and y.kind == "inf":
        return inf(x.neg) if x.neg == y.neg else NAN
    if x.kind == "inf":
        return x
    if y.kind == "inf":
        return y
    s = x.value + y.value
    if s != 0:
        return number(s)
    if x.mag == 0 and y.mag == 0 and x.neg == y.neg:
        return x                 # (+0)+(+0) = +0, (-0)+(-0) = -0
    return Ext("num", mode == "rd", Fraction(0))


# ---------------------------------------------------------------------------
# The dot product
# ---------------------------------------------------------------------------

def dot(a: list[int], b: list[int], c: int, *, in_fmt: Format, c_fmt: Format,
        acc_fmt: Format, out_fmt: Format, mode: str, block_size: int,
        order: str = "sequential", out_mode: str | None = None) -> int:
    """d = c + sum a_i*b_i as out_fmt bits, as an IEEE FMA chain (see the
    module docstring). ``order`` is "sequential" (products in index order)
    or "reverse" (each block's products in reverse order). ``out_mode``
    rounds block results to out_fmt (default: ``mode``)."""
    out_mode = out_mode or mode
    prods = [mul(decode(in_fmt, x), decode(in_fmt, y)) for x, y in zip(a, b)]
    acc_c = decode(c_fmt, c)
    for start in range(0, len(prods), block_size):
        chunk = prods[start:start + block_size]
        if order == "reverse":
            chunk = chunk[::-1]
        elif order != "sequential":
            raise ValueError(order)
        acc = round_to(acc_fmt, acc_c, mode)   # c itself, when acc_fmt holds it
        for pr in chunk:
            acc = round_to(acc_fmt, add(acc, pr, mode), mode)
        acc_c = round_to(out_fmt, acc, out_mode)
    return encode(out_fmt, acc_c)


def dot_value(*args, **kwargs) -> Ext:
    """The same as ``dot``, as a value (for messages)."""
    bits = dot(*args, **kwargs)
    return decode(kwargs["out_fmt"], bits)
