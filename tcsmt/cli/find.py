"""CLI: tcsmt find, prove, properties, regen."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from tcsmt.errors import UserError
from tcsmt.invocation import command_line

SOLVERS = click.Choice(["portfolio", "bitwuzla", "cvc5", "z3"])


@click.command("find")
@click.argument("prop", metavar="PROPERTY")
@click.option("--arch", required=True, metavar="ARCH", help="Architecture, model name or model file.")
@click.option("--formats", metavar="IN:OUT", help="Another of the architecture's format pairs.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a parameter.")
@click.option("--solver", type=SOLVERS, default="portfolio", show_default=True)
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Seconds per solver question.")
@click.option("--raw", is_flag=True, help="Accept the first witness: no restrictions to few "
              "non-zero terms and few significant bits.")
@click.option("--no-pool", is_flag=True, help="Ask only the solvers (no candidate pool).")
@click.option("--cross-check", is_flag=True, help="Re-prove every inseparable pair with a second solver.")
@click.option("-o", "--output", type=click.Path(), default=None,
              help="Result file (default results/ARCH/PROPERTY.json).")
def find_cmd(prop, arch, formats, overrides, solver, timeout, raw, no_pool, cross_check, output):
    """Find the fewest inputs that tell PROPERTY's hypotheses apart on ARCH,
    print them with each hypothesis's output, and write them to JSON."""
    from tcsmt.fileio import write_json_atomic
    from tcsmt.properties.registry import get_property
    from tcsmt.properties.run import document, hypotheses, resolve_base, result_path, run_property
    from tcsmt.report.tables import result_table
    from tcsmt.search import find as findmod

    p = get_property(prop)
    base = resolve_base(p, arch, formats, list(overrides))
    if p.kind == "separate" and no_pool:
        hyps = hypotheses(p, base)
        out = findmod.find_vectors(hyps, p.k(base), p.domain(base), solver, timeout, not raw,
                                   cross_check, use_pool=False)
        doc = document(p, base, out, solver, None)
    else:
        doc = run_property(p, base, solver, timeout, not raw, cross_check)
    path = Path(output) if output else result_path(base, p)
    write_json_atomic(path, doc)
    result_table(doc)
    click.echo(f"{len(doc['vectors'])} vector(s), verdict {doc['verdict']}, "
               f"{doc['seconds']:.2f} s; written to {path}")


@click.command("prove")
@click.argument("what", type=click.Choice(["carry-bits"]), metavar="carry-bits")
@click.option("--arch", required=True, metavar="ARCH")
@click.option("--formats", metavar="IN:OUT")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE")
@click.option("--solver", type=SOLVERS, default="portfolio", show_default=True)
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True)
@click.option("--no-cross-check", is_flag=True, help="Accept a proof by one solver.")
@click.option("-o", "--output", type=click.Path(), default=None)
def prove_cmd(what, arch, formats, overrides, solver, timeout, no_cross_check, output):
    """Prove the fewest carry bits with which ARCH's block accumulator gives
    the same bits as an unbounded one for every finite input, with a
    replayed witness that one bit fewer is not enough."""
    from tcsmt.fileio import write_json_atomic
    from tcsmt.model.catalogue import resolve
    from tcsmt.report.tables import result_table
    from tcsmt.search.prove import prove_carry_bits

    base = resolve(arch, formats, list(overrides))
    doc = prove_carry_bits(base, solver, timeout, not no_cross_check, command_line())
    q = doc["query"]
    path = Path(output) if output else Path("results") / (base.arch if base.default else base.name) \
        / "carry-bits-proof.json"
    write_json_atomic(path, doc)
    if doc["vectors"]:
        result_table(doc)
    click.echo(f"{base.name}: {q['fewest']} carry bits suffice: no finite input overflows a "
               f"{q['fewest']}-carry-bit register (proved by {', '.join(doc['proof']['proved_by'])})")
    if doc["vectors"]:
        click.echo(f"{q['fewest'] - 1} are not enough: the vector above gives other bits "
                   f"(found by {q['witness']['solver']}, replayed)")
    click.echo(f"{doc['seconds']:.2f} s; written to {path}")


@click.command("properties")
@click.option("--arch", default="ampere", show_default=True, metavar="ARCH",
              help="The architecture whose hypotheses are listed.")
def properties_cmd(arch):
    """List every property with its hypotheses and a one-line description."""
    from rich.console import Console
    from rich.table import Table

    from tcsmt.properties.registry import all_properties
    from tcsmt.properties.run import hypotheses, resolve_base

    t = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("property", f"hypotheses (on {arch})", "description"):
        t.add_column(col)
    for name, p in sorted(all_properties().items()):
        try:
            base = resolve_base(p, arch)
            hs = ", ".join(h.id for h in hypotheses(p, base)) if p.kind == "separate" else \
                "x <= y with f(x) > f(y), or a proof of none"
        except UserError as e:
            hs = f"(not for {arch}: {e})"
        t.add_row(name, hs, p.description)
    Console(width=200).print(t)


@click.command("regen")
@click.argument("archs", nargs=-1, metavar="[ARCH]...")
@click.option("--property", "props", multiple=True, metavar="NAME", help="Only these properties.")
@click.option("--jobs", type=click.IntRange(min=1), default=2, show_default=True,
              help="Queries run at once.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True)
@click.option("--force", is_flag=True, help="Run every query, even those whose inputs have not changed.")
@click.option("--root", type=click.Path(), default="results", show_default=True)
def regen_cmd(archs, props, jobs, timeout, force, root):
    """Regenerate every property for every shipped architecture (or those
    named), skipping queries whose inputs have not changed."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from tcsmt.regen import jobs as regen

    _register_extra_jobs()
    plan = regen.plan_jobs(list(archs) or None, list(props) or None, timeout, Path(root))
    console = Console(width=120)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=False) as bar:
        task = bar.add_task("regen", total=None)

        def progress(name, done, total):
            bar.update(task, total=total, completed=done, description=f"regen {name}")

        try:
            outcomes = regen.run_plan(plan, jobs, force, progress)
        except KeyboardInterrupt:
            raise UserError("interrupted: files already written are complete; "
                            "the rest are unchanged") from None
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    for o in sorted(outcomes, key=lambda o: o.name):
        if o.status in ("new", "changed", "failed"):
            extra = f" ({o.verdict})" if o.verdict else ""
            console.print(f"  {o.status:9} {o.name}{extra} {o.seconds:.1f} s {o.note}")
    console.print("  " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    if counts.get("failed"):
        sys.exit(1)


def _register_extra_jobs() -> None:
    """Case studies add their queries to regen when their modules exist."""
    import importlib
    for module in ("tcsmt.cases.jobs",):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name != module:
                raise
