"""Monotonicity by parts, cut at the model's own roundings
(tcsmt.search.monotone_cuts): a small model that rounds every addition is
proved part by part, each part unsat by two solvers; a non-monotone
model's step part is sat with a witness that replays on the model."""

import pytest

from tcsmt.enums import Verdict
from tcsmt.errors import BadOption
from tcsmt.model.choose import choose
from tcsmt.search import monotone_cuts as mc
from tcsmt.search.monotonic import check_witness


def _small():
    """CDNA2's datapath (every addition rounded, pairwise, flushing) with
    FP4 inputs and a 6-bit accumulator: small formulas."""
    return choose("cdna2-fp16-fp32").replace(
        in_format="float4_e2m1fn", c_format="float6_e3m2fn", out_format="float6_e3m2fn",
        acc_format="float6_e3m2fn")


def test_the_cuts_are_the_models_roundings():
    """CDNA2 at k = 4: the pairwise tree's three additions, c's addition and
    the final rounding, each into FP32; RDNA3 rounds its block sum into
    e10m23 before FP32."""
    assert [c.fmt.name for c in mc.cuts_of(choose("cdna2-fp16-fp32"), 4)] == ["float32"] * 5
    assert [c.fmt.name for c in mc.cuts_of(choose("rdna3-fp16-fp32"), 2)] == ["e10m23", "float32"]
    assert mc.moves(2, 1) == ["a0", "a1", "b0", "b1", "c-up", "c-zero", "cut0-up", "cut0-zero"]


def test_a_monotone_model_is_proved_by_parts_each_by_two_solvers():
    p = _small()
    proof = mc.prove(p, 2, budget=60.0)
    assert proof.verdict == Verdict.UNSAT, [x.doc() for x in proof.parts]
    assert len(proof.cuts) == 3
    asked = [x for x in proof.parts if x.verdict != "unread"]
    assert all(x.verdict == "unsat" and x.proved_by == ["bitwuzla", "cvc5"] for x in asked)
    # every segment is asked about each input it reads; the rest need no solver
    unread = {x.what for x in proof.parts if x.verdict == "unread"}
    assert "segment 0, step c-up" in unread and "segment 0, step a0" not in unread
    assert "segment 3, step cut2-up" not in unread and "segment 3, step a0" in unread
    assert set(proof.cpu_seconds()) == {"bitwuzla", "cvc5"}


def test_a_part_finds_a_non_monotone_step_that_replays():
    """RDNA3 (k = 2) is not monotone (results/rdna3/monotonicity.json): the
    segment up to its e10m23 rounding already falls when c steps up, and the
    inputs of that part's model are a counterexample of the whole model."""
    p = choose("rdna3-fp16-fp32")
    part, vectors = mc.step_part(p, 2, [], 0, "c-up", ("bitwuzla",), 60.0)
    assert part.verdict == "sat"
    x, y = vectors
    dx, dy = check_witness(p, 2, x, y)
    assert (x.a, x.b) == (y.a, y.b) and x.c != y.c and dx != dy
    # the next segment (FP32 from e10m23) is monotone in its input: unsat
    part, _ = mc.step_part(p, 2, [mc.NOT_NAN], 1, "cut0-up", ("bitwuzla", "cvc5"), 60.0)
    assert part.verdict == "unsat" and part.proved_by == ["bitwuzla", "cvc5"]


def test_a_format_without_minus_zero_is_refused():
    p = choose("rdna3-fp16-fp32").replace(c_format="float8_e4m3fnuz")
    with pytest.raises(BadOption):
        mc.prove(p, 2)


def test_a_part_past_its_budget_is_unknown_with_no_cpu_figure():
    """One rounded FP32 addition monotone in an argument (CDNA2's third
    rounding) is past a budget of 0.5 CPU-s: unknown, its wall time kept."""
    p = choose("cdna2-fp16-fp32")
    part, vectors = mc.step_part(p, 4, [mc.FINITE, mc.FINITE], 2, "cut0-up", ("bitwuzla",), 0.5)
    assert part.verdict == "unknown" and vectors == []
    assert part.cpu == {} and part.seconds["bitwuzla"] > 0
    assert part.doc()["proved_by"] == []


def test_the_gap_cases_partition_the_integers():
    cases = mc.gap_cases(5)
    assert len(cases) == 11
    assert mc.case_name(cases[0]) == "gap <= -5" and mc.case_name(cases[-1]) == "gap >= 5"

    def holds(case, g):
        lo, hi = case
        return (lo is None or lo <= g) and (hi is None or g <= hi)
    for g in range(-40, 41):
        assert sum(holds(c, g) for c in cases) == 1, g


