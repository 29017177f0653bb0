"""Solving as a service: real solvers in worker processes, the portfolio,
cross-checks, timeouts, budgets, crashes and missing solvers."""

from __future__ import annotations

import multiprocessing
import time

import pytest

from tcsmt.errors import UserError
from tcsmt.smt import service
from tcsmt.smt.service import Job, Run, race, solve, verdict
from tcsmt.smt.smtlib import Formula, build_formula

INSTALLED = service.available_solvers()


def need(*solvers: str) -> None:
    missing = [s for s in solvers if s not in INSTALLED]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")


def factor_15(I):
    x, y = I.var("x", 8), I.var("y", 8)
    return [I.eq(I.mul(x, y), I.const(15, 8)), I.ult(I.const(1, 8), x), I.ult(x, I.const(15, 8)),
            I.ult(y, I.const(16, 8))]


def empty_interval(I):
    x = I.var("x", 8)
    return [I.ult(x, I.const(3, 8)), I.ult(I.const(5, 8), x)]


def hard_factoring(I):
    """A 62-bit semiprime as a product of two 31-bit factors (no overflow):
    far beyond a second of any solver."""
    p, q = 1101904333, 1523545981
    x, y = I.var("x", 62), I.var("y", 62)
    one = I.const(1, 62)
    small = I.const(1 << 31, 62)
    return [I.eq(I.mul(x, y), I.const(p * q, 62)), I.ult(one, x), I.ult(one, y),
            I.ult(x, small), I.ult(y, small)]


@pytest.mark.parametrize("solver", list(service.SOLVERS))
def test_each_solver_answers_sat_with_values_and_unsat(solver):
    need(solver)
    a = solve(build_formula(factor_15), solver, timeout=30)
    assert a.status == "sat" and a.solver == solver and a.version
    x, y = a.values["x"], a.values["y"]
    assert (x * y) % 256 == 15 and 1 < x < 15 and y < 16
    b = solve(build_formula(empty_interval), solver, timeout=30)
    assert b.status == "unsat" and b.proved_by == [solver]


def test_portfolio_first_answer_wins_and_the_others_stop():
    need("bitwuzla", "z3")
    a = solve(build_formula(factor_15), "portfolio", timeout=30)
    assert a.status == "sat"
    assert sorted(r.solver for r in a.runs) == sorted(s for s in INSTALLED if s in service.PORTFOLIO)
    assert {r.status for r in a.runs} <= {"sat", "stopped"}
    assert not multiprocessing.active_children()


def test_cross_check_records_two_solvers():
    need("bitwuzla", "z3")
    a = solve(build_formula(empty_interval), "portfolio", timeout=30, cross_check=True)
    assert a.status == "unsat" and len(set(a.proved_by)) == 2
    b = solve(build_formula(empty_interval), "z3", timeout=30, cross_check=True)
    assert b.proved_by[0] == "z3" and len(set(b.proved_by)) == 2


def test_a_hang_is_killed_at_the_timeout():
    need("bitwuzla")
    t0 = time.monotonic()
    a = solve(build_formula(hard_factoring), "portfolio", timeout=1.0)
    assert a.status == "unknown" and "timeout" in a.reason
    assert time.monotonic() - t0 < 4.0
    assert not multiprocessing.active_children()


def test_a_budget_stops_one_job_and_not_the_race():
    need("bitwuzla")
    hard, easy = build_formula(hard_factoring), build_formula(factor_15)
    runs = race([Job(hard, "bitwuzla", "hard", budget=0.3), Job(easy, "bitwuzla", "easy")],
                timeout=30, stop=lambda r: r.tag == "easy", parallel=1)
    by_tag = {r.tag: r for r in runs}
    assert by_tag["hard"].status == "unknown" and "budget" in by_tag["hard"].reason
    assert by_tag["easy"].status == "sat"


def test_a_crash_is_an_error_not_a_crash_of_the_run(monkeypatch):
    monkeypatch.setitem(service.SOLVERS, "crasher", ("os", "smt_crash_backend"))
    a = solve(build_formula(factor_15), "crasher", timeout=10)
    assert a.status == "error" and "crashed" in a.reason and "signal" in a.reason


def test_malformed_text_is_an_error_with_the_solvers_reason():
    need("bitwuzla")
    a = solve(Formula("(assert (bvadd x))\n", {"x": 4}), "bitwuzla", timeout=10)
    assert a.status == "error" and "bitwuzla failed" in a.reason


def test_a_missing_solver_is_a_user_error_or_left_out(monkeypatch):
    monkeypatch.setitem(service.SOLVERS, "yices", ("no_such_solver_package_here", "x"))
    monkeypatch.setattr(service, "PORTFOLIO", (*service.PORTFOLIO, "yices"))
    with pytest.raises(UserError, match="yices is not installed"):
        solve(build_formula(factor_15), "yices")
    names, notes = service.choose_solvers("portfolio")
    assert "yices" not in names and any("yices is not installed" in n for n in notes)
    with pytest.raises(UserError, match="unknown solver"):
        service.choose_solvers("mathsat")


def test_verdict_of_disagreeing_solvers_is_an_error():
    runs = [Run("z3", "sat", values={"x": 1}), Run("cvc5", "unsat")]
    assert verdict(runs).status == "error"
    assert verdict([Run("z3", "unknown", "gave up"), Run("cvc5", "stopped")]).status == "unknown"
    assert verdict([Run("z3", "error", "boom")]).status == "error"


def test_races_one_after_another_each_answer():
    """Five races in a row each start a worker, import the backend and its
    solver, and answer (how long that takes is benchmarks/bench_diff.py's
    business, not a test's)."""
    need("bitwuzla")
    f = build_formula(factor_15)
    for _ in range(5):
        runs = race([Job(f, "bitwuzla")], 30)
        assert [r.status for r in runs] == ["sat"], runs


def test_boolector_is_asked_by_name_not_by_the_portfolio_and_named_where_it_answered():
    """The portfolio is Bitwuzla, cvc5 and Z3; a result file names
    Boolector's version only when Boolector proved or found something in it."""
    from importlib import metadata

    from tcsmt.report.results import answered, solver_versions
    need("boolector")
    assert "boolector" not in service.choose_solvers("portfolio")[0]
    assert service.choose_solvers("boolector")[0] == ["boolector"]
    assert "boolector" not in solver_versions(answered({"proved_by": ["bitwuzla", "z3"], "solver": {}}))
    used = answered({"proved_by": ["bitwuzla", "boolector"], "solver": {"name": "bitwuzla"}})
    assert solver_versions(used)["boolector"] == metadata.version("pyboolector")
