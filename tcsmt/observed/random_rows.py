"""Random dot products over the whole range of a model's formats, for
differential runs against another simulator (tcsmt.peer.agreement).

Rows are bit patterns: a and b [N, K] in the model's in_format and
b_format, c [N] in its c_format, and for a block-scaled model the scales
[N, S] as container words (a ue4m3 scale in a byte with its sign bit set at
random: the hardware ignores it). Each row is one of KINDS, in turn:

  values     finite a, b and c with exponents anywhere in their formats
             (zeros and subnormals included)
  near       exponents in a narrow band, c near the products' size (terms
             align, truncate and carry)
  cancel     products that cancel in pairs, c minus the first product, and
             a small survivor
  tiny       subnormal and zero inputs, c subnormal or zero
  zeros      mostly +0 and -0 inputs and c
  large      exponents near the largest (overflow to infinity)
  specials   near rows with NaN and infinity inputs put in
  bits       every bit random (any encoding)

Scales are mostly near 1, else anywhere in their format, at its extremes
(ue8m0 2^-127 and 2^127; ue4m3 zero, the smallest subnormal, 448) or NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcsmt.model.formats import Format
from tcsmt.model.params import ModelParams

KINDS = ("values", "near", "cancel", "tiny", "zeros", "large", "specials", "bits")


@dataclass
class Rows:
    a: np.ndarray            # [N, K] uint64 bits of in_format
    b: np.ndarray            # [N, K] uint64 bits of b_format
    c: np.ndarray            # [N] uint64 bits of c_format
    sa: np.ndarray | None    # [N, S] scale container words, or None
    sb: np.ndarray | None

    def scale_bits(self, p: ModelParams):
        """The scales as the datapath reads them (the container's ignored
        bits dropped), or (None, None)."""
        if self.sa is None:
            return None, None
        assert self.sb is not None         # the scales of a and b come together
        mask = np.uint64((1 << p.scaling()[0].bits) - 1)
        return self.sa & mask, self.sb & mask

    def take(self, idx) -> Rows:
        def sel(x):
            return None if x is None else x[idx]
        return Rows(self.a[idx], self.b[idx], self.c[idx], sel(self.sa), sel(self.sb))


def _pack(fmt: Format, sign, exp, frac) -> np.ndarray:
    sign = np.asarray(sign, dtype=np.uint64) if fmt.signed else np.uint64(0)
    word = (np.asarray(exp, dtype=np.uint64) << np.uint64(fmt.frac_bits)) | np.asarray(frac, np.uint64)
    return (sign << np.uint64(fmt.bits - 1)) | word if fmt.signed else word


def _finite(fmt: Format, rng, shape, lo: int = 0, hi: int | None = None) -> np.ndarray:
    """Finite encodings with biased exponent fields in [lo, hi] (0: zero
    and subnormals), random sign and fraction."""
    hi = fmt.max_exp_field if hi is None else hi
    exp = rng.integers(max(lo, 0), min(hi, fmt.max_exp_field) + 1, shape)
    frac = rng.integers(0, 1 << fmt.frac_bits, shape, dtype=np.uint64)
    top = exp == fmt.max_exp_field
    frac = np.where(top, np.minimum(frac, fmt.max_frac_at_emax), frac)
    bits = _pack(fmt, rng.integers(0, 2, shape), exp, frac)
    if fmt.specials == "fnuz":                       # its -0 is the NaN
        bits = np.where(bits == np.uint64(1 << (fmt.bits - 1)), np.uint64(0), bits)
    return bits


def _around(fmt: Format, rng, shape, e) -> np.ndarray:
    """Finite encodings with unbiased exponents near e (per row)."""
    field = np.asarray(e)[..., None] + fmt.bias + rng.integers(-2, 3, shape)
    field = np.clip(field, 0, fmt.max_exp_field)
    frac = rng.integers(0, 1 << fmt.frac_bits, shape, dtype=np.uint64)
    frac = np.where(field == fmt.max_exp_field, np.minimum(frac, fmt.max_frac_at_emax), frac)
    return _pack(fmt, rng.integers(0, 2, shape), field, frac)


def _specials(fmt: Format) -> list[int]:
    out = []
    if fmt.has_nan:
        out.append(fmt.nan_bits())
    if fmt.has_inf:
        out += [fmt.inf_bits(0), fmt.inf_bits(1)]
    return out


def _scales(fmt: Format, rng, shape) -> np.ndarray:
    """Scale container words: near 1 (60%), anywhere finite (25%), extremes
    (14%), NaN (1%); ue4m3's ignored sign bit random."""
    near = _around(fmt, rng, shape, np.zeros(shape[:1], dtype=np.int64))
    anywhere = _finite(fmt, rng, shape)
    ext = [fmt.pack(0, 0, 0), fmt.max_finite_bits(0)]
    if fmt.subnormals and fmt.frac_bits:
        ext.append(fmt.pack(0, 0, 1))
    extreme = rng.choice(np.array(ext, dtype=np.uint64), shape)
    r = rng.random(shape)
    words = np.where(r < 0.6, near, np.where(r < 0.85, anywhere, extreme))
    words = np.where(r >= 0.99, np.uint64(fmt.nan_bits()), words)
    if fmt.storage_bits > fmt.bits and not fmt.signed:
        words |= rng.integers(0, 2, shape, dtype=np.uint64) << np.uint64(fmt.bits)
    return words


