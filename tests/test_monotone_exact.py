"""Monotonicity in parts of a model whose block sum is exact
(tcsmt.search.monotone_exact): the register's lemmas, then the exact sum
grows with the inputs and its rounding with the sum. A small exact model is
proved, each part unsat by two solvers, and its result file restates; a
register too narrow for the lemmas' statements makes a part sat (the parts
can fail)."""

import pytest

from tcsmt.enums import Verdict
from tcsmt.errors import BadOption
from tcsmt.model.choose import choose
from tcsmt.properties.registry import get_property
from tcsmt.properties.run import run_property
from tcsmt.regen.restate import restate_monotonicity
from tcsmt.report.results import stable
from tcsmt.search import exact_register as er
from tcsmt.search import monotone_exact as me
from tcsmt.smt import abstraction, service


def _small():
    """CDNA1's exact datapath with FP4 inputs and an FP8 c and output, k = 2."""
    return choose("cdna1-fp16-fp32").replace(
        name="cdna1-small", in_format="float4_e2m1fn", c_format="float8_e5m2",
        out_format="float8_e5m2", acc_format="float8_e5m2", block_size=2)


def test_the_parts_are_named_as_built():
    p = _small()
    assert [f.description for f in me.parts(p, 2)] == me.part_names()
    assert len(me.part_names()) == 22 + 6


def test_only_exact_float_models_apply():
    assert me.applies(choose("cdna1-fp16-fp32"), 4)
    assert not me.applies(choose("cdna2-fp16-fp32"), 4)
    assert not me.applies(choose("ampere-s8-s32"), 4)
    with pytest.raises(BadOption):
        me.prove(choose("cdna3-fp16-fp32"), 4)


def test_a_register_too_narrow_for_the_statement_makes_a_part_sat():
    """The wide sum without room for the register's head (K up to ehi + W):
    the step lemma from a split register is false."""
    p = _small()
    s = er.spec(p, 2)
    narrow = er.setting(p, 2, s.low, s.ehi + 1 - s.low + er.COUNT + 2)
    f = er.lemma_step(narrow, "split", "split")
    assert service.solve(f, "bitwuzla", 60).status == "sat"


def test_a_product_term_grows_with_each_factor_at_cdna1_size():
    """term a and term b at CDNA1's size (fp16 factors) are unsat with the
    stepped products' facts; with only the plain free products' bounds
    (nothing says a larger factor gives a larger product) term a is sat, so
    the facts are what proves it."""
    s = er.spec(choose("cdna1-fp16-fp32"), 4)
    for which in ("a", "b"):
        f = me.part_factor(s, which)
        assert "stepped free products" in f.description
        assert service.solve(f, "bitwuzla", 60).status == "unsat", which
    plain = me.part_factor(s, "a", abstraction.FreeProducts())
    assert service.solve(plain, "bitwuzla", 60).status == "sat"


@pytest.mark.slow
def test_a_small_exact_model_is_proved_monotone_in_parts_and_its_file_restates():
    p = _small()
    prop = get_property("monotonicity")
    doc = run_property(prop, p, command="test")
    assert doc["verdict"] == Verdict.UNSAT, doc["query"].get("parts")
    assert doc["query"]["method"] == me.METHOD
    assert [x["part"] for x in doc["query"]["parts"]] == me.part_names()
    assert all(x["verdict"] == "unsat" for x in doc["query"]["parts"])
    assert doc["run"]["proved_by"] == ["bitwuzla", "boolector"] and doc["proof"]["cross_checked"]
    assert all(x["proved_by"] == ["bitwuzla", "boolector"] and x["smt2_sha256"] for x in doc["run"]["parts"])
    assert set(doc["run"]["solver"]["cpu_seconds"]) == {"bitwuzla", "boolector"}
    again = restate_monotonicity(prop, p, "test", doc)
    assert stable(again) == stable(doc)
    doc["query"]["parts"][3]["verdict"] = "unknown"          # a part the file does not prove
    assert restate_monotonicity(prop, p, "test", doc)["verdict"] == Verdict.UNKNOWN


