"""A reference for AMD RDNA's WMMA accumulator as ROCm/rocm-systems issue
#12056 describes it, written from the issue's text and ROCm's comments on
it (rocjitsu's gfx11 dot2 and gfx12 dot helpers, read for their rules, not
their code), without looking at ``tcsmt.datapath``: integers and exponents
only, no words, no ``ite``.

One step adds two (RDNA3, "dot2") or four (RDNA4, "dot4") exact products
to an fp32 accumulator c:

* a factor's alignment exponent is its exponent field's (1 for a subnormal)
  minus the bias; a product is the integer product of the significands at
  the sum of those exponents (minus both fraction widths);
* the grid (value of one unit) is 2**g with
  g = max(largest operand-exponent sum of a non-zero product - 24,
          leading exponent of c - 26);
* RDNA3: every term's magnitude is truncated onto the grid; a term whose
  sign differs from c's adds -(m + 1) in c's sign, zero terms too; the
  result's sign is c's, flipped when the sum is negative;
* RDNA4: products are first summed in pairs on the pair's own grid
  (its largest operand-exponent sum - 24), every term floored (toward minus
  infinity); the pair sums are floored onto the step's grid, c too, where
  a negative c of which nothing is left counts as 0 while the grid lies
  above 2**-126; c's leading exponent counts as at least -126;
* the integer sum is rounded to nearest even at 24 significant bits;
  RDNA3 then gives +0 below 2**-126 (RDNA4 rounds on the subnormal grid
  instead); an exponent above 127 is an infinity; a zero sum is +0.

Subnormals: RDNA3 reads a subnormal c (and bf16 factors) as zero, keeps
fp16 subnormal factors; RDNA4 keeps all. Inputs here are finite; NaN and
infinity are left to the shipped models' own tests, but for an infinite c
(an earlier step's overflow), which a finite step leaves as it is.
"""

from __future__ import annotations

F16 = (5, 10, 15)
BF16 = (8, 7, 127)


def _factor(bits: int, fmt: tuple[int, int, int], flush: bool):
    eb, fb, bias = fmt
    e = (bits >> fb) & ((1 << eb) - 1)
    frac = bits & ((1 << fb) - 1)
    sig = ((1 << fb) | frac) if e else (0 if flush else frac)
    return bits >> (eb + fb) & 1, sig, max(e, 1) - bias, fb


def _c_term(c: int, flush: bool):
    e = (c >> 23) & 255
    sig = ((1 << 23) | (c & 0x7FFFFF)) if e else (0 if flush else c & 0x7FFFFF)
    return c >> 31 & 1, sig, max(e, 1) - 127 - 23


def _lead(sig: int, exp: int) -> int | None:
    return exp + sig.bit_length() - 1 if sig else None


def _pack(total: int, grid: int, sign_flip: int, flush: bool) -> int:
    if total == 0:
        return 0
    sign = (total < 0) ^ sign_flip
    mag = abs(total)
    top = mag.bit_length() - 1
    exponent = top + grid
    if not flush and exponent < -126:
        shift = -149 - grid                       # the subnormal grid
    else:
        shift = top - 23
    sig = _round_even(mag, shift)
    if not flush and exponent < -126:
        return (sign << 31) | sig if sig else 0   # rounds up to 2^-126 by itself
    if sig == 1 << 24:
        sig >>= 1
        exponent += 1
    if exponent < -126:
        return 0
    if exponent > 127:
        return (sign << 31) | 0x7F800000
    return (sign << 31) | ((exponent + 127) << 23) | (sig & 0x7FFFFF)


def _round_even(value: int, shift: int) -> int:
    if shift <= 0:
        return value << -shift
    q, r = divmod(value, 1 << shift)
    half = 1 << (shift - 1)
    return q + (r > half or (r == half and q & 1))


def _products(a: list[int], b: list[int], fmt, flush: bool):
    out = []
    for x, y in zip(a, b):
        sx, mx, ex, fb = _factor(x, fmt, flush)
        sy, my, ey, _ = _factor(y, fmt, flush)
        out.append((sx ^ sy, mx * my, ex + ey - 2 * fb, ex + ey))
    return out


def rdna3_step(a: list[int], b: list[int], c: int, bf16: bool) -> int:
    """One RDNA3 dot2 step (a, b: two fp16 or bf16 words each)."""
    prods = _products(a, b, BF16 if bf16 else F16, flush=bf16)
    cs, cm, ce = _c_term(c, flush=True)
    if not cm and not any(m for _, m, _, _ in prods):
        return 0
    grids = [s - 24 for _, m, _, s in prods if m]
    leads = [x for x in [_lead(cm, ce)] + [_lead(m, e) for _, m, e, _ in prods] if x is not None]
    g = max(grids + [max(leads) - 26])
    total = 0
    for sign, m, e, _ in [(cs, cm, ce, 0)] + prods:
        mag = m << (e - g) if e >= g else m >> (g - e)
        total += -(mag + 1) if sign != cs else mag
    return _pack(total, g, cs, flush=True)


def _floor_onto(sign: int, m: int, e: int, g: int, spare_tiny: bool = False) -> int:
    """sign * m * 2**e rounded toward minus infinity to a multiple of 2**g, in units."""
    if e >= g:
        mag, lost = m << (e - g), False
    else:
        mag, lost = m >> (g - e), bool(m & ((1 << (g - e)) - 1))
    if not sign:
        return mag
    if lost and not (spare_tiny and mag == 0):
        return -mag - 1
    return -mag


def rdna4_step(a: list[int], b: list[int], c: int, bf16: bool) -> int:
    """One RDNA4 dot4 step (a, b: four fp16 or bf16 words each)."""
    prods = _products(a, b, BF16 if bf16 else F16, flush=False)
    cs, cm, ce = _c_term(c, flush=False)
    grids = [s - 24 if m else None for _, m, _, s in prods]
    live = [x for x in grids if x is not None]
    c_lead = max(-126, _lead(cm, ce)) if cm else -126
    g = max(live + [c_lead - 26]) if live else c_lead - 26
    if not cm and not live:
        return 0
    total = _floor_onto(cs, cm, ce, g, spare_tiny=g > -126)
    for i in range(0, len(prods), 2):
        pair = [(p, gr) for p, gr in zip(prods[i:i + 2], grids[i:i + 2]) if gr is not None]
        if not pair:
            continue
        pg = max(gr for _, gr in pair)
        s = sum(_floor_onto(sign, m, e, pg) for (sign, m, e, _), _ in pair)
        total += _floor_onto(int(s < 0), abs(s), pg, g)
    return _pack(total, g, 0, flush=False)


def wmma(a: list[int], b: list[int], c: int, bf16: bool, rdna4: bool) -> int:
    """A whole WMMA dot product of 16 terms: steps of 2 (RDNA3) or 4 (RDNA4)
    in k order, each step's result the next step's c (an infinity, from an
    overflow, stays: the products are finite)."""
    n = 4 if rdna4 else 2
    step = rdna4_step if rdna4 else rdna3_step
    for i in range(0, len(a), n):
        if c & 0x7FFFFFFF != 0x7F800000:
            c = step(a[i:i + n], b[i:i + n], c, bf16)
    return c
