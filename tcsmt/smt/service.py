"""Solving as a service: formulas in, answers out, every solver in its own process.

A query never touches a solver API. It builds a ``Formula`` (SMT-LIB text,
see ``tcsmt.smt.smtlib``) and asks:

    answer = solve(formula, solver="portfolio", timeout=DEFAULT_TIMEOUT, cross_check=False)

``answer.status`` is a value, never an exception: "sat" (with
``answer.values``, the inputs' values as ints), "unsat" (with
``answer.proved_by``), "unknown" (with ``answer.reason``: a timeout, or a
solver that gave up) or "error" (a crash, or solvers that disagree).

Every solver runs in a worker process (``fork`` where the platform has it:
the parent imports no solver, the child imports its backend and solver, so
starting one costs a few tens of milliseconds). A crash or a hang cannot take
the run down: the parent waits on pipes and kills what outlives the timeout.
The portfolio runs every installed solver at once; the first definitive
answer wins and the others are terminated. With ``--emit-smt2`` every
formula a solver starts on is written as it is (tcsmt.smt.emit). ``race``
is the general form: any jobs (formula, solver), several formulas at once,
a formula settled by its first definitive answer, a callback that decides
when the whole race is won.

A solver that is not installed is skipped in the portfolio with a note, and
is a one-line UserError when asked for by name.
"""

from __future__ import annotations

import importlib
import importlib.util
import multiprocessing as mp
import os
import signal
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import wait

from tcsmt.enums import Status
from tcsmt.errors import SolverMissing, UserError
from tcsmt.processes import STOPPING, die_with_parent
from tcsmt.smt import emit
from tcsmt.smt.smtlib import Formula

SOLVERS = {
    "bitwuzla": ("bitwuzla", "tcsmt.smt.backend_bitwuzla"),
    "boolector": ("pyboolector", "tcsmt.smt.backend_boolector"),
    "cvc5": ("cvc5", "tcsmt.smt.backend_cvc5"),
    "z3": ("z3", "tcsmt.smt.backend_z3"),
}
"""Solver name -> (the Python package it needs, the backend module that
drives it). A backend has ``check(text, inputs, timeout_s) -> dict``."""
PORTFOLIO = ("bitwuzla", "cvc5", "z3")
"""The solvers "portfolio" runs (those installed). Boolector is asked by
name (``--solver boolector``), and by the carry-bit proof
(tcsmt.search.prove), whose sums of many aligned products it settles in
seconds where Z3 and cvc5 give nothing in minutes."""
PIP_NAMES = {"z3": "z3-solver", "boolector": "pyboolector"}
DEFAULT_TIMEOUT = 60.0


@dataclass
class Run:
    """One solver's work on one formula (``tag`` names the formula)."""
    solver: str
    status: Status
    reason: str = ""
    seconds: float = 0.0   # wall clock, process start to answer
    version: str = ""
    values: dict[str, int] = field(default_factory=dict)
    tag: str = ""
    cpu: float = 0.0       # CPU seconds of the solver's process (not in the summary)

    def summary(self) -> dict:
        d = {"solver": self.solver, "status": self.status, "seconds": round(self.seconds, 3)}
        if self.version:
            d["version"] = self.version
        if self.reason:
            d["reason"] = self.reason
        if self.tag:
            d["formula"] = self.tag
        return d


@dataclass
class Answer:
    """The outcome of ``solve``: a status with its reason, the winning run,
    and every run (the losers stopped, timed out or crashed)."""
    status: str
    reason: str
    runs: list[Run]
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def winner(self) -> Run | None:
        return next((r for r in self.runs if r.status == self.status), None)

    @property
    def solver(self) -> str:
        return self.winner.solver if self.winner else ""

    @property
    def version(self) -> str:
        return self.winner.version if self.winner else ""

    @property
    def values(self) -> dict[str, int]:
        w = self.winner
        return w.values if w is not None and self.status == Status.SAT else {}

    @property
    def proved_by(self) -> list[str]:
        if self.status != Status.UNSAT:
            return []
        return [r.solver for r in self.runs if r.status == Status.UNSAT]


