"""Candidate input vectors for telling hypotheses apart by running them.

``tcsmt plan`` runs every hypothesis of a space on these vectors and keeps
those that split the hypotheses best. They are of the kinds the papers'
hand-made tests use, plus random ones, each kind aimed at a parameter:

  readable     few non-zero products of simple values (tcsmt.search.pool)
  random       every product non-zero, as in the recorded data
  cancelling   c cancels the product sum up to a few units: the alignment
               bits, truncation versus IEEE rounding, the final rounding
  carries      many large products of one sign: carry bits, block sizes
  tiny         subnormal or near-subnormal c and inputs: subnormal handling
  chained      equal products spread over every position: block boundaries
  edges        a product in [2, 4) and one bit 20-30 places below it: the
               alignment point (raw or normalised products, alignment bits)
  signed zeros zero inputs and c of either sign: the sign of a zero sum,
               -0 inputs read as +0

Every vector lies in the given input domain (checked with
``Domain.contains``); the result is deterministic for a seed.
"""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np

from tcsmt.interp.memo import RowsInterp
from tcsmt.model.formats import Format
from tcsmt.search.domain import Domain
from tcsmt.search.pool import candidates as readable_candidates
from tcsmt.search.pool import nice_values


def _exp_bounds(fmt: Format, domain: Domain) -> tuple[int, int]:
    lo, hi = fmt.emin, fmt.emax
    if domain.exp_range:
        lo, hi = max(lo, domain.exp_range[0]), min(hi, domain.exp_range[1])
    return lo, hi


def _draw(rng: random.Random, fmt: Format, lo: int, hi: int, sign: int | None = None) -> int:
    """A random finite normal number with an exponent in lo..hi."""
    e = rng.randint(max(lo, fmt.emin), min(hi, fmt.emax))
    frac = rng.getrandbits(fmt.frac_bits)
    if fmt.specials == "fn" and e == fmt.emax:
        frac = min(frac, fmt.max_frac_at_emax - 1 if fmt.max_frac_at_emax else 0)
    s = rng.getrandbits(1) if sign is None else sign
    return fmt.pack(s, e + fmt.bias, frac)


def _subnormal(rng: random.Random, fmt: Format) -> int:
    return fmt.pack(rng.getrandbits(1), 0, rng.randint(1, (1 << fmt.frac_bits) - 1))


def _exact_sum(fin: Format, a: list[int], b: list[int]) -> Fraction:
    return sum((fin.finite_value(x) * fin.finite_value(y) for x, y in zip(a, b)), Fraction(0))


def _random_rows(rng, fin, fc, k, domain, n):
    lo, hi = _exp_bounds(fin, domain)
    lo, hi = max(lo, -6), min(hi, 4)
    for _ in range(n):
        a = [_draw(rng, fin, lo, hi) for _ in range(k)]
        b = [_draw(rng, fin, lo, hi) for _ in range(k)]
        yield a, b, _draw(rng, fc, -6, 6)


def _sparse(rng, fin, k, lo, hi, m):
    a, b = [0] * k, [0] * k
    for pos in rng.sample(range(k), min(m, k)):
        a[pos] = _draw(rng, fin, lo, hi)
        b[pos] = _draw(rng, fin, lo, hi)
    return a, b


def _cancelling_rows(rng, fin, fc, k, domain, n):
    """c is minus the exact product sum rounded to c's format, moved by a
    few units in the last place."""
    lo, hi = _exp_bounds(fin, domain)
    lo, hi = max(lo, -8), min(hi, 8)
    for _ in range(n):
        m = rng.choice([1, 2, 2, 3, 4, k])
        a, b = _sparse(rng, fin, k, lo, hi, min(m, k))
        s = _exact_sum(fin, a, b)
        c = fc.round_value(-s, rng.choice(["rz", "rne", "ru", "rd"]))
        step = rng.choice([0, 0, 1, -1, 2])
        if step and fc.classify(c) in ("normal", "subnormal"):
            c = max(0, c + step) if fc.classify(max(0, c + step)) in ("normal", "subnormal", "zero") else c
        yield a, b, c


