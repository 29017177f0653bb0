"""diff and equiv with real solvers: witnesses that replay, proofs by two
solvers, domains honoured, and the command line's exit codes and one-line
errors. Verdicts are asserted, witness bits never are.
"""

from __future__ import annotations

import json
import multiprocessing

import pytest
from cli_run import run

from tcsmt.errors import WitnessError
from tcsmt.model.choose import choose
from tcsmt.report import results
from tcsmt.search.diff import default_k, run_diff
from tcsmt.search.domain import Domain, make_domain
from tcsmt.search.separation import FULL, formulations, replayed_witness, support_positions
from tcsmt.search.vectors import Hypothesis, outputs
from tcsmt.sim.dot import dot_bits
from tcsmt.smt import service

INSTALLED = service.available_solvers()
two_solvers = pytest.mark.skipif(len({"bitwuzla", "z3"} & set(INSTALLED)) < 2,
                                 reason="needs bitwuzla and z3")


def hyps(a: str, b: str, sets_b=()) -> list[Hypothesis]:
    return [Hypothesis("A", choose(a)), Hypothesis("B", choose(b, overrides=list(sets_b)))]


def assert_replays(out, hs, k):
    assert out.verdict == "sat" and out.vector is not None
    assert len(out.vector.a) == k
    outs = outputs(out.vector, hs)
    assert outs["A"] != outs["B"]


# ---------------------------------------------------------------------------
# The queries
# ---------------------------------------------------------------------------

def test_volta_and_ampere_differ_on_a_replaying_witness():
    hs = hyps("volta", "ampere")
    out = run_diff(hs, default_k(hs[0].params, hs[1].params), Domain(), timeout=60)
    assert_replays(out, hs, 8)
    assert out.winner is not None and out.winner.solver in INSTALLED


@two_solvers
def test_hopper_and_blackwell_fp16_answered_either_way():
    """Whatever the shipped models say: a replaying witness, or a proof by two solvers."""
    hs = hyps("hopper", "blackwell")
    out = run_diff(hs, 16, Domain(), timeout=120, cross_check=True)
    if out.verdict == "sat":
        assert_replays(out, hs, 16)
    else:
        assert out.verdict == "unsat" and len(set(out.proved_by)) >= 2


@two_solvers
def test_more_carry_bits_than_needed_change_nothing_proved_by_two_solvers():
    hs = hyps("volta", "volta", ["carry_bits=8"])
    out = run_diff(hs, 2, Domain(), timeout=120, cross_check=True)
    assert out.verdict == "unsat", out.reason
    assert {"bitwuzla", "z3"} <= set(out.proved_by)


@two_solvers
@pytest.mark.slow
def test_more_carry_bits_for_a_whole_volta_block_proved_by_two_solvers():
    hs = hyps("volta", "volta", ["carry_bits=8"])
    out = run_diff(hs, 4, Domain(), timeout=900, cross_check=True)
    assert out.verdict == "unsat", out.reason
    assert {"bitwuzla", "z3"} <= set(out.proved_by)


def test_too_few_carry_bits_give_a_witness():
    hs = hyps("volta", "volta", ["carry_bits=1"])
    out = run_diff(hs, 4, Domain(), timeout=120)
    assert_replays(out, hs, 4)


def test_the_witness_lies_in_the_domain():
    hs = hyps("volta", "ampere")
    dom = make_domain(signs="positive", exp_range="-4:4", nonzero="2", c="positive")
    out = run_diff(hs, 8, dom, timeout=120)
    assert_replays(out, hs, 8)
    fin = hs[0].params.fin
    v = out.vector
    assert all(x >> 15 == 0 for x in v.a + v.b) and v.c >> 31 == 0 and v.c != 0
    assert sum(1 for x, y in zip(v.a, v.b) if x and y) == 2
    for x in v.a + v.b:
        if x:
            assert -4 <= max(fin.fields(x)[1], 1) - fin.bias <= 4


def test_three_hypotheses_give_a_vector_that_separates_some_pair(tmp_path):
    """The shape issue 4 builds on: N hypotheses, a result file holding all."""
    hs = hyps("volta", "volta", ["carry_bits=1"]) + [
        Hypothesis("C", choose("volta", overrides=["align_bits=1"]))]
    out = run_diff(hs, 4, Domain(), timeout=120, pairs=[(0, 1), (0, 2)])
    assert out.verdict == "sat"
    outs = outputs(out.vector, hs)
    assert outs["A"] != outs["B"] or outs["A"] != outs["C"]
    query = {"kind": "test", "description": "three hypotheses", "k": 4, "domain": Domain().describe(),
             "command": ""}
    doc = results.make_result(query, hs, [out.vector], "sat", results.run_record(1.0))
    assert len(doc["hypotheses"]) == 3 and doc["vectors"][0]["separates"]
    results.write_result(tmp_path / "n.json", doc)
    assert results.replay(tmp_path / "n.json").ok