# ---------------------------------------------------------------------------
# Which solvers
# ---------------------------------------------------------------------------

def installed(name: str) -> bool:
    """Whether a solver's package can be imported (checked without importing it)."""
    return importlib.util.find_spec(SOLVERS[name][0]) is not None


def available_solvers() -> list[str]:
    return [s for s in SOLVERS if installed(s)]


def choose_solvers(choice: str) -> tuple[list[str], list[str]]:
    """(solvers to run, notes) for a --solver value: one name or "portfolio"."""
    if choice == "portfolio":
        names = [s for s in available_solvers() if s in PORTFOLIO]
        notes = [f"{s} is not installed: left out of the portfolio" for s in PORTFOLIO if s not in names]
        if not names:
            raise SolverMissing("no SMT solver is installed (pip install bitwuzla cvc5 z3-solver)")
        return names, notes
    if choice not in SOLVERS:
        raise UserError(f"unknown solver {choice!r} (known: {', '.join(SOLVERS)}, portfolio)")
    if not installed(choice):
        raise SolverMissing(f"solver {choice} is not installed (pip install {_pip_name(choice)})")
    return [choice], []


def _pip_name(name: str) -> str:
    return PIP_NAMES.get(name, SOLVERS[name][0])


# ---------------------------------------------------------------------------
# Worker processes
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Job:
    """One solver on one formula; ``tag`` names the formula, ``budget`` caps
    this job's CPU seconds (the race's timeout caps every job's wall time)."""
    formula: Formula
    solver: str
    tag: str = ""
    budget: float | None = None


def _context():
    methods = mp.get_all_start_methods()
    return mp.get_context("fork" if "fork" in methods else "spawn")


def _worker(conn, solver: str, module: str, text: str, inputs: dict[str, int],
            timeout: float | None, parent: int | None = None) -> None:
    """In the child: import the backend (and with it the solver), check, send
    back a dict. Never raises: failures travel as status "error". SIGTERM
    ends it at once, wherever the solver is (the command line's own
    handler, inherited through fork, would wait for Python code). Ctrl-C
    is the parent's to handle (it stops every job): the child ignores
    SIGINT. Both signals are held back from the fork until the child has
    set them (``_Active``): the parent stopping a job it has just started
    (after a Ctrl-C) sent SIGTERM to a child still in multiprocessing's
    start-up, whose inherited handler then printed a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, set(STOPPING))
    die_with_parent(parent=parent)
    try:
        backend = importlib.import_module(module)
        out = backend.check(text, inputs, timeout)
    except ImportError as e:
        out = {"status": Status.ERROR, "reason": f"{solver} cannot be imported: {e}"}
    except BaseException as e:  # noqa: BLE001 - everything must reach the parent
        out = {"status": Status.ERROR, "reason": f"{solver} failed: {type(e).__name__}: {e}"}
    try:
        conn.send(out)
    finally:
        conn.close()


class _Active:
    """A started job: its process, its pipe, when it started."""

    def __init__(self, job: Job, timeout: float):
        ctx = _context()
        self.job = job
        self.start = time.monotonic()
        recv, send = ctx.Pipe(duplex=False)
        self.conn = recv
        self.proc = ctx.Process(target=_worker, daemon=True,
                                args=(send, job.solver, SOLVERS[job.solver][1], job.formula.text,
                                      job.formula.inputs, timeout, os.getpid()))
        held = signal.pthread_sigmask(signal.SIG_BLOCK, set(STOPPING))
        try:
            self.proc.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        send.close()

    def cpu_seconds(self) -> float:
        """CPU time the worker has used (Linux /proc); wall time elsewhere."""
        try:
            with open(f"/proc/{self.proc.pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / _TICKS
        except (OSError, IndexError, ValueError):
            return time.monotonic() - self.start

    def over_budget(self) -> bool:
        return self.job.budget is not None and self.cpu_seconds() > self.job.budget

    def collect(self) -> Run:
        """The run's answer (its pipe is ready: an answer, or the end of a crash)."""
        cpu = 0.0
        try:
            out = self.conn.recv()
            cpu = self.cpu_seconds()
        except (EOFError, OSError):
            self.proc.join(1.0)
            out = {"status": Status.ERROR,
                   "reason": f"{self.job.solver} crashed ({_exit_text(self.proc.exitcode)})"}
        self.stop()
        return Run(self.job.solver, Status(out.get("status", Status.ERROR)), out.get("reason", ""),
                   time.monotonic() - self.start, out.get("version", ""),
                   out.get("values", {}), self.job.tag, cpu)

    def stop(self) -> None:
        """Terminate the process (SIGTERM, then SIGKILL)."""
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(0.5)
            if self.proc.is_alive():
                self.proc.kill()
                self.proc.join()
        else:
            self.proc.join()
        self.conn.close()

    def stopped(self, status: Status, reason: str) -> Run:
        """Stop the process; the Run that records why."""
        self.stop()
        return Run(self.job.solver, status, reason, time.monotonic() - self.start, tag=self.job.tag)


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _exit_text(code: int | None) -> str:
    if code is None:
        return "no exit status"
    if code < 0:
        return f"killed by signal {-code}"
    return f"exit code {code}"