def _carry_rows(rng, fin, fc, k, domain, n):
    """Products of one sign near the top of their binade, c of that size too."""
    lo, hi = _exp_bounds(fin, domain)
    e = max(lo, min(hi, 0))
    for _ in range(n):
        m = rng.randint(min(k, max(2, k // 2)), k)        # every product when k < 2
        sign = rng.getrandbits(1)
        a, b = [0] * k, [0] * k
        for pos in rng.sample(range(k), m):
            a[pos] = fin.pack(sign, e + fin.bias,
                              rng.randint(1 << (fin.frac_bits - 1), (1 << fin.frac_bits) - 1)
                              if fin.frac_bits > 1 else 1)
            b[pos] = fin.pack(0, e + fin.bias, rng.randint(0, (1 << fin.frac_bits) - 1))
        c = fc.round_value(Fraction(rng.choice([1, 3, 7, 15])) / 4 * (1 - 2 * sign), "rz")
        yield a, b, c


def _tiny_rows(rng, fin, fc, k, domain, n):
    """Subnormal c with zero, tiny or cancelling products; subnormal inputs."""
    lo, hi = _exp_bounds(fin, domain)
    for i in range(n):
        kind = i % 4
        if kind == 0:
            a, b = [0] * k, [0] * k
            c = _subnormal(rng, fc)
        elif kind == 1:
            a, b = _sparse(rng, fin, k, lo, min(hi, lo + 4), rng.choice([1, 2]))
            c = _subnormal(rng, fc) if rng.random() < 0.5 else _draw(rng, fc, fc.emin, fc.emin + 3)
        elif kind == 2:
            a, b = [0] * k, [0] * k
            pos = rng.randrange(k)
            a[pos] = _subnormal(rng, fin)
            b[pos] = _draw(rng, fin, lo, hi)
            c = rng.choice([0, _subnormal(rng, fc), _draw(rng, fc, -4, 4)])
        else:
            a, b = _sparse(rng, fin, k, lo, min(hi, lo + 6), 2)
            j = next(x for x in range(k) if a[x])
            s = fin.value(a[j]) * fin.value(b[j])
            c = fc.round_value(-s, "rz")          # leaves the other tiny product
        yield a, b, c


def _chained_rows(rng, fin, fc, k, domain, n):
    """One value repeated over positions chosen to straddle block edges."""
    nice = [x for x in nice_values(fin, span=4)]
    for _ in range(n):
        v, w = rng.choice(nice), rng.choice(nice)
        m = rng.choice([2, 3, 4, 5, 8, 9, 16, 17, k])
        pos = sorted(rng.sample(range(k), min(m, k)))
        a, b = [0] * k, [0] * k
        for p in pos:
            a[p], b[p] = v, w
        if rng.random() < 0.5:
            a[pos[-1]] ^= 1 << (fin.bits - 1)
        c = fc.round_value(Fraction(rng.choice([0, 1, -1, 3])) / rng.choice([1, 2, 1 << 10, 1 << 20]), "rz")
        yield a, b, c


def _edge_rows(rng, fin, fc, k, domain, n):
    """A product with its significand in [2, 4) (large fractions), and c or a
    second product with one bit 20 to 30 places below it: where the
    alignment point sits (raw or normalised products, alignment bits)
    decides whether that bit is kept."""
    lo, hi = _exp_bounds(fin, domain)
    top = (1 << fin.frac_bits) - 1
    for _ in range(n):
        a, b = [0] * k, [0] * k
        pos = rng.sample(range(k), 2 if k > 1 else 1)
        e = rng.randint(max(lo, -3), min(hi, 3))
        big = lambda e=e: fin.pack(rng.getrandbits(1), e + fin.bias,  # noqa: E731
                               rng.randint(top - (top >> 2), top))
        a[pos[0]], b[pos[0]] = big(), big()
        p = fin.value(a[pos[0]]) * fin.value(b[pos[0]])
        sign = -1 if (p > 0) == (rng.random() < 0.7) else 1
        tiny = Fraction(2) ** (2 * e + 1 - rng.randint(20, 30)) * sign
        c = fc.round_value(tiny, "rz")
        if len(pos) > 1 and rng.random() < 0.3:
            a[pos[1]] = fin.round_value(tiny / Fraction(2) ** (2 * e), "rz")
            b[pos[1]] = fin.round_value(Fraction(2) ** (2 * e), "rz")
            c = 0
        yield a, b, c


def _signed_zero_rows(rng, fin, fc, k, domain, n):
    """Zero inputs and c of either sign, every other row with one non-zero
    product and c its negation rounded toward zero: the sign of a zero sum
    (zero_sign), and units that read a -0 input as +0 (flushing at every
    step). Formats without -0 (fnuz) get +0 only."""
    lo, hi = _exp_bounds(fin, domain)
    zeros_in = [z for z in (0, 1 << (fin.bits - 1)) if fin.classify(z) == "zero"]
    zeros_c = [z for z in (0, 1 << (fc.bits - 1)) if fc.classify(z) == "zero"]
    for i in range(n):
        a = [rng.choice(zeros_in) for _ in range(k)]
        if i % 4 < 2:          # every product a zero of one sign
            sign = rng.choice(zeros_in)
            b = [x ^ sign for x in a]
        else:
            b = [rng.choice(zeros_in) for _ in range(k)]
        c = rng.choice(zeros_c)
        if i % 2:
            pos = rng.randrange(k)
            a[pos], b[pos] = _draw(rng, fin, lo, hi), _draw(rng, fin, lo, hi)
            c = fc.round_value(-fin.value(a[pos]) * fin.value(b[pos]), "rz")
        yield a, b, c


KINDS = (("random", _random_rows, 0.2), ("cancelling", _cancelling_rows, 0.25),
         ("carries", _carry_rows, 0.1), ("tiny", _tiny_rows, 0.1), ("chained", _chained_rows, 0.1),
         ("edges", _edge_rows, 0.1), ("signed zeros", _signed_zero_rows, 0.02))


def candidate_vectors(fin: Format, fc: Format, k: int, domain: Domain, size: int = 4000,
                      seed: int = 0, fb: Format | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """About ``size`` distinct vectors in the domain: a, b [N, k], c [N] bits.
    With b in another format ``fb``, the rows are made in a's format and
    each b is the nearest fb value toward zero (the largest finite one
    beyond fb's range), so the rows keep their shapes."""
    rng = random.Random(seed)
    rows: dict[tuple, None] = {}
    ra, rb, rc = readable_candidates(fin, fc, k, domain, int(size * 0.15), seed)
    for i in range(ra.shape[0]):
        rows[(tuple(int(x) for x in ra[i]), tuple(int(x) for x in rb[i]), int(rc[i]))] = None
    for _name, make, share in KINDS:
        for a, b, c in make(rng, fin, fc, k, domain, int(size * share)):
            rows[(tuple(a), tuple(b), int(c))] = None
    if fb is not None and fb != fin:
        to_b = _converter(fin, fb)
        rows = {(a, tuple(to_b(x) for x in b), c): None for a, b, c in rows}
    I = RowsInterp()         # the rows share their inputs' unpacking (narrow formats)
    keep = [r for r in rows if _finite(fin, fc, r, fb)
            and domain.contains(fin, fc, list(r[0]), list(r[1]), r[2], fb, I=I)]
    a = np.array([r[0] for r in keep], dtype=np.uint64).reshape(len(keep), k)
    b = np.array([r[1] for r in keep], dtype=np.uint64).reshape(len(keep), k)
    c = np.array([r[2] for r in keep], dtype=np.uint64)
    return a, b, c


def _finite(fin: Format, fc: Format, row, fb: Format | None = None) -> bool:
    ok = ("zero", "subnormal", "normal")
    return (all(fin.classify(x) in ok for x in row[0]) and all((fb or fin).classify(x) in ok for x in row[1])
            and fc.classify(row[2]) in ok)


def _converter(fin: Format, fb: Format):
    """fin bits -> the fb bits of the nearest value toward zero, finite
    values only (the largest finite fb value past fb's range; NaN and
    infinity left to _finite to drop)."""
    memo: dict[int, int] = {}

    def to_b(x: int) -> int:
        if x not in memo:
            if fin.classify(x) not in ("zero", "subnormal", "normal"):
                memo[x] = fb.nan_bits() if fb.has_nan else 0
            else:
                v = Fraction(fin.value(x))                 # finite: a Fraction
                sign = 1 if (v < 0 or (v == 0 and fin.fields(x)[0])) else 0
                mag = min(abs(v), fb.max_finite())
                sign = 0 if mag == 0 and fb.specials == "fnuz" else sign   # fnuz's -0 is its NaN
                memo[x] = fb.round_value(mag, "rz") | (sign << (fb.bits - 1) if fb.signed else 0)
        return memo[x]
    return to_b


SCALE_KINDS = ("one", "near", "any", "far", "far")
"""How the scales of a candidate row are drawn, in turn: every scale 1 (the
products as they are), scales in 2^-2..2^2, any finite scale, or each
block's scale from the smallest or the largest quarter of the non-zero
scales (blocks 20 to 35 exponents apart with ue4m3: where the window set
by the largest term and a window on raw exponents part ways)."""


def candidate_scales(fs: Format | None, rows: int, n: int, seed: int = 0):
    """[rows, n] finite scale bit patterns of ``fs`` (None without a scale
    format), row r drawn as SCALE_KINDS[r mod 5] says; deterministic for a
    seed."""
    if fs is None:
        return None
    rng = random.Random(seed + 11)
    finite = [x for x in range(1 << fs.bits) if fs.classify(x) not in ("nan", "inf")
              and fs.finite_value(x) >= 0]
    one = min(finite, key=lambda x: abs(fs.finite_value(x) - 1))
    near = [x for x in finite if Fraction(1, 4) <= fs.finite_value(x) <= 4]
    nonzero = [x for x in finite if fs.value(x) > 0]
    nonzero.sort(key=fs.value)
    far = nonzero[:len(nonzero) // 4] + nonzero[-(len(nonzero) // 4):]
    pools = {"one": [one], "near": near, "any": finite, "far": far}
    out = np.zeros((rows, n), dtype=np.uint64)
    for r in range(rows):
        pool = pools[SCALE_KINDS[r % len(SCALE_KINDS)]]
        for j in range(n):
            out[r, j] = rng.choice(pool)
    return out


def _power_codes(fs: Format) -> dict[int, int]:
    """exponent -> the code of 2^exponent in a scale format (exact powers only)."""
    out: dict[int, int] = {}
    for x in range(1 << fs.bits):
        v = fs.finite_value(x) if fs.classify(x) not in ("nan", "inf") else Fraction(0)
        if v > 0 and (v.numerator == 1 or v.denominator == 1) and v.numerator & (v.numerator - 1) == 0 \
                and v.denominator & (v.denominator - 1) == 0:
            out.setdefault(_exponent(v), x)
    return out


def window_rows(fin: Format, fb: Format, fc: Format, fs: Format, block: int, k: int, n: int,
                seed: int = 0):
    """Block-scaled rows aimed at the window below the largest term: one
    large product in the first scale block (the largest power-of-two
    scales), and in a later block a few small products of random signs
    scaled to lie 28 to 42 exponents below it, one to four per group of 4,
    with c zero, a small integer, or near the large product (so it may set
    the window, or cancel it). a, b [n, k], c [n], sa, sb [n, k / block]."""
    rng = random.Random(seed + 23)
    pw = _power_codes(fs)
    lo, hi = min(pw), max(pw)
    ns = k // block
    normal_a = [x for x in range(1 << fin.bits) if fin.classify(x) == "normal"]
    normal_b = [x for x in range(1 << fb.bits) if fb.classify(x) == "normal"]
    a = np.zeros((n, k), dtype=np.uint64)
    b = np.zeros((n, k), dtype=np.uint64)
    c = np.zeros(n, dtype=np.uint64)
    sa = np.full((n, ns), pw[0] if 0 in pw else pw[lo], dtype=np.uint64)
    sb = sa.copy()
    for i in range(n):
        sa[i, 0], sb[i, 0] = pw[hi], pw[hi - rng.randint(0, 2)]
        a[i, 0], b[i, 0] = rng.choice(normal_a), rng.choice(normal_b)
        top = _exponent(fin.finite_value(int(a[i, 0])) * fb.finite_value(int(b[i, 0]))) + hi + hi
        j = rng.randrange(1, ns) if ns > 1 else 0
        gap = rng.randint(28, 42)
        x, y = rng.choice(normal_a[:4] or normal_a), rng.choice(normal_b[:4] or normal_b)
        need = top - gap - _exponent(fin.finite_value(x) * fb.finite_value(y))
        s1 = max(lo, min(hi, need // 2))
        sa[i, j], sb[i, j] = pw[s1], pw[max(lo, min(hi, need - s1))]
        for g in rng.sample(range(block // 4 or 1), rng.randint(1, max(1, block // 4))):
            for _ in range(rng.randint(1, 4)):
                m = j * block + 4 * g + rng.randrange(4)
                a[i, m] = rng.choice([x, _negate(fin, x)])
                b[i, m] = y
        kind = i % 3
        if kind == 1:
            c[i] = _near(fc, fin.finite_value(int(a[i, 0])) * fb.finite_value(int(b[i, 0]))
                         * Fraction(2) ** (2 * hi - 1)
                         * rng.choice((-1, 1)), rng)
        elif kind == 2:
            c[i] = _near(fc, Fraction(rng.randint(-8, 8)), rng)
    return a, b, c, sa, sb


def _exponent(v: Fraction) -> int:
    v = abs(v)
    e = v.numerator.bit_length() - v.denominator.bit_length()
    return e if Fraction(2) ** e <= v else e - 1


def _negate(fmt: Format, x: int) -> int:
    return x ^ (1 << (fmt.bits - 1))


def _near(fc: Format, v: Fraction, rng) -> int:
    """c's bits for about v (rounded toward zero into fc), a few units off."""
    return fc.round_value(v * (1 + Fraction(rng.randint(-4, 4), 1 << 20)), "rz")