def test_identical_models_fold_to_false():
    hs = hyps("hopper", "blackwell")
    forms = formulations(hs, 16, Domain())
    assert [t for t, _ in forms] == [FULL] and forms[0][1].trivially_unsat
    other = formulations(hyps("volta", "ampere"), 8, Domain())
    assert [t for t, _ in other] == ["support-1", "support-2", FULL]


def test_support_positions_spread_and_keep_the_last():
    assert support_positions(8, 1) == (7,)
    assert support_positions(8, 2) == (0, 7)
    assert support_positions(16, 4) == (0, 5, 10, 15)
    assert support_positions(3, 5) == (0, 1, 2)


def test_a_witness_that_does_not_replay_is_refused():
    hs = hyps("volta", "ampere")
    one, minus = 0x3C00, 0xBF7FFFFF            # a = [1], b = [1], c = -(1 - 2^-24)
    good = {"a0": one, "b0": one, "c": minus}
    d = [dot_bits(h.params, [one], [one], minus) for h in hs]
    assert replayed_witness({**good, "d0": d[0], "d1": d[1]}, hs, 1, Domain()).c == minus
    with pytest.raises(WitnessError, match="concrete model gives"):
        replayed_witness({**good, "d0": d[0] ^ 1, "d1": d[1]}, hs, 1, Domain())
    with pytest.raises(WitnessError, match="separates none of the pairs"):
        replayed_witness({"a0": one, "b0": one, "c": 0}, hs, 1, Domain())
    with pytest.raises(WitnessError, match="outside the domain"):
        replayed_witness({**good, "a0": 0x7C00}, hs, 1, Domain())


# ---------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------

def invoke(cmd, args, tmp_path):
    return run([cmd, *args, "--output", str(tmp_path / "r.json")])


def test_diff_command_prints_replayed_inputs_and_writes_the_result(tmp_path):
    r = invoke("diff", ["volta", "ampere"], tmp_path)
    assert r.exit_code == 0, r.output
    assert "differ" in r.output and "volta-fp16-fp32" in r.output and "ampere-fp16-fp32" in r.output
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["verdict"] == "sat" and doc["query"]["k"] == 8
    assert set(doc["vectors"][0]["outputs"]) == {"volta-fp16-fp32", "ampere-fp16-fp32"}
    assert doc["query"]["command"].startswith("tcsmt diff volta ampere")
    assert results.replay(tmp_path / "r.json").ok


@two_solvers
def test_equiv_command_proves_with_cross_check(tmp_path):
    r = invoke("equiv", ["volta", "--set-b", "carry_bits=8", "--k", "2", "--cross-check"], tmp_path)
    assert r.exit_code == 0, r.output
    assert "agree on every input" in r.output and "[carry_bits=8]" in r.output
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["verdict"] == "unsat" and doc["proof"]["cross_checked"] and doc["vectors"] == []
    r = invoke("diff", ["volta", "--set-b", "carry_bits=8", "--k", "2", "--force"], tmp_path)
    assert r.exit_code == 1


def test_equiv_command_shows_a_counterexample(tmp_path):
    r = invoke("equiv", ["volta", "ampere"], tmp_path)
    assert r.exit_code == 1 and "differ" in r.output


@pytest.mark.parametrize("args, message", [
    (["volta", "ampere-bf16-fp32"], "different input formats"),
    (["volta", "nosuch"], "unknown architecture"),
    (["volta", "--set-b", "carry_bits=3", "--set-b", "carry_bits=4"], "conflicting overrides"),
    (["volta", "--set", "carry_bits=3", "--set-b", "carry_bits=4"], "conflicting overrides"),
    (["volta", "--set-a", "block_size=0"], "block_size"),
    (["volta", "ampere", "--nonzero", "9"], "domain is empty"),
    (["volta", "ampere", "--exp-range", "5:1"], "lower end is above"),
    (["volta", "ampere", "--formats", "e4m3:fp16"], "no model for formats"),
])
def test_bad_input_is_one_line_exit_2_and_no_file(args, message, tmp_path):
    r = invoke("diff", args, tmp_path)
    assert r.exit_code == 2, r.output
    assert message in r.output and r.output.count("\n") == 1
    assert not (tmp_path / "r.json").exists()


def test_a_timeout_is_one_line_and_no_file(tmp_path):
    r = invoke("equiv", ["volta", "--set-b", "carry_bits=8", "--solver", "z3", "--timeout", "0.5"],
               tmp_path)
    assert r.exit_code == 2 and "no answer within 0.5 s" in r.output
    assert not (tmp_path / "r.json").exists()
    assert not multiprocessing.active_children()


def test_a_missing_solver_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(service.SOLVERS, "z3", ("no_such_solver_package_here", "x"))
    r = invoke("diff", ["volta", "ampere", "--solver", "z3"], tmp_path)
    assert r.exit_code == 2 and "z3 is not installed (pip install z3-solver)" in r.output