# ---------------------------------------------------------------------------
# Races
# ---------------------------------------------------------------------------

POLL = 0.05        # seconds between checks of the jobs' CPU budgets


def default_parallel() -> int:
    return max(3, os.cpu_count() or 1)


def race(jobs: list[Job], timeout: float, stop: Callable[[Run], bool] | None = None,
         unsat_votes: int | dict[str, int] = 1, parallel: int | None = None) -> list[Run]:
    """Run jobs in worker processes, at most ``parallel`` at once, started in
    the given order. A formula (by tag) is settled by its first "sat" or by
    ``unsat_votes`` "unsat" answers (a number, or one per tag, 1 for a tag
    not named); its other jobs are then stopped. For
    each settling run, ``stop(run)`` may end the whole race (default: the
    first settled formula ends it). A job with a ``budget`` is stopped when
    its worker has used that many CPU seconds. Returns every job's Run: jobs
    cut short are "stopped", jobs past a budget or the timeout "unknown"."""
    r = _Race(jobs, timeout, stop or (lambda run: True), unsat_votes, parallel or default_parallel())
    try:
        r.run()
    finally:
        for a in r.active:
            a.stop()
    emit.answered({j.formula.sha256: (j.tag, j.formula) for j in jobs}, r.runs)
    return r.runs


class _Race:
    def __init__(self, jobs, timeout, stop, unsat_votes, parallel):
        self.pending, self.active, self.runs = deque(jobs), [], []
        self.timeout, self.stop, self.votes_needed, self.parallel = timeout, stop, unsat_votes, parallel
        self.deadline = time.monotonic() + timeout
        self.settled: set[str] = set()
        self.votes: dict[str, int] = {}

    def run(self) -> None:
        while self.pending or self.active:
            self.fill()
            if not self.active:
                return
            budgets = any(a.job.budget is not None for a in self.active)
            left = max(0.0, self.deadline - time.monotonic())
            ready = wait([a.conn for a in self.active], timeout=min(left, POLL) if budgets else left)
            for a in [a for a in self.active if a.conn in ready]:
                if a not in self.active:        # stopped when an earlier answer settled its formula
                    continue
                self.active.remove(a)
                if self.answer(a.collect()):
                    return self.end(Status.STOPPED, "another answer came first")
            if time.monotonic() >= self.deadline:
                return self.end(Status.UNKNOWN, f"timeout after {self.timeout:g} s")
            self.expire_budgets()

    def fill(self) -> None:
        while self.pending and len(self.active) < self.parallel:
            job = self.pending.popleft()
            if job.tag in self.settled:
                self.runs.append(_not_run(job, Status.STOPPED, "formula already settled"))
            else:
                emit.started(job.formula)          # --emit-smt2: the text, before any answer
                self.active.append(_Active(job, max(0.1, self.deadline - time.monotonic())))

    def answer(self, run: Run) -> bool:
        """Record a run; whether it ends the race."""
        self.runs.append(run)
        if not _settles(run, self.votes, self.votes_needed):
            return False
        self.settled.add(run.tag)
        for a in [a for a in self.active if a.job.tag == run.tag]:
            self.active.remove(a)
            self.runs.append(a.stopped(Status.STOPPED, "formula already settled"))
        return self.stop(run)

    def expire_budgets(self) -> None:
        for a in [a for a in self.active if a.over_budget()]:
            self.active.remove(a)
            self.runs.append(a.stopped(Status.UNKNOWN, f"gave up after its budget of {a.job.budget:g} CPU s"))

    def end(self, status: Status, reason: str) -> None:
        self.runs += [a.stopped(status, reason) for a in self.active]
        self.runs += [_not_run(j, status, reason) for j in self.pending]
        self.active.clear()
        self.pending.clear()


