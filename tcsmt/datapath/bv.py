"""The bit-vector vocabulary the datapath is written in.

An *interpretation* gives meaning to about twenty primitives, named after
SMT-LIB's fixed-size bit-vector theory. Words have a fixed width; Bools are
the results of comparisons and the conditions of ``ite``:

=====================  =====================================================
``const(v, w)``        the w-bit word holding ``v mod 2**w``
``width(x)``           the width of a word (a Python int, known statically)
``extract(x, hi, lo)`` bits hi..lo of x
``concat(x, y)``       x in the high bits, y in the low bits
``zext(x, n)``         n zero bits on top (zero_extend)
``sext(x, n)``         n copies of the sign bit on top (sign_extend)
``add sub mul neg``    modular arithmetic (bvadd bvsub bvmul bvneg)
``bvand bvor bvxor``   bitwise logic; ``bvnot`` complements
``shl lshr ashr``      shifts by a word of the same width; a shift of the
                       width or more gives 0 (or all sign bits for ashr)
``eq ult ule slt sle`` comparisons, giving a Bool
``ite(c, x, y)``       x if the Bool c holds, else y (words or Bools)
``and_ or_ not_``      Bool connectives; ``bool_const(b)`` a Bool literal
=====================  =====================================================

Three interpretations implement them: Python ints (``tcsmt.interp.ints``, one
sample at a time), NumPy arrays (``tcsmt.interp.arrays``, a batch at once) and
SMT-LIB terms (``tcsmt.smt.terms``, formulas for any solver). The datapath
(``tcsmt.datapath``) calls only these primitives and the derived operations
below, so it is one definition with three meanings.

Python ``if`` in the datapath may test only parameters and widths, never
words or Bools: the Python-int interpretation's words refuse ``bool()`` so a
data-dependent branch fails at once, in every run.

The derived operations below are written once, over the primitives.
"""

from __future__ import annotations

from typing import Any, Protocol

Word = Any
Bool = Any


class Interp(Protocol):  # pragma: no cover - documentation of the interface
    name: str

    def const(self, value: int, width: int) -> Word: ...
    def bool_const(self, value: bool) -> Bool: ...
    def width(self, x: Word) -> int: ...
    def extract(self, x: Word, hi: int, lo: int) -> Word: ...
    def concat(self, x: Word, y: Word) -> Word: ...
    def zext(self, x: Word, n: int) -> Word: ...
    def sext(self, x: Word, n: int) -> Word: ...
    def add(self, x: Word, y: Word) -> Word: ...
    def sub(self, x: Word, y: Word) -> Word: ...
    def mul(self, x: Word, y: Word) -> Word: ...
    def neg(self, x: Word) -> Word: ...
    def bvand(self, x: Word, y: Word) -> Word: ...
    def bvor(self, x: Word, y: Word) -> Word: ...
    def bvxor(self, x: Word, y: Word) -> Word: ...
    def bvnot(self, x: Word) -> Word: ...
    def shl(self, x: Word, s: Word) -> Word: ...
    def lshr(self, x: Word, s: Word) -> Word: ...
    def ashr(self, x: Word, s: Word) -> Word: ...
    def eq(self, x: Word, y: Word) -> Bool: ...
    def ult(self, x: Word, y: Word) -> Bool: ...
    def ule(self, x: Word, y: Word) -> Bool: ...
    def slt(self, x: Word, y: Word) -> Bool: ...
    def sle(self, x: Word, y: Word) -> Bool: ...
    def ite(self, c: Bool, x: Any, y: Any) -> Any: ...
    def and_(self, *bs: Bool) -> Bool: ...
    def or_(self, *bs: Bool) -> Bool: ...
    def not_(self, b: Bool) -> Bool: ...


PRIMITIVES = (
    "const", "bool_const", "width", "extract", "concat", "zext", "sext",
    "add", "sub", "mul", "neg", "bvand", "bvor", "bvxor", "bvnot",
    "shl", "lshr", "ashr", "eq", "ult", "ule", "slt", "sle",
    "ite", "and_", "or_", "not_",
)


# ---------------------------------------------------------------------------
# Derived operations (written once, over the primitives)
# ---------------------------------------------------------------------------

def bits_for(n: int) -> int:
    """Width of an unsigned word that holds 0..n."""
    return max(1, int(n).bit_length())


def zero(I: Interp, w: int) -> Word:
    return I.const(0, w)


def ones(I: Interp, w: int) -> Word:
    return I.const((1 << w) - 1, w)


def is_zero(I: Interp, x: Word) -> Bool:
    return I.eq(x, I.const(0, I.width(x)))


def bit(I: Interp, x: Word, i: int) -> Bool:
    """Bit i of x as a Bool."""
    return I.eq(I.extract(x, i, i), I.const(1, 1))


def msb(I: Interp, x: Word) -> Bool:
    return bit(I, x, I.width(x) - 1)


