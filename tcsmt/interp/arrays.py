"""The NumPy interpretation of the bit-vector vocabulary: a batch at once.

A word is an ``NpWord``: a static width ``w`` (at most 64) and a value that
is either a Python int (a constant, the same for every sample) or an array
of unsigned integers of any shape. Shapes broadcast as in NumPy: a word of
shape [M, 1] and one of shape [1, N] combine into [M, N]. A Bool is an
``NpBool`` holding a Python bool or a bool array. Both refuse ``bool()``,
like the Python-int interpretation, so a data-dependent Python ``if`` fails
at once. Words wider than 64 bits are refused with a ``WidthError`` (a
UserError) naming the model: NumPy has no wider integers, and wrapping
silently would give wrong bits.

How the semantics of tcsmt.datapath.bv are kept, and where the speed comes from:

* dtype by width: uint8 up to 8 bits, uint16 up to 16, uint32 up to 32,
  uint64 up to 64 (exponents are 12-bit words: a quarter of the traffic).
* Constants stay Python ints; operations on constants only are computed
  exactly in Python, so only real data reaches NumPy.
* Lazy masking: add, sub, mul, neg and shl need only the low w bits of their
  operands, so their results may be "dirty" (bits from w up to the dtype's
  width set) and are masked once, in place, when an operation that reads
  the high bits (compare, right shift, extension) first needs them.
* Shifts by the width or more give 0 (ashr: copies of the sign bit), done
  explicitly: the amount is clamped to the dtype's width - 1 before NumPy
  shifts (a clean w-bit value, w below the dtype's width, shifted right that
  far is 0, shifted left that far has no bit below w); when w is the whole
  dtype the result is also multiplied by (amount < w).
* Signed comparisons flip the sign bit and compare unsigned.
* ``ite`` on words is the branch-free select ((x ^ y) * c) ^ y: np.where is
  several times slower when the condition is random (signs of products).
* A Bool array that holds one value everywhere becomes a Python bool (the
  NaN and infinity flags of finite data), so what it steers costs nothing.

Fused forms: the recorder (tcsmt.interp.trace) writes a few compositions
as one operation (``smax`` for ite(slt(x, y), y, x) and the like); their
NumPy meanings are in tcsmt.interp.fused, each exactly its composition.
"""

from __future__ import annotations

import numpy as np

from tcsmt.interp.fused import FusedForms
from tcsmt.interp.words import (
    DTYPE_BITS,
    FALSE,
    MASK,
    MAX_BITS,
    SINT,
    SLACK,
    TRUE,
    U64,
    UINT,
    NpBool,
    NpWord,
    WidthError,
    as_bool,
    cast,
    clean,
    dtype_bits,
    fold,
    mismatch,
    scalar,
    shift,
)

__all__ = ["NumpyInterp", "NpWord", "NpBool", "WidthError", "MAX_BITS", "dtype_bits", "NUMPY"]


