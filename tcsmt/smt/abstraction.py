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
significands makes, so it is never taken for a witness: the searches race
this formula for its proofs only (tcsmt.search.separation.NO_WITNESS_TAGS).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tcsmt.datapath import bv
from tcsmt.smt.smtlib import Formula, build_formula

TAG = "free-products"


@dataclass
class FreeProducts:
    """The mul_hook: one free word per distinct multiplier, with bounds."""
    label = "free products"
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
    """The facts above. The size bounds hold for factors of h bits each; a
    multiplier whose factors differ in width (mixed a and b formats, a
    scale's significand times a group sum) only gets them where both
    factors fit in h bits, so they are never claimed where they are false."""
    w = I.width(p)
    zp = bv.is_zero(I, p)
    zxy = I.or_(bv.is_zero(I, x), bv.is_zero(I, y))
    out = [I.or_(I.not_(zp), zxy), I.or_(zp, I.not_(zxy))]
    fit = I.and_(I.ult(x, I.const(1 << h, w)), I.ult(y, I.const(1 << h, w)))
    for u, v in ((x, y), (y, x)):
        times_max = I.sub(I.shl(u, I.const(h, w)), u)             # u * (2^h - 1)
        out.append(I.or_(I.not_(fit), I.ule(p, times_max)))
        hidden = I.not_(I.ult(v, I.const(1 << (h - 1), w)))       # v >= 2^(h-1)
        out.append(I.or_(I.not_(fit), I.not_(hidden), I.ule(I.shl(u, I.const(h - 1, w)), p)))
    low = I.bvand(I.extract(x, 0, 0), I.extract(y, 0, 0))
    out.append(I.eq(I.extract(p, 0, 0), low))
    return out


def free_products(build: Callable, description: str = "",
                  hook: FreeProducts | None = None) -> tuple[Formula, FreeProducts]:
    """A formula like ``build_formula(build)`` but with free products
    (``hook``'s kind: FreeProducts by default, or SteppedProducts)."""
    hook = hook if hook is not None else FreeProducts()

    def wrapped(I):
        out = list(build(I))
        return out + hook.constraints

    f = build_formula(wrapped, description=f"{description} [{hook.label}]", mul_hook=hook)
    return f, hook


@dataclass
class SteppedProducts(FreeProducts):
    """Free products that also keep what a step of one factor does: for
    two products that share a factor v (the same term) with the other
    factors u and u2,

      * u <= u2 gives p <= q (unsigned, where u, u2 and v fit in h bits,
        so that neither product wraps; for a multiplier whose factors are
        zero extensions of two widths adding up to at most its own, as a
        scale's significand times a group sum, always);
      * u2 = u + 1 gives q = p + v;
      * u = 2^h - 1 and u2 = 2^(h-1) (a significand's step into the next
        binade, its exponent one more) gives 2q = p + v.

    The last two hold modulo 2^(2h), as the multiplier computes. All three
    hold for every real product, so an UNSAT answer is still a
    proof for the real model; they let a formula that moves one input by
    one step (tcsmt.search.monotone_split) compare the two products without
    a multiplier."""

    label = "stepped free products"

    def __call__(self, I, x, y):
        if (x.id, y.id) in self.made:
            return self.made[(x.id, y.id)]
        mine = super().__call__(I, x, y)
        w = I.width(x)
        h = w // 2
        one = I.const(1, w)
        top, low = I.const((1 << h) - 1, w), I.const(1 << (h - 1), w)
        for (x2, y2) in list(self.factors.values()):
            other = self.made[(x2.id, y2.id)]
            if other is mine or I.width(x2) != w:
                continue
            for u, v, u2, v2 in ((x, y, x2, y2), (y, x, y2, x2)):
                if v.id != v2.id:
                    continue
                fit = _fit(I, u, u2, v, w, h)
                for (s, ps), (t, pt) in (((u, mine), (u2, other)), ((u2, other), (u, mine))):
                    self.constraints += [
                        I.or_(I.not_(fit), I.not_(I.ule(s, t)), I.ule(ps, pt)),
                        I.or_(I.not_(I.eq(t, I.add(s, one))), I.eq(pt, I.add(ps, v))),
                        I.or_(I.not_(I.and_(I.eq(s, top), I.eq(t, low))),
                              I.eq(I.shl(pt, one), I.add(ps, v)))]
        return mine



def _bits(x) -> int:
    """The width x's node is known to fit in: its operand's, where it is a
    zero extension (a factor widened for its multiplier)."""
    return x.args[0].width if getattr(x, "op", None) == "zext" else x.width


def _fit(I, u, u2, v, w: int, h: int):
    """Where the products u v and u2 v cannot wrap: u, u2 and v of h bits
    each (the significands of a product), or, for factors of two widths (a
    scale's significand times a group sum), always, when the widths their
    zero extensions show add up to at most w."""
    wu, wv = max(_bits(u), _bits(u2)), _bits(v)
    if (wu > h or wv > h) and wu + wv <= w:
        return I.bool_const(True)
    return I.and_(*[I.ult(f, I.const(1 << h, w)) for f in (u, u2, v)])
