"""Commands: models, simulate, conformance."""

from __future__ import annotations

import sys

import click

from tcsmt.cli import options
from tcsmt.errors import UserError

# ---------------------------------------------------------------------------
# models
# ---------------------------------------------------------------------------

@click.command("models")
@options.output_format()
@click.option("--arch", "archs", multiple=True, metavar="ARCH",
              help="Only this architecture's models (repeatable).")
@click.option("--scaled/--unscaled", default=None,
              help="Only block-scaled models, or only the others.")
def models_cmd(out_format, wide, archs, scaled):
    """List the shipped architecture models: instruction, formats, block
    size (products summed before one normalisation), alignment and carry
    bits, how the result is rounded, and block scales. A * marks the model
    `--arch ARCH` picks."""
    from tcsmt import api
    from tcsmt.report.tables import model_note_lines, models_csv, models_table
    from tcsmt.report.terminal import console, terminal_width

    ms = api.models(archs, scaled)
    if out_format == "json":
        options.echo_json([m.as_dict() for m in ms])
    elif out_format == "csv":
        click.echo(models_csv(ms), nl=False)
    else:
        width = terminal_width(wide)
        console(width).print(models_table(ms, width))
        for line in model_note_lines(width):
            click.echo(line)


# ---------------------------------------------------------------------------
# simulate
# ---------------------------------------------------------------------------

def split_terms(text: str, name: str) -> list[str]:
    """--a 1,0x3c00,2^-24 as its terms."""
    items = text.replace(" ", "").split(",")
    if items == [""]:
        raise UserError(f"--{name} is empty")
    if "" in items:
        raise UserError(f"--{name} {text}: term {items.index('') + 1} is empty")
    return items


def parse_mask(text: str | None) -> list[int] | None:
    """--mask as a list of 0/1 (None where not given)."""
    if text is None:
        return None
    bits = text.replace(" ", "").replace(",", "")
    if not bits or set(bits) - {"0", "1"}:
        raise UserError(f"--mask {text!r}: expected bits, one 0 or 1 per term")
    return [int(x) for x in bits]


def optional_terms(text: str | None, name: str) -> list[str] | None:
    """split_terms of an option that may be left out (None then)."""
    return None if text is None else split_terms(text, name)


@click.command("simulate")
@options.model
@click.option("--a", "a_text", required=True, metavar="X,Y,...",
              help="a_1..a_K: hex bit patterns (0x3c00) or exact numbers (1.5, 2^-24).")
@click.option("--b", "b_text", required=True, metavar="X,Y,...", help="b_1..b_K, likewise.")
@click.option("--c", "c_text", default="0x0", show_default=True, metavar="X", help="c, likewise.")
@click.option("--scale-a", "sa_text", default=None, metavar="X,Y,...",
              help="Block-scaled models: the scales of a, one per scale_block terms, as hex bit "
                   "patterns of the scale format (0x7f is 1 in ue8m0, 0x38 in ue4m3).")
@click.option("--scale-b", "sb_text", default=None, metavar="X,Y,...", help="The scales of b, likewise.")
@click.option("--mask", "mask_text", default=None, metavar="BITS",
              help="Sparse models: which terms the metadata selects, one 0 or 1 per term "
                   "(0110 1100 ...: two of every four for 2:4; spaces and commas ignored).")
@click.option("--explain", is_flag=True, help="Print every stage of the datapath.")
@options.json_format()
def simulate_cmd(arch, formats, overrides, a_text, b_text, c_text, sa_text, sb_text, mask_text,
                 explain, out_format):
    """Compute d = c + sum a_i*b_i for one dot product under a model.

    `tcsmt params` lists every parameter --set can change, with its values
    and meaning; --arch also takes the reference models exact, fma-chain
    and fma-pairwise."""
    from tcsmt import api
    from tcsmt.sim.dot import simulate_lines

    a, b, c = (split_terms(t, n) for t, n in ((a_text, "a"), (b_text, "b"), (c_text, "c")))
    if len(c) != 1:
        raise UserError("--c takes one value")
    if len(a) != len(b):
        raise UserError(f"--a has {len(a)} terms and --b has {len(b)}: they must match")
    doc = api.simulate(arch, a, b, c[0], formats=formats, overrides=list(overrides),
                       scale_a=optional_terms(sa_text, "scale-a"),
                       scale_b=optional_terms(sb_text, "scale-b"),
                       mask=parse_mask(mask_text), explain=explain)
    if out_format == "json":
        options.echo_json(doc)
        return
    for line in simulate_lines(doc):
        click.echo(line)


# ---------------------------------------------------------------------------
# conformance
# ---------------------------------------------------------------------------

@click.command("conformance")
@click.argument("folder", type=click.Path(), metavar="DIR")
@click.option("--arch", default=None, metavar="ARCH",
              help="Architecture of the recordings (default: from the device folder's name).")
@click.option("--engine", type=click.Choice(["auto", "batch", "scalar"]), default="auto",
              show_default=True, help="Batch (NumPy) or scalar (Python-int) interpreter.")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Only the first N rows of each folder.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              callback=options.checked_output, help="Also write the report as JSON to FILE.")
@options.json_file_alias
@options.json_format(json_flag=False)
@options.scheduler
def conformance_cmd(folder, arch, engine, limit, output, out_format):
    """Replay recorded GPU outputs (DIR/DEVICE/FORMAT/{a,b,c,d}_*.txt) through
    the models; exit 0 only if every judged row matches bit for bit."""
    from tcsmt import api
    from tcsmt.judge.conformance import conformance_lines

    doc = api.conformance(folder, arch, engine=engine, limit=limit, json=output)
    if out_format == "json":
        options.echo_json(doc)
    else:
        for line in conformance_lines(doc):
            click.echo(line)
    if any(r["judged"] and r["matched"] != r["rows"] for r in doc["folders"]):
        sys.exit(1)
