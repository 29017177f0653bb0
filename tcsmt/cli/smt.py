"""CLI commands on the SMT side: diff, equiv, replay.

    tcsmt diff MODEL_A [MODEL_B] [--set-a K=V] [--set-b K=V] [--set K=V] ...
    tcsmt equiv MODEL_A [MODEL_B] ...
    tcsmt replay FILE.json [FILE.json ...]

A model is an architecture (``ampere``, with ``--formats fp16:fp32`` to pick
a format pair), a model name (``ampere-bf16-fp32``) or a model file.
MODEL_B defaults to MODEL_A, so one model against itself with a parameter
changed reads ``tcsmt diff ampere --set-b carry_bits=3``. ``--set``
applies to both models, ``--set-a`` / ``--set-b`` to one; two different
values for one key on one model are an error.

diff exits 0 when it found inputs that tell the models apart, 1 when it
proved there are none; equiv the other way round. No answer in time, bad
input or a missing solver: one line on stderr, exit 2, no file written.
"""

from __future__ import annotations

import functools
import re
import shlex
import sys
import time

import click
from rich.console import Console
from rich.table import Table

from tcsmt.errors import UserError
from tcsmt.fileio import write_text_atomic
from tcsmt.model.catalogue import resolve
from tcsmt.report import results
from tcsmt.report.results import ReplayReport, make_result, number, write_result
from tcsmt.search.diff import Outcome, WitnessError, check_comparable, default_k, formulations, run_diff
from tcsmt.search.domain import C_KINDS, SIGNS, Domain, make_domain
from tcsmt.search.vectors import Hypothesis, outputs
from tcsmt.smt.service import DEFAULT_TIMEOUT, SOLVERS

SOLVER_CHOICES = [*SOLVERS, "portfolio"]
INTERNAL_ERROR = 3


def _one_line_errors(f):
    """UserError -> 'error: ...' on stderr, exit 2; a witness that does not
    replay -> 'internal error: ...', exit 3 (nothing is written either way)."""
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        try:
            return f(*args, **kwargs)
        except UserError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(UserError.exit_code)
        except WitnessError as e:
            click.echo(f"internal error (nothing written): {e}", err=True)
            sys.exit(INTERNAL_ERROR)
    return wrapper


