"""Commands on the SMT side: diff, equiv, replay.

    tcsmt diff MODEL [MODEL...] [--set-a K=V] [--set-b K=V] [--set K=V] [--count N] ...
    tcsmt equiv MODEL_A [MODEL_B] ...
    tcsmt replay FILE.json [FILE.json ...]

A model is an architecture (``ampere``, with ``--formats fp16:fp32`` to pick
a format pair), a model name (``ampere-bf16-fp32``) or a model file.
One model is compared with itself, so one model against itself with a
parameter changed reads ``tcsmt diff ampere --set-b carry_bits=3``.
``--set`` applies to every model, ``--set-a`` / ``--set-b`` to the first /
second; two different values for one key on one model are an error.

diff exits 0 when it found inputs that tell the models apart, 1 when it
proved there are none; equiv the other way round. No answer in time, bad
input or a missing solver: one line on stderr, exit 2, no file written.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from tcsmt import api
from tcsmt.cli import options
from tcsmt.cli.show import print_separation
from tcsmt.enums import Verdict
from tcsmt.errors import AnswersLost, UserError


def _query(many: bool):
    def deco(f):
        f = options.output_format()(f)
        f = options.replace_answers(f)
        f = options.output("KIND-A--B.json, or -2, -3... when that exists")(f)
        f = options.emit_smt2(f)
        f = options.domain(f)
        f = options.solver()(f)
        if many:
            f = click.option("--count", type=click.IntRange(1, 100), default=1, show_default=True,
                             help="How many vectors: beyond the fewest that separate every pair, "
                                  "more, each with another c and other products.")(f)
        f = click.option("--k", type=click.IntRange(1, 256),
                         help="Products per dot product (default: the largest block size).")(f)
        f = click.option("--set-b", multiple=True, metavar="KEY=VALUE",
                         help="Override a parameter of the second model.")(f)
        f = click.option("--set-a", multiple=True, metavar="KEY=VALUE",
                         help="Override a parameter of the first model.")(f)
        f = click.option("--set", "set_both", multiple=True, metavar="KEY=VALUE",
                         help="Override a parameter of every model.")(f)
        f = click.option("--formats", help="IN:OUT format pair of every model (fp16:fp32, bf16:fp32...).")(f)
        if many:
            return click.argument("models", nargs=-1, required=True)(f)
        f = click.argument("model_b", required=False)(f)
        return click.argument("model_a")(f)
    return deco


def run_query(kind: str, o: dict) -> int:
    """diff or equiv: solve, write the result file, print; the exit status."""
    domain = options.domain_of(o)
    out, force, out_format, wide = o.pop("output"), o.pop("force"), o.pop("out_format"), o.pop("wide")
    replace = o.pop("replace_answers")
    if out and Path(out).exists() and not force:          # before any work
        raise UserError(f"{out} exists: --force replaces it, or choose another -o")
    if kind == "diff":
        doc = api.diff(*o.pop("models"), domain=domain, **o)
    else:
        doc = api.equiv(o.pop("model_a"), o.pop("model_b"), domain=domain, **o)
    path = api.comparison_path(kind, doc, out, force)
    try:
        api.write(path, doc, replace)
    except (UserError, AnswersLost):
        print_separation(doc, None, out_format, wide)
        raise
    print_separation(doc, path, out_format, wide)
    found = doc["verdict"] == Verdict.SAT
    return (0 if found else 1) if kind == "diff" else (1 if found else 0)


@click.command("diff")
@_query(many=True)
def diff(**o):
    """Find the fewest inputs that tell every pair of MODELS apart.

    One model is compared with itself changed: `tcsmt diff ampere --set-b
    carry_bits=3`. Vectors are shrunk to few non-zero products and
    significant bits, replayed on every concrete model, shown with each
    model's output, and written to a result file (outputs keyed by model
    name; replay it with `tcsmt replay`). Models whose arithmetic
    parameters are equal are identical circuits: no solver is asked. A
    note says when a vector lies outside the inputs a model was validated
    on, and which option keeps it inside. An existing file is never
    replaced without --force.

    \b
    The words of the summary:
      found by the candidate pool  hand-made-style inputs run through the
                                   models, no solver needed
      found by z3 on 2 non-zero    the solver answered a smaller question
      product(s)                   (the other products +0) first
      identical circuits           every parameter that changes the
                                   arithmetic is equal

    Exit status: 0 found, 1 proved there are none (or identical circuits),
    2 no answer in time or bad input."""
    sys.exit(run_query("diff", o))


@click.command("equiv")
@_query(many=False)
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


def _print_report(r) -> None:
    if r.ok:
        click.echo(f"{r.path}: {r.vectors} vector(s) x {r.hypotheses} hypotheses: "
                   f"all {r.checked} outputs match")
        return
    click.echo(f"{r.path}: {len(r.problems)} disagreement(s)")
    for p in r.problems:
        click.echo(f"  {p}")