def from_bool(I: Interp, c: Bool, w: int = 1) -> Word:
    return I.ite(c, I.const(1, w), I.const(0, w))


def resize_u(I: Interp, x: Word, w: int) -> Word:
    """x as an unsigned w-bit word (zero-extended, or its low w bits)."""
    xw = I.width(x)
    if w > xw:
        return I.zext(x, w - xw)
    if w < xw:
        return I.extract(x, w - 1, 0)
    return x


def resize_s(I: Interp, x: Word, w: int) -> Word:
    """x as a signed w-bit word (sign-extended, or its low w bits)."""
    xw = I.width(x)
    if w > xw:
        return I.sext(x, w - xw)
    if w < xw:
        return I.extract(x, w - 1, 0)
    return x


def sconst(I: Interp, v: int, w: int) -> Word:
    """A signed constant (two's complement) of width w."""
    if not -(1 << (w - 1)) <= v < (1 << (w - 1)):
        raise ValueError(f"{v} does not fit in a signed {w}-bit word")
    return I.const(v & ((1 << w) - 1), w)


def umax(I: Interp, x: Word, y: Word) -> Word:
    return I.ite(I.ult(x, y), y, x)


def smax(I: Interp, x: Word, y: Word) -> Word:
    return I.ite(I.slt(x, y), y, x)


def smin(I: Interp, x: Word, y: Word) -> Word:
    return I.ite(I.slt(x, y), x, y)


def neg_if(I: Interp, c: Bool, x: Word) -> Word:
    """-x if c holds, else x (two's complement)."""
    return I.ite(c, I.neg(x), x)


def abs_s(I: Interp, x: Word) -> tuple[Bool, Word]:
    """(x < 0, |x|) for a signed word; |x| is read as unsigned, same width."""
    neg = msb(I, x)
    return neg, neg_if(I, neg, x)


def _fit_shift(I: Interp, x: Word, s: Word) -> tuple[Word, Bool]:
    """The shift amount s (unsigned, any width) at x's width, and whether
    s is at least x's width (every bit shifted out)."""
    w, sw = I.width(x), I.width(s)
    if sw <= w:
        return resize_u(I, s, w), I.bool_const(False)
    too_far = I.not_(I.ult(s, I.const(w, sw)))
    return I.extract(s, w - 1, 0), too_far


def lshr_by(I: Interp, x: Word, s: Word) -> Word:
    """x >> s for an unsigned shift amount of any width."""
    s_fit, too_far = _fit_shift(I, x, s)
    return I.ite(too_far, zero(I, I.width(x)), I.lshr(x, s_fit))


def shl_by(I: Interp, x: Word, s: Word) -> Word:
    """x << s for an unsigned shift amount of any width (bits shifted out are lost)."""
    s_fit, too_far = _fit_shift(I, x, s)
    return I.ite(too_far, zero(I, I.width(x)), I.shl(x, s_fit))


def low_mask(I: Interp, s: Word, w: int) -> Word:
    """The w-bit word whose low s bits are ones (all ones when s >= w)."""
    return I.bvnot(shl_by(I, ones(I, w), s))


def shifted_out(I: Interp, x: Word, s: Word) -> Bool:
    """Whether x >> s loses a one bit."""
    return I.not_(is_zero(I, I.bvand(x, low_mask(I, s, I.width(x)))))


def clz(I: Interp, x: Word) -> Word:
    """Count of leading zeros of x (x's width when x is 0), a word of width
    bits_for(width of x). An interpretation that counts natively (its
    ``count_leading_zeros``: the Python ints' bit_length) gives the same
    word as clz_generic, which every other one runs (tests compare them)."""
    native = getattr(I, "count_leading_zeros", None)
    return native(x) if native is not None else clz_generic(I, x)


def clz_generic(I: Interp, x: Word) -> Word:
    """clz over the primitives. Binary search: at each step, if the top half
    of the remaining window is zero, count it and shift the window up."""
    w = I.width(x)
    rw = bits_for(w)
    p = 1
    while p < w:
        p <<= 1
    v = resize_u(I, x, p) if p == w else I.concat(x, I.const(0, p - w))
    count = I.const(0, rw)
    step = p // 2
    while step >= 1:
        top_zero = is_zero(I, I.extract(v, p - 1, p - step))
        v = I.ite(top_zero, I.shl(v, I.const(step, p)), v)
        count = I.ite(top_zero, I.add(count, I.const(step, rw)), count)
        step //= 2
    return I.ite(is_zero(I, x), I.const(w, rw), count)


def all_(I: Interp, bools: list[Bool]) -> Bool:
    return I.and_(*bools) if bools else I.bool_const(True)


def any_(I: Interp, bools: list[Bool]) -> Bool:
    return I.or_(*bools) if bools else I.bool_const(False)


def xor_b(I: Interp, a: Bool, b: Bool) -> Bool:
    return I.ite(a, I.not_(b), b)