def test_a_step_split_by_the_gap_of_the_two_terms_is_unsat_in_every_case():
    """The small model's third rounding (the two pair sums added) raised in
    its first argument: every gap case unsat by both solvers."""
    p = _small()
    assert [c.shift is not None for c in mc.cuts_of(p, 4)] == [True] * 4 + [False]
    domains = [mc.FINITE, mc.FINITE]
    parts, vectors = mc.case_parts(p, 4, domains, 2, "cut0-up", mc.gap_cases(4), budget=60.0)
    assert vectors == [] and len(parts) == 9
    assert all(x.verdict == "unsat" and x.proved_by == ["bitwuzla", "cvc5"] for x in parts)
    assert parts[4].what == "segment 2, step cut0-up, gap = 0"


def test_a_case_needs_a_segment_that_adds_two_terms():
    """RDNA3 sums c and both products in one register: no gap to split by."""
    p = choose("rdna3-fp16-fp32")
    assert mc.cuts_of(p, 2)[0].shift is None
    with pytest.raises(BadOption):
        mc.step_formula(p, 2, [], 0, "c-up", (0, 0))


def test_prove_splits_a_step_left_unknown_by_the_gap(monkeypatch):
    """A step part the whole formula leaves unknown (here made so) is asked
    in gap cases, which stand in the proof for it."""
    p = _small()
    whole = mc.step_part

    def unknown_at_one(p, k, domains, segment, move, *args):
        if (segment, move) == (1, "cut0-up"):
            return mc.Part(f"segment {segment}, step {move}", "unknown"), []
        return whole(p, k, domains, segment, move, *args)
    monkeypatch.setattr(mc, "step_part", unknown_at_one)
    proof = mc.prove(p, 2, budget=60.0, gaps=3)
    assert proof.verdict == Verdict.UNSAT, [x.doc() for x in proof.parts]
    names = [x.what for x in proof.parts]
    assert "segment 1, step cut0-up" not in names
    assert [n for n in names if n.startswith("segment 1, step cut0-up,")] == \
        [f"segment 1, step cut0-up, {mc.case_name(c)}" for c in mc.gap_cases(3)]


def test_an_input_steps_products_are_free_words_that_keep_the_step():
    """A segment's input step has no multiplier (stepped free products:
    the committed CDNA2 proof, below, shows those steps answered); a cut's
    step and a cut's domain keep the datapath's products as they are."""
    p = choose("cdna2-fp16-fp32")
    step = mc.step_formula(p, 4, [], 0, "a0")
    assert "bvmul" not in step.text and "stepped free products" in step.description
    assert "bvmul" in mc.domain_formula(p, 4, [], 0, mc.FINITE).text
    cut = mc.step_formula(p, 4, [mc.FINITE, mc.FINITE], 2, "cut0-up")
    assert "stepped" not in cut.description


def test_which_models_are_proved_by_cuts():
    assert mc.applies(choose("cdna2-fp16-fp32"), 4)
    assert not mc.applies(choose("rdna4-fp16-fp32"), 4)          # one block register
    assert not mc.applies(choose("cdna2-fp16-fp32").replace(in_format="float8_e4m3fnuz"), 4)


def test_the_part_names_follow_the_files_domains_and_splits():
    """Which domain each cut has and which steps a proof split by gap are
    its solvers' answers: the names take them from the file's verdicts;
    the steps are the current code's."""
    p = _small()
    said = {"domain cut0: finite": "unsat", "domain cut1: not NaN": "unsat",
            "domain cut2: not NaN": "unsat", "segment 1, step cut0-up, gap = 0": "unsat"}
    names = mc.part_names(p, 2, said)
    assert names[:3] == ["domain cut0: finite", "domain cut1: not NaN", "domain cut2: not NaN"]
    assert "segment 1, step cut0-up" not in names
    assert [n for n in names if n.startswith("segment 1, step cut0-up,")] == \
        [f"segment 1, step cut0-up, {mc.case_name(c)}" for c in mc.gap_cases(mc.GAPS)]
    assert len([n for n in names if n.startswith("segment ")]) == \
        sum(len(mc.moves(2, j)) for j in range(4)) - 1 + len(mc.gap_cases(mc.GAPS))


def test_a_proof_says_how_far_it_is():
    """``progress`` hears of every segment's step, the last call with
    everything done; a cut whose domain is not finite keeps only the part
    that proved its domain."""
    p = _small()
    heard = []
    proof = mc.prove(p, 2, ("bitwuzla",), budget=60.0, at_once=True,
                     progress=lambda name, done, total: heard.append((name, done, total)))
    assert proof.verdict == Verdict.UNSAT
    total = sum(len(mc.moves(2, j)) for j in range(len(proof.cuts) + 1))
    assert [d for _, d, _ in heard] == list(range(total + 1)) and {t for _, _, t in heard} == {total}
    assert heard[0][0] == "segment 0, step a0" and heard[-1] == ("", total, total)
    domains = [x.what for x in proof.parts if x.what.startswith("domain")]
    assert len(domains) == len(proof.cuts) and all(x.verdict == "unsat" for x in proof.parts
                                                   if x.what in domains)
    assert mc.part_names(p, 2, {x.what: x.verdict for x in proof.parts}) == [x.what for x in proof.parts]


