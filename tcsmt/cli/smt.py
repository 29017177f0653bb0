"""Commands on the SMT side: diff, equiv, replay.

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

import re
import sys

import click

from tcsmt import api
from tcsmt.cli import options
from tcsmt.cli.show import print_separation
from tcsmt.enums import Verdict
from tcsmt.report.results import ReplayReport, write_result


def _query(f):
    f = options.output("results/KIND/A--B.json")(f)
    f = click.option("--emit-smt2", type=click.Path(dir_okay=False),
                     help="Write the SMT-LIB query to this file (before solving).")(f)
    f = options.domain(f)
    f = options.solver()(f)
    f = click.option("--k", type=click.IntRange(1, 256),
                     help="Products per dot product (default: the larger block size).")(f)
    f = click.option("--set-b", multiple=True, metavar="KEY=VALUE",
                     help="Override a parameter of MODEL_B.")(f)
    f = click.option("--set-a", multiple=True, metavar="KEY=VALUE",
                     help="Override a parameter of MODEL_A.")(f)
    f = click.option("--set", "set_both", multiple=True, metavar="KEY=VALUE",
                     help="Override a parameter of both models.")(f)
    f = click.option("--formats", help="IN:OUT format pair of both models (fp16:fp32, bf16:fp32...).")(f)
    f = click.argument("model_b", required=False)(f)
    return click.argument("model_a")(f)


def _default_out(kind: str, doc: dict) -> str:
    clean = lambda s: re.sub(r"[^A-Za-z0-9._=-]+", "_", s).strip("_")  # noqa: E731
    a, b = (h["label"] for h in doc["hypotheses"][:2])
    return f"results/{kind}/{clean(a)}--{clean(b)}.json"


def run_query(kind: str, o: dict) -> int:
    """diff or equiv: solve, write the result file, print; the exit status."""
    domain = options.domain_of(o)
    out = o.pop("output")
    doc = api.diff(o.pop("model_a"), o.pop("model_b"), domain=domain, kind=kind, **o)
    path = out or _default_out(kind, doc)
    write_result(path, doc)
    print_separation(doc, path)
    found = doc["verdict"] == Verdict.SAT
    return (0 if found else 1) if kind == "diff" else (1 if found else 0)


@click.command("diff")
@_query
def diff(**o):
    """Find inputs on which MODEL_A and MODEL_B return different bits.

    MODEL_B defaults to MODEL_A, so `tcsmt diff ampere --set-b carry_bits=3`
    compares a model with itself changed. The inputs found are replayed on
    both concrete models, printed and written to a result file (replay it
    with `tcsmt replay`). Exit status: 0 found, 1 proved there are none,
    2 no answer in time or bad input."""
    sys.exit(run_query("diff", o))


@click.command("equiv")
@_query
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
def replay(files):
    """Re-run every vector of result files through the concrete models.

    Each vector runs under every hypothesis the file names, with the
    parameters stored in the file. Exit status: 0 all outputs and
    separations match, 1 a disagreement, 2 an unreadable file."""
    reports = [api.replay(f) for f in files]
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
