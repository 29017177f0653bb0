"""The carry-bit lemma proved in parts (tcsmt.search.overflow): every aligned
term of the block within a bound, and words within those bounds summing
inside the register. Each part is a real formula a solver decides: a bound
below what the largest inputs reach is refuted (SAT), and so is a register
too narrow for the bounds, so the parts cannot prove what does not hold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tcsmt.model.choose import choose
from tcsmt.report.documents import carry_proof_document
from tcsmt.search import overflow as ov
from tcsmt.search.domain import Domain
from tcsmt.search.prove import MAX_CARRY, prove_carry_bits
from tcsmt.smt import service

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not {"bitwuzla", "boolector"} <= set(service.available_solvers()),
                                reason="needs Bitwuzla and Boolector installed")


def test_nvfp4_at_k64_is_proved_in_parts_each_by_two_solvers():
    """NVFP4: c and four scaled groups of 16 products, 0 carry bits, the
    count the committed result states; every part UNSAT by two solvers."""
    p = choose("blackwell-nvfp4")
    proof = prove_carry_bits(p, timeout=120)
    committed = json.loads((ROOT / "results/blackwell-nvfp4/carry-bits-proof.json").read_text())
    assert proof.fewest == committed["query"]["fewest"] == 0
    assert [part.name for part in proof.parts] == ["term 0", "term 1", "term 2", "term 3", "term 4", "sum"]
    assert all(part.answer.status == "unsat" and len(set(part.answer.proved_by)) >= 2
               for part in proof.parts)
    assert proof.cross_checked
    doc = carry_proof_document(proof)
    assert [q["verdict"] for q in doc["query"]["parts"]] == ["unsat"] * 6
    assert doc["proof"]["cross_checked"] and doc["query"]["method"].startswith("lemma, in parts")


def test_a_bound_the_largest_inputs_exceed_is_refuted():
    p = choose("blackwell-nvfp4")
    est = ov.estimate(p, p.block_size, MAX_CARRY)
    too_small = est.largest[1] - 1
    [run] = service.race([service.Job(ov.term_formula(p, p.block_size, 1, too_small, Domain()),
                                      "bitwuzla")], 120)
    assert run.status == "sat"


def test_a_register_too_narrow_for_the_bounds_is_refuted():
    """The bounds made for 0 carry bits sum inside that register (UNSAT);
    twice those bounds can leave it (SAT)."""
    p = choose("blackwell-nvfp4")
    est = ov.estimate(p, p.block_size, MAX_CARRY)
    bounds = est.bounds(0)
    assert est.register is not None and bounds is not None
    fits = ov.sum_formula(est.register, bounds, 0, p.name)
    short = ov.sum_formula(est.register, [2 * a for a in bounds], 0, p.name)
    [ok] = service.race([service.Job(fits, "boolector")], 120)
    [bad] = service.race([service.Job(short, "boolector")], 120)
    assert (ok.status, bad.status) == ("unsat", "sat")


def test_small_blocks_are_proved_whole():
    """Volta's block of 4 products: the whole lemma, no parts, 3 carry bits."""
    proof = prove_carry_bits(choose("volta"), timeout=120)
    assert proof.fewest == 3 and proof.parts == [] and proof.cross_checked
    assert "parts" not in carry_proof_document(proof)["query"]


def test_register_widths_are_told_apart_by_equal_products():
    """RTX Blackwell's carry bits 3 and 4 at k = 16: the full formula gave
    nothing in 60 s; every product a0*b0 reaches the sums that overflow 3
    carry bits, and the witness replays."""
    from tcsmt.properties.registry import get_property
    from tcsmt.properties.run import hypotheses, resolve_base
    from tcsmt.search.find import EQUAL, ask, differ_only_in
    from tcsmt.search.vectors import separated_by
    prop = get_property("carry-bits")
    base = resolve_base(prop, "rtx-blackwell")
    hyps = hypotheses(prop, base)
    ids = [h.id for h in hyps]
    pair = (ids.index("3"), ids.index("4"))
    assert differ_only_in(hyps, [pair], "carry_bits")
    assert not differ_only_in(hyps, [], "carry_bits")
    rounding = get_property("final-rounding")
    assert not differ_only_in(hypotheses(rounding, resolve_base(rounding, "volta")), [(0, 1)], "carry_bits")
    out = ask(hyps, prop.k(base), prop.domain(base), [pair], "bitwuzla", 60, readable=False)
    assert out.verdict == "sat" and out.tag == EQUAL
    assert pair in separated_by(out.vectors[0], hyps)


def test_terms_the_largest_inputs_leave_at_zero_get_the_room_left():
    """NVFP4 sf-tensor: the four c-dominant groups of 16 products are zero on
    the largest inputs; the terms seen are bounded by 2^n - 1 at least 16
    times their largest, the unseen share the rest, and the bounds still sum
    inside the register. Without unseen terms the equal share is kept."""
    p = choose("blackwell-nvfp4-sftensor")
    est = ov.estimate(p, p.block_size, MAX_CARRY)
    bounds = est.bounds(0)
    assert est.register is not None and bounds is not None
    unseen = [i for i, m in enumerate(est.largest) if m == 0]
    assert unseen == [17, 18, 19, 20]
    assert sum(bounds) < 1 << est.register.top(0)
    for m, a in zip(est.largest, bounds):
        if m:
            assert a >= 16 * m and (a + 1) & a == 0
    room = (1 << est.register.top(0)) - 1 - sum(est.largest)
    assert all(bounds[i] > room // len(bounds) for i in unseen)
    plain = ov.estimate(choose("blackwell-nvfp4"), 64, MAX_CARRY)
    equal = (1 << plain.register.top(0)) - 1 - sum(plain.largest)
    assert plain.bounds(0) == [m + equal // len(plain.largest) for m in plain.largest]


def test_parts_are_proved_by_the_first_two_provers():
    """Z3 and cvc5 are asked only about a part the first two leave open: the
    solvers a committed part names do not depend on which finished first."""
    proof = prove_carry_bits(choose("blackwell-nvfp4"), timeout=120)
    assert all(sorted(set(part.answer.proved_by)) == ["bitwuzla", "boolector"] for part in proof.parts)
    assert all(r.solver in ("bitwuzla", "boolector") for part in proof.parts for r in part.answer.runs)
