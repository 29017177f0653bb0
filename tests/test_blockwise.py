"""Proofs in parts: shared nodes cut (tcsmt.smt.cut) and block-by-block
induction over a chain (tcsmt.search.blockwise)."""

import random

from tcsmt.enums import Verdict
from tcsmt.model.choose import choose
from tcsmt.search import blockwise
from tcsmt.search.domain import Domain
from tcsmt.search.vectors import Hypothesis
from tcsmt.smt import cut, service
from tcsmt.smt.service import Job
from tcsmt.smt.smtlib import build_formula
from tcsmt.smt.terms import SmtInterp, evaluate


def _shared_pair():
    """x = s + 1 and y = s - 255 over 8 bits (equal), s the high byte of a
    16-bit product of two 8-bit inputs."""
    I = SmtInterp()
    a, b = I.var("a", 8), I.var("b", 8)
    p = I.mul(I.zext(a, 8), I.zext(b, 8))
    s = I.extract(p, 15, 8)
    return I, p, s, I.add(s, I.const(1, 8)), I.sub(s, I.const(255, 8))


def test_narrowest_cuts_the_byte_not_the_product():
    _, p, s, x, y = _shared_pair()
    assert cut.narrowest(x, y) == {s.id}
    assert cut.narrowest(x, y, cut.upward({s.id}, [x, y])) == {p.id}
    assert cut.narrowest(x, y, cut.upward({p.id}, [x, y])) == set()     # nothing left to cut


def test_rebuild_without_a_cut_computes_the_same_and_with_a_cut_frees_the_node():
    _, _, s, x, _ = _shared_pair()
    J = SmtInterp()
    (same,) = cut.rebuild(J, [x], set())
    rng = random.Random(1)
    for _ in range(50):
        v = {"a": rng.randrange(256), "b": rng.randrange(256)}
        assert evaluate(same, v) == evaluate(x, v)
    K = SmtInterp()
    (freed,) = cut.rebuild(K, [x], {s.id})
    assert set(K.inputs) == {f"cut{s.id}"}
    assert evaluate(freed, {f"cut{s.id}": 7}) == 8


def test_a_cut_proof_of_a_true_equality_and_no_proof_of_a_false_one():
    _, _, s, x, y = _shared_pair()
    at = cut.narrowest(x, y)
    f = build_formula(lambda I: [I.not_(I.eq(*cut.rebuild(I, [x, y], at)))])
    assert "bvmul" not in f.text
    assert service.race([Job(f, "bitwuzla")], 30)[0].status == "unsat"
    _, _, s, x, _ = _shared_pair()
    I = SmtInterp()
    wrong = I.add(s, I.const(2, 8))
    g = build_formula(lambda J: [J.not_(J.eq(*cut.rebuild(J, [x, wrong], {s.id})))])
    assert service.race([Job(g, "bitwuzla")], 30)[0].status == "sat"


def _hyps(base, **changes):
    p = choose(base)
    return [Hypothesis("x", p, p.name), Hypothesis("y", p.replace(name="y", **changes), "y")]


def test_structure_holds_where_only_the_block_step_differs():
    hx, hy = _hyps("cdna2-fp16-fp32", chaining="separate")
    got = blockwise.parts(hx, hy, 8, Domain())
    assert got is not None
    structure, steps = got
    assert structure.trivially_unsat and len(steps) == 2


def test_structure_fails_where_the_chain_itself_differs():
    hx, hy = _hyps("cdna2-fp16-fp32", block_size=8)      # one block of 8 against two of 4
    assert blockwise.parts(hx, hy, 8, Domain()) is None
    hx, hy = _hyps("cdna2-fp16-fp32", c_placement="after")   # c added after the blocks
    assert blockwise.parts(hx, hy, 8, Domain()) is None


def test_a_step_that_differs_is_not_proved():
    """c rounded toward zero against to nearest in the separate chaining's
    addition of c: the steps differ, so no cut and no solver may prove it."""
    p = choose("cdna2-fp16-fp32").replace(name="x", chaining="separate")
    hx, hy = Hypothesis("x", p, "x"), Hypothesis("y", p.replace(name="y", c_rounding="rz"), "y")
    got = blockwise.parts(hx, hy, 8, Domain())
    assert got is not None
    keep, x, y, _ = got[1][0]
    top = blockwise.step_formula(got[1][0], cut.narrowest(x, y), "t")
    assert service.race([Job(top, "bitwuzla")], 30)[0].status == "sat"
    names = service.available_solvers()
    ans = blockwise.prove_step("block 0", got[1][0], "t", names, 15.0, 10.0)
    assert ans is None or ans.verdict != Verdict.UNSAT


def test_identity_of_step_arguments():
    I = SmtInterp()
    a, b = I.var("a", 8), I.var("b", 8)
    assert blockwise.identity([a, (b, 3)]) == blockwise.identity([a, (b, 3)])
    assert blockwise.identity([a]) != blockwise.identity([b])
