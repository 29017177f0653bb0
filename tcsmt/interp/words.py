"""Words and Bools of the NumPy interpretation, and the helpers the
primitives (tcsmt.interp.arrays) and fused forms (tcsmt.interp.fused) share.

A word is an ``NpWord``: a static width ``w`` (at most 64) and a value that
is a Python int (a constant) or an unsigned array whose dtype follows the
width; while ``dirty``, bits from w up to the dtype's width may be set. A
Bool is an ``NpBool``: a Python bool or a bool array. Both refuse bool().
"""

from __future__ import annotations

import numpy as np

from tcsmt.errors import UserError
from tcsmt.interp.ints import DATA_BRANCH_MESSAGE, DataBranchError

MAX_BITS = 64
U64 = np.uint64
DTYPE_BITS = [0] + [8] * 8 + [16] * 8 + [32] * 16 + [64] * 32     # dtype bits by width
UINT: dict[int, np.dtype] = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16),
                             32: np.dtype(np.uint32), 64: np.dtype(np.uint64)}
SINT: dict[int, np.dtype] = {8: np.dtype(np.int8), 16: np.dtype(np.int16),
                             32: np.dtype(np.int32), 64: np.dtype(np.int64)}
MASK = [(1 << w) - 1 for w in range(MAX_BITS + 1)]
SLACK = [w < DTYPE_BITS[w] for w in range(MAX_BITS + 1)]          # can a w-bit word be dirty


def dtype_bits(w: int) -> int:
    """Bits of the unsigned dtype that holds a w-bit word."""
    return DTYPE_BITS[w]


class WidthError(UserError):
    """A word wider than the NumPy interpretation can hold."""


class NpWord:
    """A w-bit word: a Python int constant, or an unsigned array (dtype by
    width) whose low w bits are the value; bits above w may be set while
    ``dirty``."""

    __slots__ = ("v", "w", "dirty")

    def __init__(self, v, w: int, dirty: bool = False):
        self.v, self.w, self.dirty = v, w, dirty

    def __bool__(self):
        raise DataBranchError(DATA_BRANCH_MESSAGE)

    def __eq__(self, other):  # pragma: no cover - guard against accidental use
        raise DataBranchError("compare words with the interpretation's eq")

    __hash__ = None     # type: ignore[assignment]  # unhashable, as __eq__ refuses (mypy#4266)

    def __repr__(self):
        return f"NpWord({self.v!r}, {self.w})"


class NpBool:
    """A Bool: a Python bool (the same for every sample) or a bool array."""

    __slots__ = ("b",)

    def __init__(self, b):
        self.b = b

    def __bool__(self):
        raise DataBranchError(DATA_BRANCH_MESSAGE)

    def __repr__(self):
        return f"NpBool({self.b!r})"


TRUE, FALSE = NpBool(True), NpBool(False)


def fold(arr) -> NpBool:
    """A Bool from a bool array (or NumPy bool); a uniform one becomes a constant."""
    if not arr.any():
        return FALSE
    if arr.all():
        return TRUE
    return NpBool(arr)


def as_bool(v) -> NpBool:
    if type(v) is bool:
        return TRUE if v else FALSE
    return fold(v)


def clean(x: NpWord):
    """x's value with every bit at w and above cleared (masked in place once)."""
    if x.dirty:
        x.v = x.v & MASK[x.w]
        x.dirty = False
    return x.v


def cast(v, w: int):
    """An array value in the dtype of w-bit words (a constant unchanged)."""
    if type(v) is int:
        return v
    want = UINT[DTYPE_BITS[w]]
    return v if v.dtype == want else v.astype(want)


def scalar(v: int, w: int):
    """A constant as a NumPy scalar of the w-bit dtype."""
    return UINT[DTYPE_BITS[w]].type(v)


def shift(fn, x, amounts):
    """fn(x, amounts), written into the (new) array of clamped amounts when
    it has the result's shape."""
    if np.ndim(x) == 0 or x.shape == amounts.shape:
        return fn(x, amounts, out=amounts)
    return fn(x, amounts)


def mismatch(x: NpWord, y: NpWord):
    return ValueError(f"width mismatch: {x.w} and {y.w}")