def test_the_committed_cdna2_file_is_the_proof_by_cuts_with_every_part_cross_checked():
    import json
    from pathlib import Path
    doc = json.loads((Path(__file__).parent.parent / "results/cdna2/monotonicity.json").read_text())
    p = choose("cdna2-fp16-fp32")
    assert doc["verdict"] == "unsat" and doc["query"]["method"] == mc.METHOD
    assert doc["query"]["model"] == p.name and doc["query"]["k"] == 4
    said = {x["part"]: x["verdict"] for x in doc["query"]["parts"]}
    assert [x["part"] for x in doc["query"]["parts"]] == mc.part_names(p, 4, said)
    assert all(v in ("unsat", "unread") for v in said.values())
    asked = [x for x in doc["run"]["parts"] if x["verdict"] == "unsat"]
    assert len(asked) >= 2 * 4 + 5       # the product steps of segments 0 and 1, a domain per cut
    assert all(x["proved_by"] == ["bitwuzla", "boolector"] and x["smt2_sha256"] for x in asked)
    assert doc["proof"]["cross_checked"]


def test_a_proof_by_cuts_is_written_with_its_parts_and_restates():
    """The document names the method and every part with its verdict;
    restated from the file it is the same; a part the file says is
    unknown makes the restated verdict unknown."""
    from tcsmt.properties.registry import get_property
    from tcsmt.regen.restate import restate_monotonicity
    from tcsmt.report.documents import monotonicity_parts_document
    from tcsmt.report.results import stable
    p = _small().replace(name="cdna2-small", block_size=2)
    prop = get_property("monotonicity")
    assert prop.k(p) == 2
    proof = mc.prove(p, 2, ("bitwuzla", "boolector"), budget=60.0, gaps=mc.GAPS, at_once=True)
    assert proof.verdict == Verdict.UNSAT
    doc = monotonicity_parts_document(prop, p, 2, proof, 1.0, "test", mc)
    assert doc["query"]["method"] == mc.METHOD and doc["proof"]["cross_checked"]
    assert doc["run"]["proved_by"] == ["bitwuzla", "boolector"]
    assert {x["verdict"] for x in doc["query"]["parts"]} == {"unsat", "unread"}
    assert stable(restate_monotonicity(prop, p, "test", doc)) == stable(doc)
    asked = next(i for i, x in enumerate(doc["query"]["parts"]) if x["part"].startswith("segment")
                 and x["verdict"] == "unsat")
    doc["query"]["parts"][asked]["verdict"] = "unknown"
    assert restate_monotonicity(prop, p, "test", doc)["verdict"] == Verdict.UNKNOWN


def test_a_sat_part_whose_pair_replays_makes_a_sat_result():
    """A proof by cuts that ends at a sat step part whose inputs replay as
    a counterexample (RDNA3 at k = 2, segment 0, c up) gives a sat result
    with that pair, named after the part and its solver, not unknown (the
    whole formula gave no answer in 0.01 s)."""
    from tcsmt.model.formats import get_format
    from tcsmt.properties.registry import get_property
    from tcsmt.report.documents import monotonicity_document
    from tcsmt.report.results import read_vector
    from tcsmt.search.monotonic import run_monotonicity
    p = choose("rdna3-fp16-fp32")
    whole = run_monotonicity(p, 2, "bitwuzla", 0.01, pool=False)
    assert whole.verdict == Verdict.UNKNOWN
    part, vectors = mc.step_part(p, 2, [], 0, "c-up", ("bitwuzla",), 60.0)
    with pytest.raises(ValueError):
        mc.counterexample(whole, mc.Proof(Verdict.UNKNOWN, [part], []), 1.0)
    found = mc.counterexample(whole, mc.Proof(Verdict.SAT, [part], [], vectors), 1.0)
    doc = monotonicity_document(get_property("monotonicity"), p, 2, found, "test")
    assert doc["verdict"] == Verdict.SAT and doc["query"]["monotonic_pair"]
    assert doc["run"]["solver"]["formula"] == "segment 0, step c-up"
    assert doc["run"]["solver"]["name"] == "bitwuzla"
    fmts = {k: get_format(v) for k, v in doc["formats"].items()}
    x, y = (read_vector(v, fmts) for v in doc["vectors"])
    dx, dy = check_witness(p, 2, x, y)
    assert (x.a, x.b) == (y.a, y.b) and x.c != y.c and dx != dy
