"""Every primitive of the SMT interpretation, evaluated by each solver,
equals the Python-int interpretation: exhaustive at widths 1 to 4, plus a
random sample at wider widths.

All the checks of one solver go into one query with folding off: output
``o{j}`` is asserted equal to one primitive applied to constants, so the
solver itself computes every value (its rewriter or its bit-blaster), and
the model read back is compared with interp_int, check by check.
"""

from __future__ import annotations

import itertools
import random

import pytest

from tcsmt.datapath import bv
from tcsmt.interp.ints import INT, IntBool, IntWord
from tcsmt.smt import service
from tcsmt.smt.smtlib import build_formula

SOLVERS = list(service.SOLVERS)
BINARY = ["add", "sub", "mul", "bvand", "bvor", "bvxor", "shl", "lshr", "ashr",
          "eq", "ult", "ule", "slt", "sle"]


def need(solver: str) -> None:
    if not service.installed(solver):
        pytest.skip(f"{solver} is not installed")


def cases():
    """(primitive, operands as ints, operand widths, index args) for every
    operand at widths 1..4 and a random sample at wide widths."""
    out = []
    for w in (1, 2, 3, 4):
        vals = range(1 << w)
        for prim in BINARY:
            out += [(prim, (x, y), (w, w), ()) for x, y in itertools.product(vals, vals)]
        for prim in ("neg", "bvnot"):
            out += [(prim, (x,), (w,), ()) for x in vals]
        for x in vals:
            out += [("extract", (x,), (w,), (hi, lo)) for hi in range(w) for lo in range(hi + 1)]
            out += [(p, (x,), (w,), (n,)) for p in ("zext", "sext") for n in (1, 2)]
            out += [("ite", (c, x, y), (0, w, w), ()) for c in (0, 1) for y in (0, (1 << w) - 1)]
    for w1, w2 in itertools.product((1, 2, 3), repeat=2):
        out += [("concat", (x, y), (w1, w2), ()) for x in range(1 << w1) for y in range(1 << w2)]
    for n in (1, 2, 3):
        for bits in itertools.product((0, 1), repeat=n):
            out += [(p, bits, (0,) * n, ()) for p in ("and_", "or_")]
    out += [("not_", (b,), (0,), ()) for b in (0, 1)]
    rng = random.Random(7)
    for w in (8, 16, 33, 64, 100):
        for prim in BINARY:
            for _ in range(8):
                y = rng.getrandbits(w) if rng.random() < 0.5 else rng.randrange(w + 2) % (1 << w)
                out.append((prim, (rng.getrandbits(w), y), (w, w), ()))
    return out


def operand(I, value: int, width: int):
    return I.bool_const(bool(value)) if width == 0 else I.const(value, width)


def expected(prim, args, widths, idx) -> int:
    ints = [IntBool(bool(v)) if w == 0 else IntWord(v, w) for v, w in zip(args, widths)]
    r = getattr(INT, prim)(*ints, *idx)
    return int(r.b) if isinstance(r, IntBool) else r.v


def conformance_formula(checks):
    def build(I):
        out = []
        for j, (prim, args, widths, idx) in enumerate(checks):
            r = getattr(I, prim)(*[operand(I, v, w) for v, w in zip(args, widths)], *idx)
            word = bv.from_bool(I, r) if I.width(r) == 0 else r
            out.append(I.eq(I.var(f"o{j}", I.width(word)), word))
        return out
    return build_formula(build, fold=False, description="primitive conformance")


@pytest.fixture(scope="module")
def checks():
    return cases()


@pytest.mark.parametrize("solver", SOLVERS)
def test_every_primitive_evaluated_by_the_solver_equals_interp_int(solver, checks):
    need(solver)
    answer = service.solve(conformance_formula(checks), solver, timeout=300)
    assert answer.status == "sat", answer.reason
    wrong = [(c, answer.values[f"o{j}"], expected(*c)) for j, c in enumerate(checks)
             if answer.values[f"o{j}"] != expected(*c)]
    assert not wrong, f"{len(wrong)} of {len(checks)} differ, e.g. {wrong[:5]}"
    assert len(checks) > 5000
