"""Commands: find, prove, properties, regen."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from tcsmt import api
from tcsmt.cli import options
from tcsmt.report.results import write_result


@click.command("find")
@click.argument("prop", metavar="PROPERTY")
@options.model
@options.solver()
@click.option("--raw", is_flag=True, help="Accept the first witness: no restrictions to few "
              "non-zero terms and few significant bits.")
@click.option("--no-pool", is_flag=True, help="Ask only the solvers (no candidate pool).")
@options.output("results/ARCH/PROPERTY.json")
def find_cmd(prop, arch, formats, overrides, solver, timeout, cross_check, raw, no_pool, output):
    """Find the fewest inputs that tell PROPERTY's hypotheses apart on ARCH,
    print them with each hypothesis's output, and write them to JSON. The
    vectors of an earlier result in the file are tried first."""
    from tcsmt.properties.registry import get_property
    from tcsmt.properties.run import resolve_base, result_path
    from tcsmt.report.tables import result_table

    path = Path(output) if output else result_path(resolve_base(get_property(prop), arch, formats,
                                                                list(overrides)), get_property(prop))
    doc = api.find(prop, arch, formats=formats, overrides=overrides, solver=solver, timeout=timeout,
                   readable=not raw, pool=not no_pool, cross_check=cross_check, prior=path)
    status = write_result(path, doc)
    result_table(doc)
    click.echo(f"{len(doc['vectors'])} vector(s), verdict {doc['verdict']}, "
               f"{doc['run']['seconds']:.2f} s; {_written(status, path)}")


def _written(status, path) -> str:
    return f"{path} unchanged" if status == "unchanged" else f"written to {path}"


@click.command("prove")
@click.argument("what", type=click.Choice(["carry-bits"]), metavar="carry-bits")
@options.model
@options.solver(cross_check="--no-cross-check")
@options.output("results/ARCH/carry-bits-proof.json")
def prove_cmd(what, arch, formats, overrides, solver, timeout, no_cross_check, output):
    """Prove the fewest carry bits with which ARCH's block accumulator gives
    the same bits as an unbounded one for every finite input, with a
    replayed witness that one bit fewer is not enough."""
    from tcsmt.model.catalogue import resolve
    from tcsmt.report.tables import result_table

    base = resolve(arch, formats, list(overrides))
    path = Path(output) if output else Path("results") / (base.arch if base.default else base.name) \
        / "carry-bits-proof.json"
    doc = api.prove_carry_bits(arch, formats=formats, overrides=overrides, solver=solver,
                               timeout=timeout, cross_check=not no_cross_check, prior=path)
    status = write_result(path, doc)
    q, run = doc["query"], doc["run"]
    if doc["vectors"]:
        result_table(doc)
    click.echo(f"{base.name}: {q['fewest']} carry bits suffice: no finite input overflows a "
               f"{q['fewest']}-carry-bit register (proved by {', '.join(run['proved_by'])})")
    if doc["vectors"]:
        how = run["witness"]["solver"] or run["witness"]["formula"]
        click.echo(f"{q['fewest'] - 1} are not enough: the vector above gives other bits "
                   f"(found by {how}, replayed)")
    click.echo(f"{run['seconds']:.2f} s; {_written(status, path)}")


@click.command("properties")
@click.option("--arch", default="ampere", show_default=True, metavar="ARCH",
              help="The architecture whose hypotheses are listed.")
def properties_cmd(arch):
    """List every property with its hypotheses and a one-line description."""
    from rich.console import Console
    from rich.table import Table

    t = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("property", f"hypotheses (on {arch})", "description"):
        t.add_column(col)
    for row in api.properties(arch):
        if "not_applicable" in row:
            hs = f"(not for {arch}: {row['not_applicable']})"
        else:
            hs = ", ".join(row["hypotheses"]) or "x <= y with f(x) > f(y), or a proof of none"
        t.add_row(row["property"], hs, row["description"])
    Console(width=200).print(t)


@click.command("regen")
@click.argument("archs", nargs=-1, metavar="[ARCH|MODEL]...")
@click.option("--property", "props", multiple=True, metavar="NAME", help="Only these properties.")
@click.option("--jobs", type=click.IntRange(min=1), default=2, show_default=True,
              help="Queries run at once in local worker processes (without a scheduler).")
@options.scheduler
@options.solver(cross_check=None, timeout_help="Seconds per solver question (part of each "
                "query's cache key).")
@click.option("--force", is_flag=True, help="Run every query, even those whose inputs have not changed.")
@click.option("--root", type=click.Path(), default="results", show_default=True)
def regen_cmd(archs, props, jobs, solver, timeout, force, root):
    """Regenerate every property for every shipped architecture and the
    models of tcsmt.regen.jobs.MODELS (or those named), skipping queries
    whose inputs have not changed. A file whose stable content (question,
    vectors, verdicts, proofs) comes out the same is left as it was."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from tcsmt.regen import jobs as regen

    plan = regen.plan_jobs(list(archs) or None, list(props) or None, timeout, Path(root), solver)
    console = Console(width=120)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=False) as bar:
        task = bar.add_task("regen", total=None)

        def progress(name, done, total):
            bar.update(task, total=total, completed=done, description=f"regen {name}")

        outcomes = regen.run_plan(plan, jobs, force, progress)
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    for o in sorted(outcomes, key=lambda o: o.name):
        if o.status in ("new", "changed", "failed", "lost"):
            extra = f" ({o.verdict})" if o.verdict else ""
            console.print(f"  {o.status:9} {o.name}{extra} {o.seconds:.1f} s {o.note}")
    console.print("  " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    if counts.get("failed") or counts.get("lost"):
        sys.exit(1)
