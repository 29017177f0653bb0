"""--emit-smt2: every command that asks a solver writes the exact queries it
solves, one SMT-LIB file per query, and another solver, reading a file as
it is, gives the verdict the first one gave.

For each command one query is solved again: the smallest emitted file with
a definitive answer, by an installed solver that did not give that answer
(its SMT-LIB parser reads the file's text; no formula of tcsmt's own)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from cli_run import tcsmt

import tcsmt as api
from tcsmt.smt import service
from tcsmt.smt.smtlib import Formula

PREFERENCE = ["bitwuzla", "boolector", "z3", "cvc5"]
RESOLVE_TIMEOUT = 120.0

pytestmark = pytest.mark.skipif(len(service.available_solvers()) < 2,
                                reason="needs two SMT solvers installed")


def index(target: Path) -> list[dict]:
    path = target.with_name(f"{target.stem}.index.jsonl") if target.suffix == ".smt2" \
        else target / "index.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def solve_again(target: Path) -> tuple[str, str, str]:
    """(verdict first given, by whom, the other solver): the emitted query
    answered fastest (sat or unsat), solved again by a solver that did not
    give that answer; asserts the verdicts agree."""
    folder = target.parent if target.suffix == ".smt2" else target
    answered = [(e, s, v) for e in index(target) for s, v in e["answers"].items() if v in ("sat", "unsat")]
    assert answered, "no emitted query has a definitive answer"
    entry, first, verdict = min(answered, key=lambda t: t[0]["seconds"][t[1]])
    text = (folder / entry["file"]).read_text()
    assert hashlib.sha256(text.encode()).hexdigest() == entry["sha256"]
    gave = {s for s, v in entry["answers"].items() if v == verdict}
    other = next(s for s in PREFERENCE if s in service.available_solvers() and s not in gave) \
        if gave != set(service.available_solvers()) else next(s for s in PREFERENCE if s != first)
    [run] = service.race([service.Job(Formula(text), other)], RESOLVE_TIMEOUT)
    assert run.status == verdict, f"{entry['file']}: {first} said {verdict}, {other} {run.status}"
    return verdict, first, other


def test_find_writes_its_queries(tmp_path):
    out = tmp_path / "q"
    doc = api.find("final-rounding", "volta", pool=False, emit_smt2=out, command="")
    assert doc["verdict"] == "sat"
    files = sorted(p.name for p in out.glob("*.smt2"))
    assert files and files[0] == "query-0001.smt2" and len(files) == len(index(out))
    assert doc["run"]["smt2_sha256"] in {e["sha256"] for e in index(out)}
    solve_again(out)


def test_monotonicity_writes_its_queries(tmp_path):
    out = tmp_path / "q"
    doc = api.find("monotonicity", "volta", pool=False, emit_smt2=out, command="")
    assert doc["verdict"] == "sat"
    solve_again(out)


def test_prove_carry_bits_writes_its_lemmas(tmp_path):
    out = tmp_path / "q"
    doc = api.prove_carry_bits("volta", emit_smt2=out, command="")
    assert doc["verdict"] == "unsat"
    # the lemma that proves the fewest is among the files, as the result names it
    assert doc["run"]["smt2_sha256"] in {e["sha256"] for e in index(out)}
    verdict, _, _ = solve_again(out)
    assert verdict in ("sat", "unsat")


def test_diff_and_equiv_write_their_queries_to_a_file(tmp_path):
    smt = tmp_path / "diff.smt2"
    doc = api.diff("volta", set_b=["carry_bits=8"], k=1, emit_smt2=smt, command="")
    assert doc["verdict"] == "unsat" and smt.exists()
    assert solve_again(smt)[0] == "unsat"
    smt = tmp_path / "equiv.smt2"
    doc = api.equiv("volta", set_b=["carry_bits=8"], k=1, emit_smt2=smt, command="")
    assert doc["verdict"] == "unsat"
    assert [e["file"] for e in index(smt)][0] == "equiv.smt2"
    assert solve_again(smt)[0] == "unsat"


def test_compare_algorithms_writes_its_queries(tmp_path):
    """RDNA3 at k = 4: Bitwuzla finds a witness of a restricted formula in
    seconds and Boolector reads it back in about as long (Z3 and cvc5 give
    nothing in 120 s on it). Without the candidate search, which answers
    before any query is written."""
    out = tmp_path / "q"
    doc = api.compare_algorithms("rdna3", 4, emit_smt2=out, command="", timeout=280, pool=False)
    assert doc["verdict"] == "sat"
    solve_again(out)


def test_plan_writes_its_queries(tmp_path):
    """Pairs of hypotheses that compute one function with two circuits (a
    floor no fp16 product reaches): nothing splits them, so the solvers'
    search and the sweeping proof ask queries, every one written."""
    space = tmp_path / "space.toml"
    space.write_text('base = "volta-fp16-fp32"\n[axes]\nmin_exponent = ["none", -126]\n'
                     'final_rounding = ["rz", "rd"]\n')
    out = tmp_path / "q"
    code, _, _ = tcsmt(["plan", "--space", space, "-o", tmp_path / "plan.json", "--candidates", "8",
                        "--instruction", "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32",
                        "--solver-budget", "60", "--emit-smt2", out])
    assert code == 0
    solve_again(out)


def test_cli_says_where_the_queries_went(tmp_path, capsys):
    out = tmp_path / "q"
    code, _, err = tcsmt(["prove", "carry-bits", "--arch", "volta", "-o", tmp_path / "p.json",
                          "--emit-smt2", out], capsys)
    assert code == 0
    n = len({e["file"] for e in index(out)})
    assert f"{n} SMT-LIB queries written to {out}" in err


def test_nothing_asked_nothing_written(tmp_path, capsys):
    """Identical circuits need no solver: no query, and the command says so."""
    out = tmp_path / "q"
    code, _, err = tcsmt(["diff", "hopper", "blackwell", "-o", tmp_path / "d.json", "--emit-smt2", out],
                         capsys)
    assert code == 1 and "0 SMT-LIB queries written" in err and not list(out.glob("*.smt2"))
