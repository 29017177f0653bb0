"""Fused forms of the NumPy interpretation: compositions of primitives that
the recorder (tcsmt.interp.trace) writes as one operation, computed here
with fewer passes over memory and exactly the composition's meaning (tests
in tests/test_interp_numpy.py check each against it):

  smax(x, y)    ite(slt(x, y), y, x)        smin(x, y)    ite(slt(x, y), x, y)
  umax(x, y)    ite(ult(x, y), y, x)        umin(x, y)    ite(ult(x, y), x, y)
  xor_(a, b)    ite(a, not_(b), b)          neg_if(c, x)  ite(c, neg(x), x)

A mixin of NumpyInterp: it uses the interpretation's neg, ite and _fill.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tcsmt.interp.words import (
    DTYPE_BITS,
    FALSE,
    MASK,
    SINT,
    SLACK,
    TRUE,
    UINT,
    NpBool,
    NpWord,
    as_bool,
    clean,
    mismatch,
)


class FusedForms:
    """The fused forms (see the module doc)."""

    if TYPE_CHECKING:       # NumpyInterp's, which this class is mixed into
        def neg(self, x: NpWord) -> NpWord: ...
        def ite(self, c: NpBool, x, y): ...
        def _fill(self, shape, value, dtype): ...

    def smax(self, x: NpWord, y: NpWord) -> NpWord:
        return self._signed_pick(max, np.maximum, x, y)

    def smin(self, x: NpWord, y: NpWord) -> NpWord:
        return self._signed_pick(min, np.minimum, x, y)

    def umax(self, x: NpWord, y: NpWord) -> NpWord:
        return self._unsigned_pick(max, np.maximum, x, y)

    def umin(self, x: NpWord, y: NpWord) -> NpWord:
        return self._unsigned_pick(min, np.minimum, x, y)

    def xor_(self, a: NpBool, b: NpBool) -> NpBool:
        av, bv = a.b, b.b
        if type(av) is bool and type(bv) is bool:
            return TRUE if av != bv else FALSE
        return as_bool(av ^ bv)

    def neg_if(self, c: NpBool, x: NpWord) -> NpWord:
        """With m = c as 0 or 1, (x ^ -m) + m is -x where m is 1, x where 0:
        one new array instead of neg's and the select's."""
        cb, v, w = c.b, x.v, x.w
        if type(cb) is bool:
            return self.neg(x) if cb else x
        if type(v) is int:
            return self.ite(c, self.neg(x), x)
        m = cb.astype(v.dtype)
        t = np.negative(m)
        if t.shape == np.broadcast_shapes(t.shape, v.shape):
            t ^= v
        else:
            t = t ^ v
        t += m
        return NpWord(t, w, SLACK[w])

    def _unsigned_pick(self, py, pick, x: NpWord, y: NpWord) -> NpWord:
        w, xv, yv = x.w, clean(x), clean(y)
        if w != y.w:
            raise mismatch(x, y)
        if type(xv) is int and type(yv) is int:
            return NpWord(py(xv, yv), w)
        d = UINT[DTYPE_BITS[w]]
        xv = self._fill(yv.shape, xv, d) if type(xv) is int else xv
        yv = self._fill(xv.shape, yv, d) if type(yv) is int else yv
        return NpWord(pick(xv, yv), w)

    def _signed_pick(self, py, pick, x: NpWord, y: NpWord) -> NpWord:
        """Both words moved to the top of their dtype (bits above w fall off)
        and viewed as signed, picked, and moved back down by an arithmetic
        shift (copies of the sign above w: a dirty result)."""
        w = x.w
        if w != y.w:
            raise mismatch(x, y)
        d = DTYPE_BITS[w]
        k = d - w
        tx, ty = _top(x, d, k), _top(y, d, k)
        if type(tx) is int and type(ty) is int:
            return NpWord((py(tx, ty) >> k) & MASK[w], w)
        tx = self._fill(ty.shape, tx, SINT[d]) if type(tx) is int else tx
        ty = self._fill(tx.shape, ty, SINT[d]) if type(ty) is int else ty
        m = pick(tx, ty)
        if k:
            m >>= k
        return NpWord(m.view(UINT[d]), w, k > 0)


def _top(x: NpWord, d: int, k: int):
    """x's value shifted to the top of d bits, as a signed int or array."""
    v = x.v
    if type(v) is int:
        return (v - (1 << x.w) if v >> (x.w - 1) else v) << k
    return (v << k if k else v).view(SINT[d])