class NumpyInterp(FusedForms):
    """NumPy arrays: a batch of samples per primitive, words up to 64 bits.
    ``model`` names the model in the refusal of a word wider than 64 bits."""

    name = "numpy"

    def __init__(self, model: str = "this model"):
        self.model = model
        self._fills: dict = {}

    def _check(self, w: int) -> int:
        if w > MAX_BITS:
            raise WidthError(
                f"{self.model}: the NumPy interpreter handles words of at most {MAX_BITS} bits, "
                f"and this model needs {w}-bit words; simulate it with the scalar "
                f"interpreter (tcsmt.dot) instead")
        return w

    def _fill(self, shape, value, dtype):
        """A constant array (np.minimum and np.maximum are several times
        slower against a scalar than against a same-shape array)."""
        key = (shape, value, dtype)
        arr = self._fills.get(key)
        if arr is None:
            arr = self._fills[key] = np.full(shape, value, dtype=dtype)
        return arr

    # -- words -------------------------------------------------------------

    def const(self, value: int, width: int) -> NpWord:
        if width < 1:
            raise ValueError(f"width {width} < 1")
        return NpWord(int(value) & ((1 << width) - 1), self._check(width))

    def bool_const(self, value: bool) -> NpBool:
        return TRUE if value else FALSE

    def width(self, x: NpWord) -> int:
        return x.w

    def array(self, values, w: int) -> NpWord:
        """A word of w-bit values from an array (or int) of unsigned values
        below 2**w (a helper for callers, not a primitive)."""
        if type(values) is int:
            return self.const(values, w)
        return NpWord(cast(np.asarray(values), self._check(w)), w)

    def extract(self, x: NpWord, hi: int, lo: int) -> NpWord:
        if not 0 <= lo <= hi < x.w:
            raise ValueError(f"extract [{hi}:{lo}] of a {x.w}-bit word")
        w = hi - lo + 1
        v = x.v
        if type(v) is int:
            return NpWord((v >> lo) & MASK[w], w)
        if lo:
            v = v >> lo
        if (x.dirty or hi < x.w - 1) and SLACK[w]:
            v = cast(v, w)
            if v is x.v:
                return NpWord(v & MASK[w], w)
            v &= MASK[w]                    # v is a new array here
            return NpWord(v, w)
        return NpWord(cast(v, w), w)

    def concat(self, x: NpWord, y: NpWord) -> NpWord:
        w = self._check(x.w + y.w)
        xv, yv = x.v, clean(y)
        if type(xv) is int:
            if type(yv) is int:
                return NpWord((xv << y.w) | yv, w)
            if xv == 0:
                return NpWord(cast(yv, w), w)
            return NpWord(scalar(xv << y.w, w) | cast(yv, w), w)
        v = cast(xv, w) << y.w
        if not (type(yv) is int and yv == 0):
            v = v | cast(yv, w)
        return NpWord(v, w, x.dirty and SLACK[w])

    def zext(self, x: NpWord, n: int) -> NpWord:
        w = self._check(x.w + n)
        return NpWord(cast(clean(x), w), w)

    def sext(self, x: NpWord, n: int) -> NpWord:
        w = self._check(x.w + n)
        v = clean(x)
        top = MASK[n] << x.w
        if type(v) is int:
            return NpWord(v | top if v >> (x.w - 1) else v, w)
        v = cast(v, w)
        t = v >> (x.w - 1)
        t *= scalar(top, w)
        t |= v
        return NpWord(t, w)

    # -- arithmetic and logic (low bits from low bits: results may be dirty) ----

    def add(self, x: NpWord, y: NpWord) -> NpWord:
        w, xv, yv = x.w, x.v, y.v
        if w != y.w:
            raise mismatch(x, y)
        if type(xv) is int:
            if type(yv) is int:
                return NpWord((xv + yv) & MASK[w], w)
            if xv == 0:
                return y
        elif type(yv) is int and yv == 0:
            return x
        return NpWord(xv + yv, w, SLACK[w])

    def sub(self, x: NpWord, y: NpWord) -> NpWord:
        w, xv, yv = x.w, x.v, y.v
        if w != y.w:
            raise mismatch(x, y)
        if type(xv) is int:
            if type(yv) is int:
                return NpWord((xv - yv) & MASK[w], w)
            xv = scalar(xv, w)
        elif type(yv) is int and yv == 0:
            return x
        return NpWord(xv - yv, w, SLACK[w])

    def mul(self, x: NpWord, y: NpWord) -> NpWord:
        w, xv, yv = x.w, x.v, y.v
        if w != y.w:
            raise mismatch(x, y)
        if type(xv) is int and type(yv) is int:
            return NpWord((xv * yv) & MASK[w], w)
        return NpWord(xv * yv, w, SLACK[w])

    def neg(self, x: NpWord) -> NpWord:
        w, v = x.w, x.v
        if type(v) is int:
            return NpWord(-v & MASK[w], w)
        return NpWord(scalar(0, w) - v, w, SLACK[w])

    def bvand(self, x: NpWord, y: NpWord) -> NpWord:
        if x.w != y.w:
            raise mismatch(x, y)
        return NpWord(x.v & y.v, x.w, x.dirty and y.dirty)

    def bvor(self, x: NpWord, y: NpWord) -> NpWord:
        if x.w != y.w:
            raise mismatch(x, y)
        return NpWord(x.v | y.v, x.w, x.dirty or y.dirty)

    def bvxor(self, x: NpWord, y: NpWord) -> NpWord:
        if x.w != y.w:
            raise mismatch(x, y)
        return NpWord(x.v ^ y.v, x.w, x.dirty or y.dirty)

    def bvnot(self, x: NpWord) -> NpWord:
        return NpWord(x.v ^ MASK[x.w], x.w, x.dirty)

    # -- shifts (by a word of the same width; SMT-LIB semantics) --------------

    def _clamped(self, s, w: int):
        """Shift amounts (an array) no larger than the dtype's width - 1."""
        d = DTYPE_BITS[w]
        return np.minimum(s, self._fill(s.shape, d - 1, UINT[d]))

    def shl(self, x: NpWord, s: NpWord) -> NpWord:
        w, xv, sv = x.w, x.v, clean(s)
        if w != s.w:
            raise mismatch(x, s)
        if type(sv) is int:
            if sv >= w:
                return NpWord(0, w)
            if sv == 0:
                return x
            if type(xv) is int:
                return NpWord((xv << sv) & MASK[w], w)
            return NpWord(xv << sv, w, SLACK[w])
        v = shift(np.left_shift, scalar(xv, w) if type(xv) is int else xv, self._clamped(sv, w))
        if not SLACK[w]:
            v = v * (sv < w)
        return NpWord(v, w, SLACK[w])

    def lshr(self, x: NpWord, s: NpWord) -> NpWord:
        w, xv, sv = x.w, clean(x), clean(s)
        if w != s.w:
            raise mismatch(x, s)
        if type(sv) is int:
            if sv >= w:
                return NpWord(0, w)
            return NpWord(xv >> sv, w) if sv else x
        v = shift(np.right_shift, scalar(xv, w) if type(xv) is int else xv, self._clamped(sv, w))
        if not SLACK[w]:
            v = v * (sv < w)
        return NpWord(v, w)

    def ashr(self, x: NpWord, s: NpWord) -> NpWord:
        w, xv, sv = x.w, clean(x), clean(s)
        if w != s.w:
            raise mismatch(x, s)
        if type(xv) is int and type(sv) is int:
            signed = xv - (1 << w) if xv >> (w - 1) else xv
            return NpWord((signed >> min(sv, w)) & MASK[w], w)
        d = DTYPE_BITS[w]
        if type(xv) is int:
            wide = SINT[d].type(xv - (1 << w) if xv >> (w - 1) else xv)
        else:
            sb = scalar(1 << (w - 1), w)
            wide = ((xv ^ sb) - sb).view(SINT[d])           # sign-extended to d bits
        amount = min(sv, w - 1) if type(sv) is int else np.minimum(sv, scalar(w - 1, w))
        v = (wide >> np.asarray(amount).astype(SINT[d])).view(UINT[d])
        return NpWord(v, w, SLACK[w])

    # -- comparisons ---------------------------------------------------------

    def eq(self, x: NpWord, y: NpWord) -> NpBool:
        if x.w != y.w:
            raise mismatch(x, y)
        return as_bool(clean(x) == clean(y))

    def ult(self, x: NpWord, y: NpWord) -> NpBool:
        if x.w != y.w:
            raise mismatch(x, y)
        return as_bool(clean(x) < clean(y))

    def ule(self, x: NpWord, y: NpWord) -> NpBool:
        if x.w != y.w:
            raise mismatch(x, y)
        return as_bool(clean(x) <= clean(y))

    def slt(self, x: NpWord, y: NpWord) -> NpBool:
        if x.w != y.w:
            raise mismatch(x, y)
        sb = 1 << (x.w - 1)                  # flipping the sign bit: signed order
        return as_bool((clean(x) ^ sb) < (clean(y) ^ sb))

    def sle(self, x: NpWord, y: NpWord) -> NpBool:
        if x.w != y.w:
            raise mismatch(x, y)
        sb = 1 << (x.w - 1)
        return as_bool((clean(x) ^ sb) <= (clean(y) ^ sb))

    # -- choice and Bool connectives ---------------------------------------------

    def ite(self, c: NpBool, x, y):
        cb = c.b
        if type(x) is NpBool:
            if type(cb) is bool:
                return x if cb else y
            return x if x is y else _ite_bool(cb, x.b, y.b)
        if x.w != y.w:
            raise ValueError(f"ite branches of widths {x.w} and {y.w}")
        if type(cb) is bool:
            return x if cb else y
        xv, yv, w = x.v, y.v, x.w
        if type(xv) is int and type(yv) is int:
            if xv == yv:
                return x
            return NpWord((scalar(xv ^ yv, w) * cb) ^ scalar(yv, w), w)
        # branch-free select: ((x ^ y) * c) ^ y is x where c holds, else y;
        # t is a new array, so the last two steps may write into it
        t = xv ^ yv
        if t.shape == cb.shape:
            np.multiply(t, cb, out=t)
        else:
            t = t * cb
        t ^= yv
        return NpWord(t, w, x.dirty or y.dirty)

    def and_(self, *bs: NpBool) -> NpBool:
        return _connect(bs, False, np.logical_and)

    def or_(self, *bs: NpBool) -> NpBool:
        return _connect(bs, True, np.logical_or)

    def not_(self, b: NpBool) -> NpBool:
        v = b.b
        if type(v) is bool:
            return FALSE if v else TRUE
        return NpBool(~v)

    # -- derived operations computed natively (tcsmt.datapath.bv) -------------

    def count_leading_zeros(self, x: NpWord) -> NpWord:
        """bv.clz: leading zeros of x (its width when x is 0), a word of
        width bits_for(x.w): x's width less its bit length (_bit_length)."""
        w = x.w
        rw = max(1, w.bit_length())
        v = clean(x)
        if type(v) is int:
            return NpWord(w - v.bit_length(), rw)
        return NpWord(cast(w - _bit_length(v), rw), rw)

    # -- helpers for callers (not part of the vocabulary) ---------------------

    @staticmethod
    def value(x, shape=None) -> np.ndarray:
        """The unsigned values of a word (as uint64) or the truths of a Bool,
        as an array broadcast to ``shape`` when given."""
        if type(x) is NpBool:
            out = np.asarray(x.b, dtype=bool)
        else:
            out = np.asarray(clean(x)).astype(U64)
        return out if shape is None else np.broadcast_to(out, shape)