def _settles(run: Run, votes: dict[str, int], unsat_votes: int | dict[str, int]) -> bool:
    if run.status == Status.SAT:
        return True
    if run.status == Status.UNSAT:
        votes[run.tag] = votes.get(run.tag, 0) + 1
        need = unsat_votes.get(run.tag, 1) if isinstance(unsat_votes, dict) else unsat_votes
        return votes[run.tag] >= need
    return False


def _not_run(job: Job, status: Status, reason: str) -> Run:
    return Run(job.solver, status, reason, 0.0, tag=job.tag)


# ---------------------------------------------------------------------------
# One formula
# ---------------------------------------------------------------------------

def solve(formula: Formula, solver: str = "portfolio", timeout: float = DEFAULT_TIMEOUT,
          cross_check: bool = False) -> Answer:
    """Satisfiability of one formula. ``solver`` is a name or "portfolio";
    ``cross_check`` re-proves an UNSAT answer with a second solver (both are
    in ``answer.proved_by``)."""
    names, notes = choose_solvers(solver)
    t0 = time.monotonic()
    votes = 2 if cross_check and len(names) > 1 else 1
    runs = race([Job(formula, s) for s in names], timeout, unsat_votes=votes)
    if cross_check and len(names) == 1 and runs[0].status == Status.UNSAT:
        runs += confirm_unsat(formula, names, timeout - (time.monotonic() - t0))
    answer = verdict(runs, cross_check)
    answer.notes += notes
    answer.seconds = time.monotonic() - t0
    return answer


def confirm_unsat(formula: Formula, done: list[str], timeout: float, tag: str = "") -> list[Run]:
    """Ask the installed solvers not in ``done`` until one more proves the
    formula unsat (a cross-check)."""
    others = [s for s in available_solvers() if s not in done]
    if not others or timeout <= 0:
        return []
    return race([Job(formula, s, tag) for s in others], timeout)


def verdict(runs: list[Run], cross_check: bool = False) -> Answer:
    """The answer the runs of one formula give together."""
    sat = [r for r in runs if r.status == Status.SAT]
    unsat = [r for r in runs if r.status == Status.UNSAT]
    if sat and unsat:
        return Answer(Status.ERROR, "solvers disagree: " + ", ".join(
            f"{r.solver} {r.status}" for r in sat + unsat), runs)
    if sat:
        return Answer(Status.SAT, "", runs)
    if unsat:
        notes = []
        if cross_check and len(unsat) < 2:
            others = [f"{r.solver}: {r.status} {r.reason}".strip() for r in runs if r.status != Status.UNSAT]
            notes.append("cross-check: no second solver proved it ("
                         + ("; ".join(others) or "no other solver installed") + ")")
        return Answer(Status.UNSAT, "", runs, notes)
    errors = [r for r in runs if r.status == Status.ERROR]
    if errors and len(errors) == len([r for r in runs if r.status != Status.STOPPED]):
        return Answer(Status.ERROR, "; ".join(r.reason for r in errors), runs)
    reasons = sorted({r.reason for r in runs if r.reason})
    return Answer(Status.UNKNOWN, "; ".join(reasons) or "no answer", runs)
