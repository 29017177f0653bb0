"""``tcsmt params`` (every model parameter) and ``tcsmt model save`` (a
model file that starts from another)."""

from __future__ import annotations

import click

from tcsmt.cli import options
from tcsmt.errors import UserError


@click.command("params")
@options.model(required=False)
@options.json_format()
def params(arch, formats, overrides, out_format):
    """Every parameter of a model: its values, its default and its meaning;
    with --arch, one model's values, each with its source.

    \b
    These are the keys of a model file (models/*.toml) and of --set
    KEY=VALUE on every command that takes a model. Reference models, usable
    wherever a model is (--arch fma-chain, tcsmt diff hopper fma-chain),
    are listed at the end.
      tcsmt params --arch hopper                    hopper-fp16-fp32's values
      tcsmt params --arch hopper --formats e4m3:fp32
    """
    from tcsmt import api
    from tcsmt.model.paramdoc import model_values_lines, params_lines
    from tcsmt.report.terminal import terminal_width
    if arch is None and (formats or overrides):
        raise UserError("--formats and --set choose a model: give --arch too")
    doc = api.params(arch, formats=formats, overrides=overrides)
    if out_format == "json":
        options.echo_json(doc)
        return
    lines = params_lines(doc) if arch is None else model_values_lines(doc, min(terminal_width(), 100))
    for line in lines:
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