def _query_options(f):
    opts = [
        click.argument("model_a"),
        click.argument("model_b", required=False),
        click.option("--formats", help="IN:OUT format pair of both models (fp16:fp32, bf16:fp32...)."),
        click.option("--set", "set_both", multiple=True, metavar="KEY=VALUE",
                     help="Override a parameter of both models."),
        click.option("--set-a", multiple=True, metavar="KEY=VALUE", help="Override a parameter of MODEL_A."),
        click.option("--set-b", multiple=True, metavar="KEY=VALUE", help="Override a parameter of MODEL_B."),
        click.option("--k", type=click.IntRange(1, 256),
                     help="Products per dot product (default: the larger block size)."),
        click.option("--solver", type=click.Choice(SOLVER_CHOICES), default="portfolio", show_default=True),
        click.option("--timeout", type=click.FloatRange(0.1), default=DEFAULT_TIMEOUT, show_default=True,
                     metavar="SECONDS"),
        click.option("--cross-check", is_flag=True, help="Re-prove an UNSAT answer with a second solver."),
        click.option("--emit-smt2", type=click.Path(dir_okay=False),
                     help="Write the SMT-LIB query to this file."),
        click.option("-o", "--out", type=click.Path(dir_okay=False),
                     help="Result file (default results/KIND/A--B.json)."),
        click.option("--allow-specials", is_flag=True,
                     help="Allow infinities and NaNs as inputs (default: finite only)."),
        click.option("--no-subnormals", is_flag=True, help="No subnormal a, b or c."),
        click.option("--signs", type=click.Choice(SIGNS), default="any", show_default=True,
                     help="positive: every a_i, b_i and c has sign bit 0."),
        click.option("--c-sign", type=click.Choice(C_KINDS), default="any", show_default=True,
                     help="c is zero, positive or negative."),
        click.option("--exp-range", metavar="LO:HI", help="Unbiased exponents of the non-zero a_i, b_i."),
        click.option("--c-exp-range", metavar="LO:HI", help="Unbiased exponent of a non-zero c."),
        click.option("--nonzero", metavar="N|LO:HI", help="How many products have both factors non-zero."),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def _hypotheses(o: dict) -> list[Hypothesis]:
    spec_b = o["model_b"] or o["model_a"]
    sets_a = list(o["set_both"]) + list(o["set_a"])
    sets_b = list(o["set_both"]) + list(o["set_b"])
    pa = resolve(o["model_a"], o["formats"], sets_a)
    pb = resolve(spec_b, o["formats"], sets_b)
    check_comparable(pa, pb)
    return [Hypothesis("A", pa, _spec(o["model_a"], o["formats"], sets_a)),
            Hypothesis("B", pb, _spec(spec_b, o["formats"], sets_b))]


def _spec(model: str, formats: str | None, sets: list[str]) -> str:
    words = [model] + (["--formats", formats] if formats else [])
    for s in sets:
        words += ["--set", s]
    return shlex.join(words)


def _domain(o: dict) -> Domain:
    return make_domain(o["allow_specials"], o["no_subnormals"], o["signs"], o["exp_range"],
                       o["c_exp_range"], o["c_sign"], o["nonzero"])


def _default_out(kind: str, hyps: list[Hypothesis]) -> str:
    clean = lambda s: re.sub(r"[^A-Za-z0-9._=-]+", "_", s).strip("_")  # noqa: E731
    return f"results/{kind}/{clean(hyps[0].label)}--{clean(hyps[1].label)}.json"


def _command_line() -> str:
    """The command as typed, rebuilt from click's parameters (defaults left out)."""
    ctx = click.get_current_context()
    words = ctx.command_path.split()
    words = words if words[0] == "tcsmt" else ["tcsmt", *words[-1:]]
    for p in ctx.command.params:
        v = ctx.params.get(p.name)
        if isinstance(p, click.Argument):
            words += [v] if v else []
        elif getattr(p, "is_flag", False):
            words += [p.opts[0]] if v else []
        elif p.multiple:
            for x in v:
                words += [p.opts[0], x]
        elif v is not None and v != p.default:
            words += [p.opts[0], str(v)]
    return shlex.join(words)


def run_query(kind: str, o: dict) -> int:
    """diff or equiv: solve, print, write the result file; the exit code.
    The --emit-smt2 file is written before solving, so it is there to hand
    to another solver even when this one finds no answer."""
    t0 = time.monotonic()
    hyps = _hypotheses(o)
    k = o["k"] or default_k(hyps[0].params, hyps[1].params)
    domain = _domain(o)
    forms = formulations(hyps, k, domain, restrictions=kind == "diff")
    if o["emit_smt2"]:
        write_text_atomic(o["emit_smt2"], forms[-1][1].text)
    out = run_diff(hyps, k, domain, o["solver"], o["timeout"], o["cross_check"], forms)
    if out.verdict == "unknown":
        raise UserError(f"no answer within {o['timeout']:g} s ({out.reason}); "
                        "try a longer --timeout or another --solver")
    out.seconds = time.monotonic() - t0
    doc = _document(kind, hyps, k, domain, out)
    path = write_result(o["out"] or _default_out(kind, hyps), doc)
    _print(hyps, k, out, str(path))
    found = out.verdict == "sat"
    return (0 if found else 1) if kind == "diff" else (1 if found else 0)


def _document(kind: str, hyps, k: int, domain: Domain, out: Outcome) -> dict:
    w = out.winner
    query = {"kind": kind, "description": f"inputs on which {hyps[0].label} and {hyps[1].label} differ",
             "k": k, "domain": domain.describe(), "command": _command_line()}
    solver = {"name": w.solver, "version": w.version, "seconds": round(w.seconds, 3),
              "formula": out.tag, "runs": [r.summary() for r in out.runs], "notes": out.notes}
    return make_result(query, hyps, [out.vector] if out.vector else [], out.verdict, solver,
                       out.answered.sha256, out.seconds, out.proved_by)


def _print(hyps: list[Hypothesis], k: int, out: Outcome, path: str) -> None:
    con = Console(highlight=False, markup=False)
    a, b = hyps
    w = out.winner
    who = f"{w.solver} {w.version}, {out.seconds:.2f} s"
    if out.verdict == "unsat":
        proof = " and ".join(out.proved_by)
        con.print(f"{a.label} and {b.label} agree on every input of the domain (k={k}): "
                  f"proved by {proof} ({who})")
    else:
        con.print(f"{a.label} and {b.label} differ (k={k}; found by {who}, "
                  f"formula {out.tag}; replayed on the concrete model):")
        con.print(_vector_table(hyps, out))
    for note in out.notes:
        con.print(f"note: {note}")
    con.print(f"result written to {path}")


def _vector_table(hyps: list[Hypothesis], out: Outcome) -> Table:
    """The inputs, then c and d under each hypothesis (exact decimals, folded
    rather than cut when the terminal is narrow)."""
    p, vec = hyps[0].params, out.vector
    t = Table(show_header=True, header_style="bold")
    t.add_column("")
    for col in ("hex", "a", "hex", "b"):
        t.add_column(col, overflow="fold")
    for i, (x, y) in enumerate(zip(vec.a, vec.b)):
        na, nb = number(p.fin, x), number(p.fin, y)
        t.add_row(f"{i}", na["hex"], na["decimal"], nb["hex"], nb["decimal"])
    nc = number(p.fc, vec.c)
    t.add_row("c", nc["hex"], nc["decimal"], "", "", end_section=True)
    outs = outputs(vec, hyps)
    for h in hyps:
        nd = number(h.params.fout, outs[h.id])
        t.add_row(f"d {h.id}", nd["hex"], nd["decimal"], "", h.label)
    return t


@click.command("diff")
@_query_options
@_one_line_errors
def diff(**o):
    """Find inputs on which MODEL_A and MODEL_B return different bits.

    MODEL_B defaults to MODEL_A, so `tcsmt diff ampere --set-b carry_bits=3`
    compares a model with itself changed. The inputs found are replayed on
    both concrete models, printed and written to a result file (replay it
    with `tcsmt replay`). Exit status: 0 found, 1 proved there are none,
    2 no answer in time or bad input."""
    sys.exit(run_query("diff", o))


@click.command("equiv")
@_query_options
@_one_line_errors
def equiv(**o):
    """Prove that MODEL_A and MODEL_B agree on every input of the domain.

    The same question as diff, asked for a proof: only the full formula is
    solved (diff also races restricted ones that find inputs sooner). A
    proof (with --cross-check, by two solvers) is written to the result
    file; a counterexample is printed and written like diff's. Exit
    status: 0 proved, 1 counterexample, 2 no answer in time or bad input."""
    sys.exit(run_query("equiv", o))


@click.command("replay")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@_one_line_errors
def replay(files):
    """Re-run every vector of result files through the concrete models.

    Each vector runs under every hypothesis the file names, with the
    parameters stored in the file. Exit status: 0 all outputs and
    separations match, 1 a disagreement, 2 an unreadable file."""
    reports = [results.replay(f) for f in files]
    for r in reports:
        _print_report(r)
    sys.exit(0 if all(r.ok for r in reports) else 1)


def _print_report(r: ReplayReport) -> None:
    if r.ok:
        click.echo(f"{r.path}: {r.vectors} vector(s) x {r.hypotheses} hypotheses: "
                   f"all {r.checked} outputs match")
        return
    click.echo(f"{r.path}: {len(r.problems)} disagreement(s)")
    for p in r.problems:
        click.echo(f"  {p}")


COMMANDS = [diff, equiv, replay]
