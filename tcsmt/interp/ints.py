"""The Python-int interpretation of the bit-vector vocabulary.

One sample at a time, any width. Words and Bools refuse ``bool()``: the
datapath may not branch on data with a Python ``if``; it must use ``ite``.
This is the reference simulator: the other interpretations are tested
against it.
"""

from __future__ import annotations

from tcsmt.errors import InternalError


class DataBranchError(InternalError, TypeError):
    """A Python ``if`` (or ``and``/``or``/``not``) was applied to model data."""


DATA_BRANCH_MESSAGE = ("the datapath branched on data with a Python if/and/or/not; "
        "use the interpretation's ite/and_/or_/not_ instead")


class IntWord:
    """A w-bit word holding an unsigned value in [0, 2**w)."""

    __slots__ = ("v", "w")

    def __init__(self, v: int, w: int):
        self.v = v
        self.w = w

    def __bool__(self):
        raise DataBranchError(DATA_BRANCH_MESSAGE)

    def __repr__(self):
        return f"IntWord({self.v:#x}, {self.w})"

    def __eq__(self, other):  # pragma: no cover - guard against accidental use
        raise DataBranchError("compare words with the interpretation's eq")

    __hash__ = None     # type: ignore[assignment]  # unhashable, as __eq__ refuses (mypy#4266)


class IntBool:
    __slots__ = ("b",)

    def __init__(self, b: bool):
        self.b = b

    def __bool__(self):
        raise DataBranchError(DATA_BRANCH_MESSAGE)

    def __repr__(self):
        return f"IntBool({self.b})"


_TRUE = IntBool(True)
_FALSE = IntBool(False)


def _b(v: bool) -> IntBool:
    return _TRUE if v else _FALSE


class IntInterp:
    """Python ints: exact, unbounded widths, one sample."""

    name = "int"
    CONSTS = 4096
    """Constants kept for reuse (words are never changed in place): the
    datapath asks for the same few thousand (zeros, masks, shift amounts,
    biases) on every sample; a value first seen once the table is full is
    made afresh each time."""

    def __init__(self) -> None:
        self._consts: dict[tuple[int, int], IntWord] = {}

    def const(self, value: int, width: int) -> IntWord:
        word = self._consts.get((value, width))
        if word is not None:
            return word
        if width < 1:
            raise ValueError(f"width {width} < 1")
        word = IntWord(value & ((1 << width) - 1), width)
        if len(self._consts) < self.CONSTS:
            self._consts[value, width] = word
        return word

    def bool_const(self, value: bool) -> IntBool:
        return _b(bool(value))

    def width(self, x: IntWord) -> int:
        return x.w

    def extract(self, x, hi, lo):
        if not 0 <= lo <= hi < x.w:
            raise ValueError(f"extract [{hi}:{lo}] of a {x.w}-bit word")
        w = hi - lo + 1
        return IntWord((x.v >> lo) & ((1 << w) - 1), w)

    def concat(self, x, y):
        return IntWord((x.v << y.w) | y.v, x.w + y.w)

    def zext(self, x, n):
        return IntWord(x.v, x.w + n)

    def sext(self, x, n):
        w = x.w + n
        v = x.v
        if v >> (x.w - 1):
            v |= ((1 << n) - 1) << x.w
        return IntWord(v, w)

    @staticmethod
    def _same(x, y):
        if x.w != y.w:
            raise ValueError(f"width mismatch: {x.w} and {y.w}")
        return x.w

    def add(self, x, y):
        w = x.w
        if w != y.w:
            self._same(x, y)
        return IntWord((x.v + y.v) & ((1 << w) - 1), w)

    def sub(self, x, y):
        w = x.w
        if w != y.w:
            self._same(x, y)
        return IntWord((x.v - y.v) & ((1 << w) - 1), w)

    def mul(self, x, y):
        w = self._same(x, y)
        return IntWord((x.v * y.v) & ((1 << w) - 1), w)

    def neg(self, x):
        return IntWord((-x.v) & ((1 << x.w) - 1), x.w)

    def bvand(self, x, y):
        self._same(x, y)
        return IntWord(x.v & y.v, x.w)

    def bvor(self, x, y):
        self._same(x, y)
        return IntWord(x.v | y.v, x.w)

    def bvxor(self, x, y):
        self._same(x, y)
        return IntWord(x.v ^ y.v, x.w)

    def bvnot(self, x):
        return IntWord(x.v ^ ((1 << x.w) - 1), x.w)

    def shl(self, x, s):
        w = self._same(x, s)
        return IntWord((x.v << s.v) & ((1 << w) - 1) if s.v < w else 0, w)

    def lshr(self, x, s):
        self._same(x, s)
        return IntWord(x.v >> s.v if s.v < x.w else 0, x.w)

    def ashr(self, x, s):
        w = self._same(x, s)
        sv = _signed(x.v, w) >> min(s.v, w)
        return IntWord(sv & ((1 << w) - 1), w)

    def eq(self, x, y):
        if x.w != y.w:
            self._same(x, y)
        return _TRUE if x.v == y.v else _FALSE

    def ult(self, x, y):
        self._same(x, y)
        return _b(x.v < y.v)

    def ule(self, x, y):
        self._same(x, y)
        return _b(x.v <= y.v)

    def slt(self, x, y):
        w = self._same(x, y)
        return _b(_signed(x.v, w) < _signed(y.v, w))

    def sle(self, x, y):
        w = self._same(x, y)
        return _b(_signed(x.v, w) <= _signed(y.v, w))

    def ite(self, c, x, y):
        if type(x) is IntWord and x.w != y.w:
            raise ValueError(f"ite branches of widths {x.w} and {y.w}")
        return x if c.b else y

    def and_(self, *bs):
        for b in bs:
            if not b.b:
                return _FALSE
        return _TRUE

    def or_(self, *bs):
        for b in bs:
            if b.b:
                return _TRUE
        return _FALSE

    def not_(self, b):
        return _FALSE if b.b else _TRUE

    # -- derived operations computed natively (tcsmt.datapath.bv) -------------

    def count_leading_zeros(self, x: IntWord) -> IntWord:
        """bv.clz: leading zeros of x (its width when x is 0), a word of
        width bits_for(x.w)."""
        return IntWord(x.w - x.v.bit_length(), max(1, x.w.bit_length()))

    # -- helpers for callers (not part of the vocabulary) ---------------------

    @staticmethod
    def value(x) -> int:
        """The unsigned value of a word, or the truth of a Bool."""
        return x.b if isinstance(x, IntBool) else x.v


def _signed(v: int, w: int) -> int:
    return v - (1 << w) if v >> (w - 1) else v


INT = IntInterp()
