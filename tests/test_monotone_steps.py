"""The one-step reduction of monotonicity (tcsmt.search.monotone_steps):
the steps chain every x <= y of the domain, a step formula finds a model's
known non-monotone step (its witness replayed), and the zero steps of a
model are proved by two solvers."""

from types import SimpleNamespace

import pytest

from tcsmt.errors import BadOption, WitnessError
from tcsmt.interp.ints import INT, IntWord
from tcsmt.model.choose import choose
from tcsmt.model.formats import get_format
from tcsmt.search import monotone_steps as ms
from tcsmt.search.monotonic import float_le
from tcsmt.smt import service


def _answer(p, k, move, solver):
    return service.race([service.Job(ms.step_formula(p, k, move), solver, move)], 120.0)[0]


def _le(fmt, x, y) -> bool:
    return bool(float_le(INT, fmt, IntWord(x, fmt.bits), IntWord(y, fmt.bits)).b)


def _finite(fmt, x) -> bool:
    return fmt.classify(x) in ("zero", "subnormal", "normal")


def _c_next(fmt, x: int, move: str) -> int:
    p = SimpleNamespace(fc=fmt)
    return ms.step(INT, p, [], [], IntWord(x, fmt.bits), move)[2].v


@pytest.mark.parametrize("name", ["float8_e5m2", "float8_e4m3fn", "float4_e2m1fn"])
def test_c_steps_chain_every_ordered_pair(name):
    """From the most negative finite value, c-up visits every finite
    encoding once, in the order float_le states, and leaves the finite
    values (or wraps below) only past the largest; c-zero links +0 to -0. So for x <= y a
    chain of steps from x reaches y (x = +0, y = -0 by c-zero)."""
    fmt = get_format(name)
    neg_zero = 1 << (fmt.bits - 1)
    finite = [x for x in range(1 << fmt.bits) if _finite(fmt, x)]
    z = fmt.max_finite_bits(1)
    seen = [z]
    while True:
        nxt = _c_next(fmt, z, "c-up")
        if not _finite(fmt, nxt) or not _le(fmt, z, nxt):
            break           # past the largest (e2m1 wraps to -0): x <= y rules it out
        assert (_le(fmt, z, nxt) and not _le(fmt, nxt, z)) or (z, nxt) == (neg_zero, 0)
        seen.append(nxt)
        z = nxt
    assert z == fmt.max_finite_bits(0)
    assert sorted(seen) == finite
    assert _c_next(fmt, 0, "c-zero") == neg_zero
    assert _c_next(fmt, neg_zero, "c-negzero") == 0
    where = {x: i for i, x in enumerate(seen)}
    pairs = [(x, y) for x in finite[::7] for y in finite[::5] if _le(fmt, x, y)]
    assert pairs and all(where[x] <= where[y] or (x, y) == (0, neg_zero) for x, y in pairs)


@pytest.mark.parametrize("name", ["float8_e5m2", "float8_e4m3fn", "float8_e4m3fnuz", "float4_e2m1fn"])
def test_ab_steps_run_through_the_non_negative_finite_values(name):
    """The non-negative finite encodings are one run 0..max_finite: raising
    a or b by one encoding is its next value, and past the run lies no
    finite non-negative value (a step there leaves the domain)."""
    fmt = get_format(name)
    top = fmt.max_finite_bits(0)
    assert all(_finite(fmt, x) and _le(fmt, x, x + 1) and not _le(fmt, x + 1, x)
               for x in range(top))
    assert not any(_finite(fmt, x) for x in range(top + 1, 1 << (fmt.bits - 1)))


def test_a_step_formula_finds_a_non_monotone_step_and_replays():
    """RDNA3 (k = 2) is not monotone (results/rdna3/monotonicity.json): its
    c-up step formula is sat, and the witness replays on the model."""
    p = choose("rdna3-fp16-fp32")
    run = _answer(p, 2, "c-up", "bitwuzla")
    assert run.status == service.Status.SAT
    x, y = ms.witness(p, 2, "c-up", run.values)
    assert (x.a, x.b) == (y.a, y.b) and x.c != y.c
    with pytest.raises(WitnessError):
        ms.witness(p, 2, "c-up", {"c": 0})


def test_zero_steps_are_proved_by_two_solvers():
    p = choose("rdna4-fp16-fp32")
    for move in ("c-zero", "c-negzero"):
        for solver in ("bitwuzla", "cvc5"):
            assert _answer(p, 4, move, solver).status == service.Status.UNSAT, (move, solver)


def test_moves_and_a_c_format_without_minus_zero():
    assert ms.moves(2) == ["a0", "a1", "b0", "b1", "c-up", "c-zero"]
    p = choose("rdna3-fp16-fp32").replace(c_format="float8_e4m3fnuz")
    with pytest.raises(BadOption):
        ms.step_formula(p, 2, "c-up")
