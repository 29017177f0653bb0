"""Commands: compare-algorithms, coverage (the seed paper's case studies)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from tcsmt import api
from tcsmt.cli import options
from tcsmt.cli.progress import progress_bar
from tcsmt.errors import AnswersLost, UserError
from tcsmt.report.terminal import wrap
from tcsmt.report.where import said


@click.command("compare-algorithms")
@click.argument("first", metavar="markidis")
@click.argument("second", metavar="ootomo-yokota")
@click.option("--arch", "archs", multiple=True, required=True, metavar="ARCH",
              help="Architecture with an fp16:fp32 model (repeat, or 'all').")
@click.option("--k", type=click.IntRange(1, 16), default=4, show_default=True,
              help="Terms of the dot product (one output element).")
@click.option("--reproduce", is_flag=True,
              help="Fix the outputs to the seed paper's Table 5 values (true 1 + 2^-23, "
                   "Markidis 1 + 2^-23, Ootomo-Yokota 1) and ask for inputs that give them: "
                   "a witness shows that outcome is possible on the model, not that the "
                   "paper's inputs or finding are reproduced.")
@click.option("--seeds", "seeds", multiple=True, metavar="PATH",
              help="compare-algorithms files, or folders of them, whose witnesses the candidate "
                   "search tries first (repeat; default: the other files in the output's folder).")
@options.solver(timeout=280.0, cross_check=None, timeout_help="Seconds for the whole question.")
@options.emit_smt2
@options.output("compare-algorithms-ARCH-kK[-reproduce].json; one architecture only")
@options.replace_answers
@options.json_format()
def compare_algorithms(first, second, archs, k, reproduce, seeds, solver, timeout, output, force,
                       replace_answers, out_format):
    """Can Ootomo and Yokota's error-corrected fp32 GEMM on fp16 tensor
    cores be less accurate than Markidis et al.'s, for one output element,
    on ARCH's tensor-core model? Prints the inputs, the true value, both
    results and their errors, and writes them to JSON."""
    methods = api.compare_methods()
    if {first, second} != set(methods) or first == second:
        raise UserError(f"the methods are {' and '.join(methods)} (got {first!r} and {second!r})")
    names = api.compare_architectures() if "all" in archs else list(archs)
    if output and len(names) > 1:
        raise UserError("--output names one file: give one --arch")
    worst = 0
    docs: list[dict] = []
    for arch in names:
        where = api.compare_path(arch, k, reproduce, output=output, force=force)
        doc = api.compare_algorithms(arch, k, reproduce=reproduce, solver=solver, timeout=timeout,
                                     prior=where.prior, seeds=list(seeds) or [where.path.parent],
                                     skip=where.path)
        try:
            status = api.write(where.path, doc, replace_answers)
        except AnswersLost:              # the answer is still shown, then "lost" (exit 1)
            _show_compare(doc, where.path, "kept", out_format, docs)
            if docs:
                options.echo_json(docs[0] if len(docs) == 1 else docs)
            raise
        _show_compare(doc, where.path, status, out_format, docs)
        worst = max(worst, {"sat": 0, "unsat": 0}.get(doc["verdict"], 1))
    if docs:
        options.echo_json(docs[0] if len(docs) == 1 else docs)
    if worst:
        sys.exit(1)


def _show_compare(doc: dict, path: Path, status: str, out_format: str, docs: list) -> None:
    """One architecture's answer: its text, or (--format json) kept for the
    JSON printed at the end, with what became of the file on stderr."""
    if out_format == "json":
        docs.append(doc)
        click.echo(said(path, status), err=True)
    else:
        print_compare(doc, path, status)


def print_compare(doc: dict, path: Path, status: str = "new") -> None:
    q = doc["query"]
    click.echo(f"{doc['model']['name']}, k = {q['k']}: {q['question']}"
               f"{' with the outputs fixed to Table 5' if q['reproduce'] else ''}")
    for v in doc["vectors"]:
        for side in ("a", "b"):
            click.echo(f"  {side} = [{', '.join(x['decimal'] for x in v[side])}]")
            click.echo(f"      [{', '.join(x['hex'] for x in v[side])}]")
        click.echo(f"  c = {v['c']['decimal']} ({v['c']['hex']})")
        click.echo(f"  true           {v['true']['exact']}   (binary64 {v['true']['binary64']['hex']})")
        for name, o in v["outputs"].items():
            click.echo(f"  {name:<14} {o['decimal']} ({o['hex']})   error {o['error']}")
    run = doc["run"]
    s = run["solver"]
    what = {"sat": "yes: Ootomo-Yokota is less accurate on the inputs above (replayed on the "
                   "concrete model)",
            "unsat": "no: proved for every input of the domain (" + ", ".join(run["proved_by"]) + ")",
            "unknown": "unknown: no answer in time"}[doc["verdict"]]
    who = f"{s['name']} ({s['formula']})" if s.get("name") else f"the {s.get('formula')}"
    click.echo(f"  {what}; {who}, {run['seconds']:.2f} s; {said(path, status)}")
    if q["reproduce"]:
        click.echo("  (the outputs were fixed to Table 5's values and the solver asked for inputs "
                   "that give them: " + ("the outcome is possible on this model" if doc["verdict"] == "sat"
                                         else "no such inputs were found") + ")")


@click.command("coverage")
@click.argument("suite", metavar="SUITE")
@click.option("--space", default="properties", show_default=True, metavar="SPACE",
              help="'properties' (every property's hypotheses around each device's model), "
                   "property names separated by commas, 'axes', or a space file (TOML).")
@click.option("--no-generate", is_flag=True, help="Report only; generate no vectors for the gaps.")
@options.solver(timeout=10.0, cross_check=None, timeout_help="Seconds per solver question (one open pair).")
@click.option("--budget", type=options.Finite(1, options.MAX_SECONDS), default=240.0, show_default=True,
              help="Seconds for the whole query; open pairs left then are reported unknown.")
@click.option("--verbose", "-v", is_flag=True,
              help="List every vector of the suite with each pair of hypotheses it separates.")
@options.scheduler
@options.emit_smt2
@options.output("coverage-SUITE.json")
@options.replace_answers
@options.output_format()
def coverage(suite, space, no_generate, solver, timeout, budget, verbose, output, force,
             replace_answers, out_format, wide):
    """Which pairs of hypotheses each vector of a published test SUITE (a
    file, or a shipped name: fasi-v100, fasi-t4, fasi-a100,
    khattak-mikaitis) separates, which of its claims hold, which pairs no
    vector separates, and vectors that close those gaps.

    \b
    Words in the report:
      pair QUESTION:X~Y  two hypotheses of one question (a property, or one
                         parameter), X and Y, all else at the device's model
      separated          some vector gives different output bits under X and Y
      claim holds        the vector separates a pair that differs in the
                         parameter the paper says it reveals
      reveals nothing    pairs differing in that parameter exist, but the
                         vector gives the same bits under all of them: on
                         this device's model it cannot tell them apart
      outside the space  no pair of the space differs in that parameter
      gap                a pair no vector of the suite separates; closed by
                         a generated (replayed) vector, proved inseparable
                         (no input separates it), or left open/unknown"""
    from tcsmt.report.terminal import csv_text, terminal_width
    where = api.coverage_path(suite, space, output=output, force=force)
    path = where.path
    with progress_bar("coverage", out_format == "table") as progress:
        doc = api.coverage(suite, space=space, generate=not no_generate, solver=solver, timeout=timeout,
                           budget=budget, prior=where.prior, progress=progress)
    kept = None
    try:
        status = api.write(path, doc, replace_answers)
    except AnswersLost as e:             # the report is still shown, then "lost" (exit 1)
        kept, status = e, "kept"
    if out_format == "json":
        options.echo_json(doc)
    elif out_format == "csv":
        click.echo(csv_text(["vector", "space", "pair"], coverage_rows(doc)), nl=False)
    if out_format != "table":
        click.echo(said(path, status), err=True)
    else:
        width = terminal_width(wide)
        for line in coverage_lines(doc, path, verbose, status):
            text = line.lstrip()
            for part in wrap(text, width, line[:len(line) - len(text)]):
                click.echo(part)
    if kept:
        raise kept


def coverage_rows(doc: dict) -> list[list[str]]:
    """A row per (suite vector, pair it separates); a vector that
    separates nothing has one row with an empty pair."""
    rows = []
    for v in doc["suite_vectors"]:
        pairs = [(sp, pr) for sp, prs in v["separates"].items() for pr in prs]
        rows += [[v["id"], sp, pr] for sp, pr in pairs] or [[v["id"], "", ""]]
    return rows


def coverage_lines(doc: dict, path: Path, verbose: bool = False, status: str = "new") -> list[str]:
    s = doc["summary"]
    out = [f"{doc['query']['suite']}: {s['vectors']} vectors, {s['spaces']} spaces "
           f"({', '.join(x['space'] + ' on ' + x['base'] for x in doc['spaces'])})"]
    if verbose:
        for v in doc["suite_vectors"]:
            n = sum(len(x) for x in v["separates"].values())
            out.append(f"  {v['id']} separates {n} pair(s)" + (":" if n else ""))
            out += [f"    {sp}: {', '.join(prs)}" for sp, prs in v["separates"].items() if prs]
    out.append(f"  pairs: {s['pairs']} in the space, {s['pairs_separated']} separated by the suite, "
               f"{s['pairs_unseparated']} by no vector")
    out.append(f"  claims: {s['claims_holding']}/{s['claims']} hold (the vector separates a pair "
               f"differing in the claimed parameter), {s['claims_revealing_nothing']} reveal "
               f"nothing (separate no such pair), {s['claims_outside_space']} outside the space")
    weak: dict[tuple[str, str, str], list[str]] = {}
    for c in doc["claims"]:
        if c["status"] != "holds":
            weak.setdefault((c["status"], c["vector"], c["parameter"]), []).append(c["device"])
    out += [f"    {status}: {vid} ({param}; {', '.join(devices)})"
            for (status, vid, param), devices in weak.items()]
    out.append(f"  published expectations: {s['expectations_holding']}/{s['expectations']} hold "
               f"on the shipped models")
    for f in doc["expectations"]["failing"]:
        out += _failing_lines(f)
    out.append(f"  gaps: {s['gaps_closed']} closed by {s['gap_vectors']} generated vector(s) "
               f"(replayed), {s['gaps_inseparable']} proved inseparable, {s['gaps_left']} left")
    why = {(u["space"], u["pair"]): u["by"] for u in doc["run"]["unseparated"]}
    for u in doc["unseparated"]:
        if u["status"] not in ("closed", "inseparable"):
            reason = why.get((u["space"], u["pair"]), "") or "not asked: --no-generate"
            out.append(f"    {u['status']}: {u['space']} {u['pair']} ({reason})")
    out.append(f"  verdict {doc['verdict']}, {doc['run']['seconds']:.2f} s; {said(path, status)}")
    return out


def _failing_lines(f: dict) -> list[str]:
    out = [f"    WRONG: {f['vector']} on {f['device']}: the paper says {f['paper']}; "
           f"{f['model']} gives {f['model_gives']}"]
    for alt in f["would_hold_under"]:
        what = ", ".join(f"{k}={v[1]}" for k, v in alt["differs"].items())
        out.append(f"      it holds only with {what} (instead of "
                   f"{', '.join(f'{k}={v[0]}' for k, v in alt['differs'].items())})")
        for st in alt["settled_by"]:
            out.append(f"      settled by {st['vector']}: {f['device']} published "
                       f"{st['published']}, {what} gives {st['hypothesis_gives']}")
        if not alt["settled_by"]:
            out.append("      no vector of the suite settles it")
    return out
