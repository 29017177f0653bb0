"""``tcsmt params`` (every model parameter) and ``tcsmt model save`` (a
model file that starts from another)."""

from __future__ import annotations

import json

import click

from tcsmt.cli import options


@click.command("params")
@click.option("--json", "as_json", is_flag=True, help="Print the parameters as JSON.")
def params(as_json):
    """Every parameter of a model: its values, its default and its meaning.

    \b
    These are the keys of a model file (models/*.toml) and of --set
    KEY=VALUE on every command that takes a model. Reference models, usable
    wherever a model is (--arch fma-chain, tcsmt diff hopper fma-chain),
    are listed at the end.
    """
    from tcsmt import api
    from tcsmt.model.paramdoc import params_lines
    doc = api.params()
    if as_json:
        click.echo(json.dumps(doc, indent=2, default=str))
        return
    for line in params_lines(doc):
        click.echo(line)


@click.group("model")
def model_group():
    """Model files: save a model that starts from another."""


@model_group.command("save")
@click.argument("name")
@click.option("--arch", "base", required=True, metavar="BASE",
              help="The model to start from: a model name, an architecture (with --formats) "
                   "or a model file.")
@click.option("--formats", metavar="IN:OUT", help="Which of the architecture's models.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", required=True,
              help="A parameter that differs from the base (repeatable; `tcsmt params` lists "
                   "them).")
@click.option("--source", default="", metavar="TEXT",
              help="Where the changed values come from (the # source: line of each).")
@click.option("--description", default="", metavar="TEXT", help="One line saying what it is.")
@click.option("-o", "--output", metavar="FILE", callback=options.checked_output,
              help="Where to write (default NAME.toml).")
def save(name, base, formats, overrides, source, description, output):
    """Write NAME as a model file: base = BASE and only what --set changes.

    \b
    The file loads wherever a model file is taken (--arch FILE):
      tcsmt model save hopper-a1 --arch hopper --set align_bits=1 -o hopper-a1.toml
      tcsmt check obs.json --arch hopper-a1.toml
    """
    from tcsmt import api
    out = api.model_save(name, base, formats=formats, overrides=list(overrides), source=source,
                         description=description, output=output)
    changes = ", ".join(f"{k} = {v}" for k, v in out["differs"].items())
    click.echo(f"wrote {out['path']}: {out['name']}, base {out['base']}, changes {changes}")
