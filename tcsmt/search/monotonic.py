"""Monotonicity: two inputs x <= y (elementwise) with f(x) > f(y), or a proof
that there are none.

The inputs: every a_i and b_i non-negative in both x and y, so the exact
dot product can only grow from x to y; c may have any sign, with
c_x <= c_y. Comparisons of finite floating-point values are written once
over the vocabulary (``float_le``), so the solver's constraints and the
concrete check of a witness are the same definition.
"""

from __future__ import annotations

from collections.abc import Sequence

from tcsmt import datapath
from tcsmt.datapath import bv
from tcsmt.enums import Verdict
from tcsmt.errors import WitnessError
from tcsmt.interp.ints import INT, IntWord
from tcsmt.model.formats import Format
from tcsmt.model.params import ModelParams
from tcsmt.search import monotone_pool
from tcsmt.search import separation as sep
from tcsmt.search.domain import Domain
from tcsmt.search.separation import few_bits
from tcsmt.search.vectors import Vector
from tcsmt.smt import service
from tcsmt.smt.smtlib import build_formula

DOMAIN = {"a_b": "non-negative, finite", "c": "finite, c_x <= c_y", "x_le_y": "elementwise"}
CANDIDATES = "candidates"
"""The tag of a pair found by the candidate search (tcsmt.search.monotone_pool)."""


def float_le(I, fmt: Format, x, y):
    """x <= y for finite encodings of fmt (-0 == +0)."""
    sx, sy = bv.bit(I, x, fmt.bits - 1), bv.bit(I, y, fmt.bits - 1)
    mx = I.extract(x, fmt.bits - 2, 0)
    my = I.extract(y, fmt.bits - 2, 0)
    both_zero = I.and_(bv.is_zero(I, mx), bv.is_zero(I, my))
    pos = I.and_(I.not_(sx), I.not_(sy), I.ule(mx, my))
    neg = I.and_(sx, sy, I.ule(my, mx))
    mixed = I.and_(sx, I.not_(sy))
    return I.or_(both_zero, pos, neg, mixed)


def float_lt(I, fmt: Format, x, y):
    return I.not_(float_le(I, fmt, y, x))


def constraints(I, p: ModelParams, k: int, x, y, dx, dy, lower: bool = True) -> list:
    """x <= y elementwise, a and b non-negative, both finite, f(x) > f(y)
    (that last only with ``lower``)."""
    (ax, bx, cx), (ay, by, cy) = x, y
    dom = Domain()
    out = dom.constraints(I, p.fin, p.fc, ax, bx, cx, p.fb) + \
        dom.constraints(I, p.fin, p.fc, ay, by, cy, p.fb)
    for fmt, xs, ys in ((p.fin, ax, ay), (p.fb, bx, by)):
        for u, v in zip(xs, ys):
            out += [I.not_(bv.msb(I, u)), I.not_(bv.msb(I, v)), float_le(I, fmt, u, v)]
    out.append(float_le(I, p.fc, cx, cy))
    if lower:
        out.append(float_lt(I, p.fout, dy, dx))
    return out


def in_domain(I, p: ModelParams, a: list, b: list, c) -> list:
    """a and b non-negative and finite, c finite: one input of the domain
    (``constraints`` states the same for x and y, in the order its
    committed formulas were written)."""
    out = Domain().constraints(I, p.fin, p.fc, a, b, c, p.fb)
    return out + [I.not_(bv.msb(I, u)) for u in a + b]


def formula(p: ModelParams, k: int, support=None, same_products: bool = False,
            equal: bool = False, sig_bits: int | None = None):
    """The question; ``support`` keeps only some products free (others +0),
    ``same_products`` makes y's a and b equal to x's (only c grows),
    ``equal`` makes every free product the same a0*b0 (one multiplier, as in
    F21's example): restrictions that can find a witness, never prove there
    is none."""
    def build(I):
        xs = sep.declare_inputs(I, p, k, support)
        if equal:
            a0, b0 = I.var("a_eq", p.fin.bits), I.var("b_eq", p.fb.bits)
            on = set(support or range(k))
            xs = ([a0 if i in on else I.const(0, p.fin.bits) for i in range(k)],
                  [b0 if i in on else I.const(0, p.fb.bits) for i in range(k)], xs[2])
            extra = [] if sig_bits is None else [few_bits(I, p.fin, a0, sig_bits),
                                                 few_bits(I, p.fb, b0, sig_bits)]
        else:
            extra = []
        ys = _declare(I, p, k, support)
        if same_products:
            ys = (xs[0], xs[1], ys[2])
        sa, sb = sep.declare_scales(I, p, k)           # x and y share their scales
        extra += sep.scale_constraints(I, p, Domain(), sa, sb)
        dx = datapath.dot(I, p, xs[0], xs[1], xs[2], sa=sa, sb=sb)
        dy = datapath.dot(I, p, ys[0], ys[1], ys[2], sa=sa, sb=sb)
        return constraints(I, p, k, xs, ys, dx, dy) + extra
    what = ("only c differs" if same_products else "x and y free") + \
        (", equal products" if equal else "") + \
        ("" if support is None else f", products {list(support)} free")
    return build_formula(build, description=f"tcsmt monotonicity {p.name} k={k} ({what})")


