"""Proofs by sweeping (tcsmt.smt.sweep, tcsmt.search.sweeping): two
different circuits merged lemma by lemma, each lemma UNSAT by two solvers."""

from tcsmt.enums import PairVerdict as PV
from tcsmt.model.choose import choose
from tcsmt.search import find, sweeping
from tcsmt.search.domain import Domain
from tcsmt.search.vectors import Hypothesis
from tcsmt.smt import service, sweep
from tcsmt.smt.terms import SmtInterp, evaluate

SOLVERS = ["bitwuzla", "cvc5"]


def _circuits():
    """x = (a*b) * 2 + 1 and y = ((a*b) << 1) | 1 over 16 bits from 8-bit
    inputs: equal, built differently (mul against shl, add against or)."""
    I = SmtInterp()
    a, b = I.var("a", 8), I.var("b", 8)
    p = I.mul(I.zext(a, 8), I.zext(b, 8))
    x = I.add(I.mul(p, I.const(2, 16)), I.const(1, 16))
    y = I.bvor(I.shl(p, I.const(1, 16)), I.const(1, 16))
    return I, a, p, x, y


def test_two_circuits_that_agree_are_merged_by_proved_lemmas():
    I, _, _, x, y = _circuits()
    assert x.id != y.id
    got = sweep.sweep(I, [], x, y, SOLVERS, budget=10.0, timeout=120.0)
    assert got.equal and got.lemmas
    for lem in got.lemmas:
        assert lem.proved_by == SOLVERS
        assert service.race([service.Job(lem.formula, "z3")], 60)[0].status == "unsat"


def test_circuits_that_differ_somewhere_are_never_called_equal():
    """y differs from x on one input only (a = 255, b = 255): the samples
    miss it, so the sweep asks, and the solvers refute the merge."""
    I, _, p, x, _ = _circuits()
    y = I.bvor(I.shl(I.ite(I.eq(p, I.const(255 * 255, 16)), I.const(0, 16), p), I.const(1, 16)),
               I.const(1, 16))
    got = sweep.sweep(I, [], x, y, SOLVERS, budget=10.0, timeout=120.0)
    assert not got.equal and got.refuted >= 1
    assert evaluate(x, {"a": 255, "b": 255}) != evaluate(y, {"a": 255, "b": 255})


def test_constraints_are_kept_in_every_lemma():
    """x = a and y = a & 0x7f agree only where the top bit of a is 0: with
    that constraint the sweep proves them equal, without it it does not."""
    I = SmtInterp()
    a = I.var("a", 8)
    x, y = a, I.bvand(a, I.const(0x7F, 8))
    keep = [I.ult(a, I.const(0x80, 8))]
    got = sweep.sweep(I, keep, I.add(x, I.const(3, 8)), I.add(y, I.const(3, 8)), SOLVERS, 10.0, 60.0)
    assert got.equal
    free = sweep.sweep(I, [], I.add(x, I.const(5, 8)), I.add(y, I.const(5, 8)), SOLVERS, 10.0, 60.0)
    assert not free.equal


def _pair(base, x: dict, y: dict):
    p = choose(base)
    return (Hypothesis("x", p.replace(name="x", **x), "x"), Hypothesis("y", p.replace(name="y", **y), "y"))


def test_fp16_products_rounded_to_fp32_are_proved_exact_on_cdna1():
    """An fp16 product fits fp32 exactly, so rounding it there changes no
    output (the whole-formula race had no answer in 60 s at k = 4). With
    no time for the race, find proves the pair by sweeping."""
    hx, hy = _pair("cdna1-fp16-fp32", {"product_rounding": "exact"}, {"product_rounding": "out_format"})
    res = find.find_vectors([hx, hy], 2, Domain(), timeout=0.01, use_pool=False)
    assert not res.vectors
    (pv,) = res.pairs
    assert pv.verdict == PV.UNSAT and pv.parts is not None and len(pv.proved_by) == 2
    assert pv.parts["verdict"] == "unsat" and pv.parts["lemmas"] >= 1 and pv.parts["sha256"] == pv.smt2_sha256


def test_products_rounded_to_fp16_are_not_proved_exact():
    hx, hy = _pair("cdna1-fp16-fp32", {"product_rounding": "exact"}, {"product_rounding": "in_format"})
    assert sweeping.prove_pair(hx, hy, 2, Domain(), timeout=300.0) is None