def _connect(bs, absorbing: bool, combine) -> NpBool:
    """and_ (absorbing False) or or_ (absorbing True) of Bools."""
    arrays = []
    for b in bs:
        v = b.b
        if type(v) is bool:
            if v == absorbing:
                return TRUE if absorbing else FALSE
        else:
            arrays.append(v)
    if not arrays:
        return FALSE if absorbing else TRUE
    if len(arrays) == 1:
        return NpBool(arrays[0])
    out = combine(arrays[0], arrays[1])
    for v in arrays[2:]:
        out = combine(out, v)
    return fold(out)


def _bit_length(v: np.ndarray) -> np.ndarray:
    """The bit length of each unsigned value (0 for 0), as int32: the
    exponent frexp gives its float64, which is exact up to 2**53, so a
    64-bit value is taken as its two 32-bit halves."""
    if v.dtype.itemsize < 8:
        return np.frexp(v.astype(np.float64))[1]
    hi = v >> U64(32)
    top = np.frexp(hi.astype(np.float64))[1]
    low = np.frexp((v & U64(0xFFFFFFFF)).astype(np.float64))[1]
    return np.where(hi != 0, top + 32, low)


def _ite_bool(c, x, y) -> NpBool:
    """c ? x : y for Bools held as Python bools or arrays (c an array)."""
    if type(x) is bool and type(y) is bool:
        return NpBool(c.copy() if x else ~c) if x != y else (TRUE if x else FALSE)
    if type(x) is bool:
        return fold(c | y) if x else fold(~c & y)
    if type(y) is bool:
        return fold(~c | x) if y else fold(c & x)
    return fold((c & x) | (~c & y))


NUMPY = NumpyInterp()