def _declare(I, p: ModelParams, k: int, support):
    free = set(range(k)) if support is None else set(support)
    a = [I.var(f"ya{i}", p.fin.bits) if i in free else I.const(0, p.fin.bits) for i in range(k)]
    b = [I.var(f"yb{i}", p.fb.bits) if i in free else I.const(0, p.fb.bits) for i in range(k)]
    return a, b, I.var("yc", p.fc.bits)


def check_witness(p: ModelParams, k: int, x: Vector, y: Vector) -> tuple[int, int]:
    """Replay: the same constraints with the Python-int interpretation (x
    and y of a block-scaled model have the same scales)."""
    from tcsmt.sim.dot import dot_bits
    if (x.sa, x.sb) != (y.sa, y.sb):
        raise WitnessError(f"monotonicity witness x={x} y={y}: x and y have different scales")
    dx = dot_bits(p, list(x.a), list(x.b), x.c, *x.scales())
    dy = dot_bits(p, list(y.a), list(y.b), y.c, *y.scales())
    w = lambda v, f: IntWord(v, f.bits)  # noqa: E731
    xs = ([w(v, p.fin) for v in x.a], [w(v, p.fin) for v in x.b], w(x.c, p.fc))
    ys = ([w(v, p.fin) for v in y.a], [w(v, p.fin) for v in y.b], w(y.c, p.fc))
    ok = all(c.b for c in constraints(INT, p, k, xs, ys, w(dx, p.fout), w(dy, p.fout)))
    if not ok:
        raise WitnessError(f"monotonicity witness x={x} y={y} does not replay on {p.name}")
    return dx, dy


def run_monotonicity(base: ModelParams, k: int, solver: str = "portfolio",
                     timeout: float = service.DEFAULT_TIMEOUT, readable: bool = True,
                     cross_check: bool = False, prior: Sequence[Vector] = (),
                     pool: bool = True) -> sep.Outcome:
    """x <= y with f(x) > f(y) (vectors [x, y], replayed), or a proof that
    there is none. A ``prior`` pair (an earlier result's) that still holds is
    taken without asking; then (with ``pool``) candidate pairs run through
    the simulator (tcsmt.search.monotone_pool); then the solvers."""
    forms = formulations(base, k, readable)
    if len(prior) == 2 and all(len(v.a) == k for v in prior):
        try:
            check_witness(base, k, *prior)
            return sep.Outcome(Verdict.SAT, forms[-1][1], vectors=list(prior),
                               tag="earlier result")
        except WitnessError:
            pass
    for x, y in monotone_pool.search(base, k) if pool else ():
        try:
            check_witness(base, k, x, y)
            return sep.Outcome(Verdict.SAT, forms[-1][1], vectors=[x, y], tag=CANDIDATES)
        except WitnessError:
            continue
    names, notes = service.choose_solvers(solver)
    full = forms[-1]
    jobs = [service.Job(full[1], names[0], full[0])]
    jobs += [service.Job(f, s, tag, 10.0) for tag, f in forms[:-1] for s in names[:1]]
    jobs += [service.Job(full[1], s, full[0]) for s in names[1:]]
    jobs += [service.Job(f, s, tag, 4.0) for tag, f in forms[:-1] for s in names[1:]]
    out = sep.race(jobs, forms, timeout, lambda run: _replay(base, k, run), cross_check, names)
    out.notes += notes
    return out


def formulations(base: ModelParams, k: int, readable: bool) -> list:
    """Every product equal and non-zero first: the large sums where
    truncation after alignment breaks monotonicity; then fewer non-zero
    products; the full question last."""
    sizes = [k] + sorted(m for m in {3, 6, 12} if m < k)
    forms = [(f"same-ab/equal/bits-2/support-{m}", formula(base, k, tuple(range(m)), True, True, 2))
             for m in sizes] if readable else []
    forms += [(f"same-ab/equal/support-{m}", formula(base, k, tuple(range(m)), True, True))
              for m in sizes]
    forms += [(f"same-ab/support-{m}", formula(base, k, sep.support_positions(k, m), True))
              for m in (3, 6) if m < k]
    forms += [("same-ab", formula(base, k, None, True))]
    forms += [(f"support-{m}", formula(base, k, sep.support_positions(k, m))) for m in (1, 2) if m < k]
    return forms + [(sep.FULL, formula(base, k))]


def _replay(base: ModelParams, k: int, run) -> list[Vector]:
    v = run.values
    x = sep.decode(v, k, base)
    if "/equal" in run.tag:
        m = int(run.tag.rsplit("-", 1)[1])
        x = Vector(tuple(v.get("a_eq", 0) if i < m else 0 for i in range(k)),
                   tuple(v.get("b_eq", 0) if i < m else 0 for i in range(k)), x.c, x.sa, x.sb)
    if run.tag.startswith("same-ab"):
        y = Vector(x.a, x.b, v.get("yc", 0), x.sa, x.sb)
    else:
        y = Vector(tuple(v.get(f"ya{i}", 0) for i in range(k)),
                   tuple(v.get(f"yb{i}", 0) for i in range(k)), v.get("yc", 0), x.sa, x.sb)
    check_witness(base, k, x, y)
    return [x, y]
