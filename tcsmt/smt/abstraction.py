"""Free products: an over-approximation of the multipliers for fast proofs.

Bit-blasted multipliers are most of what makes the hard queries slow. With
``free_products(build)`` every significand product of the datapath becomes
a free word ``prod{n}`` bound only by facts every real product obeys (for
significands x, y of h bits each, stored zero-extended in 2h bits):

  * p = 0 exactly when x = 0 or y = 0;
  * p <= x * (2^h - 1) and p <= y * (2^h - 1) (shifts and subtractions);
  * p >= x * 2^(h-1) when y has its hidden bit, and the same with x, y swapped;
  * the lowest bit of p is the AND of the lowest bits of x and y.

Every real input satisfies these, so an UNSAT answer over the free products
is a proof for the real model too. A SAT answer may use a product no pair of
significands makes: ``concretize`` looks for significands with the same
exponents whose product is the solver's value, and the caller replays the
result on the concrete model (or asks again with that value excluded).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tcsmt.datapath import bv
from tcsmt.model.formats import Format
from tcsmt.search.vectors import Vector
from tcsmt.smt.smtlib import Formula, build_formula
from tcsmt.smt.terms import SmtTerm

TAG = "free-products"


@dataclass
class FreeProducts:
    """The mul_hook: one free word per distinct multiplier, with bounds."""
    made: dict = field(default_factory=dict)
    constraints: list = field(default_factory=list)
    factors: dict = field(default_factory=dict)      # prod name -> (x term, y term)

    def __call__(self, I, x, y):
        key = (x.id, y.id)
        if key in self.made:
            return self.made[key]
        w = I.width(x)
        h = w // 2
        name = f"prod{len(self.made)}"
        p = I.var(name, w)
        self.made[key] = p
        self.factors[name] = (x, y)
        self.constraints += bounds(I, p, x, y, h)
        return p


def bounds(I, p, x, y, h: int) -> list:
    w = I.width(p)
    zp = bv.is_zero(I, p)
    zxy = I.or_(bv.is_zero(I, x), bv.is_zero(I, y))
    out = [I.or_(I.not_(zp), zxy), I.or_(zp, I.not_(zxy))]
    for u, v in ((x, y), (y, x)):
        times_max = I.sub(I.shl(u, I.const(h, w)), u)             # u * (2^h - 1)
        out.append(I.ule(p, times_max))
        hidden = I.not_(I.ult(v, I.const(1 << (h - 1), w)))       # v >= 2^(h-1)
        out.append(I.or_(I.not_(hidden), I.ule(I.shl(u, I.const(h - 1, w)), p)))
    low = I.bvand(I.extract(x, 0, 0), I.extract(y, 0, 0))
    out.append(I.eq(I.extract(p, 0, 0), low))
    return out


def free_products(build: Callable, description: str = "") -> tuple[Formula, FreeProducts]:
    """A formula like ``build_formula(build)`` but with free products."""
    hook = FreeProducts()

    def wrapped(I):
        out = list(build(I))
        return out + hook.constraints

    f = build_formula(wrapped, description=description + " [free products]", mul_hook=hook)
    return f, hook


def input_names(t: SmtTerm) -> set[str]:
    """The names of the free inputs a term depends on."""
    seen, out, stack = set(), set(), [t]
    while stack:
        n = stack.pop()
        if n.id in seen:
            continue
        seen.add(n.id)
        if n.op == "input":
            out.add(n.static[0])
        stack.extend(n.args)
    return out


def concretize(values: dict[str, int], hook: FreeProducts, fin: Format, k: int,
               prefix: tuple[str, str] = ("a", "b")) -> Vector | None:
    """Inputs whose real products are the solver's free products: for every
    product, significands of the same kind (normal or subnormal) as the
    solver's inputs whose product is the value, the exponents kept. None
    when some value has no such factors."""
    a = [values.get(f"{prefix[0]}{i}", 0) for i in range(k)]
    b = [values.get(f"{prefix[1]}{i}", 0) for i in range(k)]
    for name, (x, y) in hook.factors.items():
        deps = input_names(x) | input_names(y)
        idx = _index(deps, prefix, k)
        if idx is None:
            continue
        p = values.get(name, 0)
        pair = _factor(p, a[idx], b[idx], fin)
        if pair is None:
            return None
        a[idx], b[idx] = pair
    return Vector(tuple(a), tuple(b), values.get("c", 0))


def _index(deps: set[str], prefix, k: int) -> int | None:
    for i in range(k):
        if f"{prefix[0]}{i}" in deps and f"{prefix[1]}{i}" in deps:
            return i
    return None


def _factor(p: int, abits: int, bbits: int, fin: Format) -> tuple[int, int] | None:
    """New encodings of a and b with the same signs and exponent fields and
    significands multiplying to p."""
    fb = fin.frac_bits
    mask = (1 << fb) - 1

    def parts(bits):
        sign, exp = bits >> (fin.bits - 1), (bits >> fb) & ((1 << fin.exp_bits) - 1)
        lo, hi = ((1 << fb), (1 << (fb + 1))) if exp else (1, 1 << fb)
        return sign, exp, lo, hi

    sa, ea, alo, ahi = parts(abits)
    sb, eb, blo, bhi = parts(bbits)
    if p == 0:
        return abits, bbits
    for d in range(alo, ahi):
        if p % d == 0 and blo <= p // d < bhi:
            na = (sa << (fin.bits - 1)) | (ea << fb) | (d & mask)
            nb = (sb << (fin.bits - 1)) | (eb << fb) | ((p // d) & mask)
            if fin.classify(na) != "nan" and fin.classify(nb) != "nan":
                return na, nb
    return None