def random_rows(p: ModelParams, k: int, n: int, seed: int = 0) -> Rows:
    """n rows of length k, the kinds of KINDS in turn."""
    rng = np.random.default_rng(seed)
    fa, fb, fc = p.fin, p.fb, p.fc
    s = p.scale_count(k)
    sa = _scales(p.scaling()[0], rng, (n, s)) if s else None
    sb = _scales(p.scaling()[0], rng, (n, s)) if s else None
    a, b = _finite(fa, rng, (n, k)), _finite(fb, rng, (n, k))
    c = _finite(fc, rng, (n,))
    kind = np.arange(n) % len(KINDS)
    _near(p, rng, a, b, c, kind, sa, sb)
    _cancel(p, rng, a, b, c, kind == KINDS.index("cancel"))
    _tiny_zeros_large(p, rng, a, b, c, kind)
    rows = kind == KINDS.index("specials")
    for x, f in ((a, fa), (b, fb)):
        sp = _specials(f)
        if sp:
            hit = rows[:, None] & (rng.random((n, k)) < 0.08)
            x[hit] = rng.choice(np.array(sp, dtype=np.uint64), int(hit.sum()))
    sp = _specials(fc)
    if sp:
        hit = rows & (rng.random(n) < 0.3)
        c[hit] = rng.choice(np.array(sp, dtype=np.uint64), int(hit.sum()))
    rows = kind == KINDS.index("bits")
    a[rows] = rng.integers(0, 1 << fa.bits, (int(rows.sum()), k), dtype=np.uint64)
    b[rows] = rng.integers(0, 1 << fb.bits, (int(rows.sum()), k), dtype=np.uint64)
    c[rows] = rng.integers(0, 1 << fc.bits, int(rows.sum()), dtype=np.uint64)
    return Rows(a, b, c, sa, sb)


def _scale_exp(p: ModelParams, sa, sb) -> np.ndarray | int:
    """Per row, the exponent the first block's scales add (0 unscaled)."""
    if sa is None:
        return 0
    f = p.scaling()[0]
    ea = ((sa[:, 0] >> np.uint64(f.frac_bits)) & np.uint64((1 << f.exp_bits) - 1)).astype(np.int64)
    eb = ((sb[:, 0] >> np.uint64(f.frac_bits)) & np.uint64((1 << f.exp_bits) - 1)).astype(np.int64)
    return ea + eb - 2 * f.bias


def _near(p, rng, a, b, c, kind, sa, sb) -> None:
    rows = (kind == KINDS.index("near")) | (kind == KINDS.index("specials")) | \
        (kind == KINDS.index("cancel"))
    n, k = int(rows.sum()), a.shape[1]
    if not n:
        return
    fa, fb, fc = p.fin, p.fb, p.fc
    ea = rng.integers(fa.emin, fa.emax + 1, n)
    eb = rng.integers(fb.emin, fb.emax + 1, n)
    a[rows] = _around(fa, rng, (n, k), ea)
    b[rows] = _around(fb, rng, (n, k), eb)
    ec = ea + eb + np.asarray(_scale_exp(p, sa, sb))[rows] if sa is not None else ea + eb
    ec = np.clip(ec + rng.integers(-3, 4, n), fc.emin - fc.frac_bits, fc.emax)
    c[rows] = _around(fc, rng, (n, 1), ec)[:, 0]


def _cancel(p, rng, a, b, c, rows) -> None:
    """Pairs a_{2i+1} b_{2i+1} = -a_{2i} b_{2i}; the last product small;
    c is minus the first product where c's format holds it, else zero."""
    n, k = int(rows.sum()), a.shape[1]
    if not n or k < 2:
        return
    fb = p.fb
    ra, rb = a[rows], b[rows]
    ra[:, 1:k - k % 2:2] = ra[:, 0:k - k % 2:2]
    rb[:, 1:k - k % 2:2] = rb[:, 0:k - k % 2:2] ^ np.uint64(1 << (fb.bits - 1))
    small = rng.random(n) < 0.5
    ra[small, -1] = _finite(p.fin, rng, (int(small.sum()),), 0, 2)
    a[rows], b[rows] = ra, rb
    rc = c[rows]
    rc[rng.random(n) < 0.3] = 0
    c[rows] = rc


def _tiny_zeros_large(p, rng, a, b, c, kind) -> None:
    fa, fb, fc = p.fin, p.fb, p.fc
    for name, lo, hi in (("tiny", 0, 1), ("large", None, None)):
        rows = kind == KINDS.index(name)
        n, k = int(rows.sum()), a.shape[1]
        if lo is None:
            a[rows] = _finite(fa, rng, (n, k), fa.max_exp_field - 2)
            b[rows] = _finite(fb, rng, (n, k), fb.max_exp_field - 2)
            c[rows] = _finite(fc, rng, (n,), fc.max_exp_field - 1)
        else:
            a[rows] = _finite(fa, rng, (n, k), lo, hi)
            b[rows] = _finite(fb, rng, (n, k), lo, hi)
            c[rows] = np.where(rng.random(n) < 0.5, _finite(fc, rng, (n,), 0, 0), np.uint64(0))
    rows = kind == KINDS.index("zeros")
    n, k = int(rows.sum()), a.shape[1]
    for x, f, shape in ((a, fa, (n, k)), (b, fb, (n, k)), (c, fc, (n,))):
        sign = np.uint64(1 << (f.bits - 1)) if f.has_negative_zero else np.uint64(0)
        zero = np.where(rng.random(shape) < 0.5, sign, np.uint64(0))
        x[rows] = np.where(rng.random(shape) < 0.8, zero, x[rows])
