"""An exact reference for the sf-tensor/tcgen05 reading of B200's
block-scaled arithmetic, written with Fractions from the text of
tcgen05_model/MODEL.md (sections 2 to 5), without looking at
``tcsmt.datapath``: no words, no shifts, no alignment.

Every value is a Fraction; "truncating x to 2^q" is int(x / 2^q) (toward
zero); the integers are summed exactly and the sum is rounded toward zero
into float32 once, overflow giving infinity and every zero being +0. A raw
exponent is the unbiased exponent field (emin for a subnormal); a product's
is the sum of its inputs' and its scales'.

  window (kind::mxf8f6f4): q = max(raw product exponents, C's) - 25, every
    product and c truncated to 2^q.
  mxf4 / mxf4nvf4 ue8m0, NVFP4 ue4m3: R, S, C as in MODEL.md section 5; c
    dominant (C >= R): exact groups of ``c_group`` and c truncated to
    2^(C - 35); else q = max(R - 39, S - 35, C - 39), exact groups of
    ``group`` truncated to 2^q (mxf4: a group whose largest product is not
    above c to 2^max(q, C - 35)); mxf4's group floor: when the result is
    subnormal, groups with a lower scale pair whose truncated value is
    below 2^-174 are left out.
  No non-zero product: d is c's word as it is. NaN anywhere (an input, a
  scale of a block, c, infinity times zero, opposite infinities) gives
  0x7fffffff.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from tcsmt.model.formats import Format, get_format

NAN, INF = 0x7FFFFFFF, 0x7F800000
F32 = get_format("float32")


@dataclass(frozen=True)
class Reading:
    window: bool            # the scaled e2m1 window (else kind::mxf8f6f4's)
    group: int = 1
    c_group: int = 1
    c_group_window: bool = False
    floor: int | None = None


MXF8F6F4 = Reading(False)
MXF4 = Reading(True, 16, 16, True, -174)
NVFP4 = Reading(True, 4, 16)


def raw(fmt: Format, bits: int) -> int:
    _, e, _ = fmt.fields(bits)
    return (1 if e == 0 and fmt.subnormals else e) - fmt.bias


def trunc(x: Fraction, q: int) -> int:
    return int(x / Fraction(2) ** q)


def rz32(units: int, q: int) -> int:
    v = Fraction(units) * Fraction(2) ** q
    if abs(v) >= Fraction(2) ** 128:
        return INF | (0x80000000 if v < 0 else 0)
    bits = F32.round_value(v, "rz")
    return 0 if F32.value(bits) == 0 else bits


def specials(fa, fb, fs, a, b, sa, sb, c) -> int | None:
    """The NaN or infinity d, else None."""
    if any(fs.classify(x) == "nan" for x in sa + sb) or F32.classify(c) == "nan":
        return NAN
    infs = set()
    for x, y in zip(a, b):
        vx, vy = fa.value(x), fb.value(y)
        if fa.classify(x) == "nan" or fb.classify(y) == "nan":
            return NAN
        if isinstance(vx, float) or isinstance(vy, float):
            if vx == 0 or vy == 0:
                return NAN
            infs.add((vx > 0) == (vy > 0))
    if F32.classify(c) == "inf":
        infs.add(F32.value(c) > 0)
    if len(infs) == 2:
        return NAN
    if infs:
        return INF if infs.pop() else INF | 0x80000000
    return None


def dot(reading: Reading, fa: Format, fb: Format, fs: Format, block: int,
        a: list[int], b: list[int], c: int, sa: list[int], sb: list[int]) -> int:
    """d (float32 bits) of one instruction under the reading."""
    mask = (1 << fs.bits) - 1            # ue4m3: the sign bit of an e4m3 word is ignored
    sa, sb = [x & mask for x in sa], [x & mask for x in sb]
    sp = specials(fa, fb, fs, a, b, sa, sb, c)
    if sp is not None:
        return sp
    prods, raws, pairs = [], [], []
    for k, (x, y) in enumerate(zip(a, b)):
        s, t = sa[k // block], sb[k // block]
        prods.append(fa.value(x) * fb.value(y) * fs.value(s) * fs.value(t))
        raws.append(raw(fa, x) + raw(fb, y) + raw(fs, s) + raw(fs, t))
        pairs.append(raw(fs, s) + raw(fs, t))
    live = [k for k, v in enumerate(prods) if v != 0]
    if not live:
        return c
    vc = F32.value(c)
    C = raw(F32, c) if vc != 0 else None
    R = max(raws[k] for k in live)
    if not reading.window:
        q = max(R, R if C is None else C) - 25
        return rz32(trunc(vc, q) + sum(trunc(v, q) for v in prods), q)
    S = max(pairs[k] for k in live)
    if C is not None and C >= R:
        q, g = C - 35, reading.c_group
        return rz32(trunc(vc, q) + sum(trunc(sum(prods[i:i + g]), q)
                                       for i in range(0, len(prods), g)), q)
    q = max(R - 39, S - 35, -10**9 if C is None else C - 39)
    g = reading.group
    units, low = [], []
    for i in range(0, len(prods), g):
        members = [k for k in range(i, i + g) if k in live]
        qg = q
        if reading.c_group_window and members and C is not None and C >= max(raws[k] for k in members):
            qg = max(q, C - 35)
        u = trunc(sum(prods[i:i + g]), qg) * 2 ** (qg - q)
        units.append(u)
        low.append(bool(members) and max(pairs[k] for k in members) < S)
    d = rz32(trunc(vc, q) + sum(units), q)
    if reading.floor is not None and d & 0x7F800000 == 0 and d & 0x7FFFFF:
        limit = 2 ** (reading.floor - q) if q < reading.floor else 1
        d = rz32(trunc(vc, q) + sum(u for u, lo in zip(units, low) if not (lo and abs(u) < limit)), q)
    return d
