"""``tcsmt agreement``: tcsmt's models against MMA-Sim, measured, written
to results/mmasim-agreement.json and .md (tcsmt.peer.agreement)."""

from __future__ import annotations

import click

from tcsmt.cli import options


@click.command("agreement")
@click.argument("names", nargs=-1, metavar="[MODEL|ARCH]...")
@click.option("--vectors", type=click.IntRange(1, 10**8), default=100_000, show_default=True,
              help="Random dot products per MMA-Sim configuration.")
@click.option("--seed", type=options.SEED, default=0, show_default=True)
@click.option("-o", "--output", default="results/mmasim-agreement.json", show_default=True,
              callback=options.checked_output,
              metavar="FILE.json", help="The table, as JSON; a Markdown copy is written beside it (.md).")
@click.option("--fresh", is_flag=True,
              help="Write a new table; without it, the rows of configurations not run are kept.")
@options.scheduler
def agreement_cmd(names, vectors, seed, output, fresh):
    """Run every MMA-Sim configuration of the named models or architectures
    (all without names) through tcsmt's batch simulator and MMA-Sim's dpa,
    compare bit for bit, and write the table. A table already at FILE.json
    keeps its rows for the configurations not run (so it can be built in
    parts). Needs MMA-Sim (pip install torch==2.13.0 && pip install mmasim)."""
    from tcsmt import api

    def line(r):
        m = r["mmasim"]
        click.echo(f"{r['model']:<34} {m['class']:<20} {m['shape']:<56} {r['vectors']:>7} vectors  "
                   f"{r['differences']:>6} differences")
    doc = api.agreement(names, vectors=vectors, seed=seed, output=output, fresh=fresh, progress=line)
    path, md = doc["written"]
    unexplained = sum(r["reasons"].get("unexplained", 0) for r in doc["rows"])
    click.echo(f"the table: {doc['configurations']} configurations, {doc['vectors']} vectors, "
               f"{doc['differences']} differences ({unexplained} unexplained); written to {path} and {md}")