def test_with_no_answer_either_way_the_file_keeps_which_parts_stand():
    """Parts asked with a budget too small for most of them, and the whole
    formula with no time either: the result is unknown, and the file lists
    every part with its verdict (the parts not proved among them), not only
    the search's runs; it restates as written."""
    p = _small()
    prop = get_property("monotonicity")
    doc = run_property(prop, p, command="test", timeout=0.01)
    assert doc["verdict"] == Verdict.UNKNOWN
    assert doc["query"]["method"] == me.METHOD
    said = {x["part"]: x["verdict"] for x in doc["query"]["parts"]}
    assert [x["part"] for x in doc["query"]["parts"]] == me.part_names(p, 2, said)
    assert "unknown" in said.values()
    # the final lemma had no answer whole: its cases follow, up to the
    # first not proved; those after it are listed unasked, then the whole
    # (kept only when a case is not proved)
    cases = [n for n in said if n.startswith(er.FINAL + ", ")]
    assert len(cases) == len(er.final_cases(er.spec(p, 2)))
    verdicts = [said[n] for n in cases]
    first = verdicts.index("unknown") if "unknown" in verdicts else len(cases)
    assert set(verdicts[:first]) <= {"unsat"} and set(verdicts[first:]) <= {"unknown"}
    assert said.get(er.FINAL) == ("unknown" if first < len(cases) else None)
    runs = {x["part"]: x for x in doc["run"]["parts"]}
    assert all(runs[n]["seconds"] for n in cases[:first + 1]) and \
        not any(runs[n]["seconds"] for n in cases[first + 1:])
    assert doc["run"]["proved_by"] == [] and doc["proof"] is None
    again = restate_monotonicity(prop, p, "test", doc)
    assert stable(again) == stable(doc)


def test_the_final_lemma_not_proved_whole_is_proved_in_cases(monkeypatch):
    """With no time for the final lemma whole, its cases (one per phase
    and value of the exponent that places the result, and the values
    outside the range) are asked instead, each unsat by two solvers; they
    stand for the lemma, and the file's names follow them."""
    p = _small()
    s = er.spec(p, 2)
    monkeypatch.setattr(me, "WHOLE_TRY", 0.0)
    parts = me._final(s, er.lemma_final(s), ("bitwuzla", "boolector"), 60.0, None)
    names = [f"exact register: {er.final_case_name(c)}" for c in er.final_cases(s)]
    assert [x.what for x in parts] == names
    assert len(names) == 3 + (s.ehi - s.elo + 1) + 2 * (s.ehi + s.W - (s.elo + s.b + 3) + 1)
    assert all(x.verdict == "unsat" and x.proved_by == ["bitwuzla", "boolector"] for x in parts)
    said = {x.what: x.verdict for x in parts}
    whole = me.part_names(p, 2)
    at = whole.index(er.FINAL)
    assert me.part_names(p, 2, said) == whole[:at] + names + whole[at + 1:]


def test_a_head_too_short_for_the_output_makes_a_final_case_sat():
    """The final lemma's cases can fail: with Inv's head two bits shorter
    than the output needs, D's bits reach the rounding point."""
    import dataclasses
    s = er.spec(_small(), 2)
    short = dataclasses.replace(s, of=s.of - 2)
    case = next(c for c in er.final_cases(short) if c[0] == "split" and c[4] == 5)
    assert service.solve(er.lemma_final(short, case), "bitwuzla", 60).status == "sat"
    assert service.solve(er.lemma_final(s, case), "bitwuzla", 60).status == "unsat"


def test_a_free_step_stands_on_its_shift_facts():
    """The steps asked with free shifts: unsat with the fact instances the
    step adds (the value after the step as one sum, ordered against the
    register before it), sat without them, so the facts are what proves
    them; and each generic fact holds for the real shifts (unsat)."""
    s = er.spec(_small(), 2)
    for phase, after in er.FREE_STEPS:
        assert service.solve(er.lemma_step(s, phase, after), "bitwuzla", 120).status == "unsat"
        assert service.solve(er.lemma_step(s, phase, after, helpers=False), "bitwuzla", 120).status == "sat"
    for name in er.FACTS:
        assert service.solve(er.lemma_fact(s, name), "boolector", 120).status == "unsat", name
