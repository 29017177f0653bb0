"""Monotonicity proved one step at a time.

The property (tcsmt.search.monotonic) asks for x <= y with f(x) > f(y),
where <= on an encoding is the order of its key: -magnitude for a sign bit
set, +magnitude otherwise (so -0 == +0, and the key orders every encoding,
NaN included: ``float_le`` is exactly key(x) <= key(y)). Both x and y lie in
the domain: a_i, b_i non-negative (sign bit clear) and finite, c finite; x
and y share their scales.

Reduction to one step. If x <= y, a chain x = z0, z1, ..., zn = y exists in
which each z_{j+1} is z_j with one input moved one step, where a step is
  - a_i or b_i (sign bit clear) raised to the next encoding, e -> e + 1;
  - c raised to its next value: +e -> +e + 1, -m -> -(m - 1) for m > 0
    (so -min_subnormal -> -0), and -0 -> +0;
  - c = +0 moved to -0 (the two zeros are equal in the order, and a chain
    from +0 to -0 needs this step).
Every z_j is in the domain: the finite non-negative encodings of a format
are one run 0..max_finite (infinity and NaN encodings lie above it), and
the finite values of c between two finite values are finite; the scales do
not move. If f(z_j) <= f(z_{j+1}) for every step, then f(x) <= f(y), since
<= is a total preorder (the order of the key), so transitive. Hence: no
counterexample to a step (one formula per input that moves, and one for each
of c's two kinds of step) means no counterexample at all. Each step formula
constrains z and its step to the domain (a step out of it, such as past the
largest finite value, is not a step) and asks f(step(z)) < f(z).
"""

from __future__ import annotations

from tcsmt import datapath
from tcsmt.datapath import bv
from tcsmt.errors import BadOption
from tcsmt.interp.ints import INT, IntWord
from tcsmt.model.formats import Format
from tcsmt.model.params import ModelParams
from tcsmt.search import separation as sep
from tcsmt.search.domain import Domain
from tcsmt.search.monotonic import check_witness, constraints
from tcsmt.search.vectors import Vector
from tcsmt.smt.smtlib import build_formula


def moves(k: int) -> list[str]:
    """The steps, one formula each: a0..a{k-1}, b0..b{k-1}, c up, c's zero.
    ("c-negzero", c = -0 raised to +0, is the one case of "c-up" where only
    the sign of a zero changes: a smaller formula, not a step of its own.)"""
    return [f"a{i}" for i in range(k)] + [f"b{i}" for i in range(k)] + ["c-up", "c-zero"]


def step_formula(p: ModelParams, k: int, move: str):
    """z in the domain, y = z with ``move`` taken, y in the domain, f(y) < f(z)."""
    if p.fc.specials == "fnuz":     # no -0: -min_subnormal's next value is +0, not 0x80..0
        raise BadOption(f"{p.name}: one-step monotonicity needs a c format with -0")
    def build(I):
        a, b, c = sep.declare_inputs(I, p, k)
        ya, yb, yc, out = step(I, p, a, b, c, move)
        sa, sb = sep.declare_scales(I, p, k)
        out += sep.scale_constraints(I, p, Domain(), sa, sb)
        dx = datapath.dot(I, p, a, b, c, sa=sa, sb=sb)
        dy = datapath.dot(I, p, ya, yb, yc, sa=sa, sb=sb)
        return out + constraints(I, p, k, (a, b, c), (ya, yb, yc), dx, dy)
    return build_formula(build, description=f"tcsmt monotonicity {p.name} k={k} (step {move})")


def step(I, p: ModelParams, a: list, b: list, c, move: str):
    """The inputs after ``move`` (a, b, c, and the condition for taking it),
    in any interpretation: the formula's and the witness's are one definition."""
    ya, yb, yc, cond = list(a), list(b), c, []
    if move[0] in "ab":
        i = int(move[1:])
        xs, ys, fmt = (a, ya, p.fin) if move[0] == "a" else (b, yb, p.fb)
        ys[i] = I.add(xs[i], I.const(1, fmt.bits))
    else:
        yc, cond = value_step(I, p.fc, c, move)
    return ya, yb, yc, cond


def witness(p: ModelParams, k: int, move: str, values: dict[str, int]) -> list[Vector]:
    """x and y of a step formula's satisfying assignment, replayed on the
    concrete model (tcsmt.search.monotonic.check_witness raises WitnessError
    when they are not a counterexample)."""
    x = sep.decode(values, k, p)
    w = lambda v, f: IntWord(v, f.bits)  # noqa: E731
    ya, yb, yc, _ = step(INT, p, [w(v, p.fin) for v in x.a], [w(v, p.fb) for v in x.b],
                         w(x.c, p.fc), move)
    y = Vector(tuple(v.v for v in ya), tuple(v.v for v in yb), yc.v, x.sa, x.sb)
    check_witness(p, k, x, y)
    return [x, y]


def value_step(I, fmt: Format, c, move: str):
    """An encoding of ``fmt`` after a step of c's kind ("c-up", "c-zero",
    "c-negzero") and the condition for taking it. Past the largest finite
    value "c-up" reaches +infinity, and from -infinity the most negative
    finite value: over the encodings that are not NaN it walks every one in
    the order of the key, as over the finite ones."""
    w = fmt.bits
    sign = bv.msb(I, c)
    mag_zero = bv.is_zero(I, I.extract(c, w - 2, 0))
    if move == "c-zero":
        return I.const(1 << (w - 1), w), [I.eq(c, I.const(0, w))]
    if move == "c-negzero":
        return I.const(0, w), [I.eq(c, I.const(1 << (w - 1), w))]
    one = I.const(1, w)
    up = I.ite(sign, I.ite(mag_zero, I.const(0, w), I.sub(c, one)), I.add(c, one))
    return up, []

