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
@click.option("--json", "as_json", is_flag=True, hidden=True, help="The same as --format json.")
@click.option("--arch", "archs", multiple=True, metavar="ARCH",
              help="Only this architecture's models (repeatable).")
@click.option("--scaled/--unscaled", default=None,
              help="Only block-scaled models, or only the others.")
def models_cmd(out_format, wide, as_json, archs, scaled):
    """List the shipped architecture models: instruction, formats, block
    size (products summed before one normalisation), alignment and carry
    bits, how the result is rounded, and block scales. A * marks the model
    `--arch ARCH` picks."""
    from tcsmt import api
    from tcsmt.report.tables import MODEL_NOTE, models_csv, models_table
    from tcsmt.report.terminal import console, terminal_width

    ms = api.models(archs, scaled)
    if as_json or out_format == "json":
        options.echo_json([m.as_dict() for m in ms])
    elif out_format == "csv":
        click.echo(models_csv(ms), nl=False)
    else:
        width = terminal_width(wide)
        console(width).print(models_table(ms, width))
        click.echo(MODEL_NOTE)


# ---------------------------------------------------------------------------
# simulate
# ---------------------------------------------------------------------------

def parse_terms(text: str, fmt, name: str) -> list[int]:
    from tcsmt.model.formats import parse_bits
    from tcsmt.sim.dot import to_bits

    items = text.replace(" ", "").split(",")
    if items == [""]:
        raise UserError(f"--{name} is empty")
    if "" in items:
        raise UserError(f"--{name} {text}: term {items.index('') + 1} is empty")
    out = []
    for s in items:
        if s.lower().startswith(("0x", "-0x")):
            if s.startswith("-"):
                raise UserError(f"--{name} {s}: a bit pattern has no sign; set the sign bit")
            out.append(parse_bits(s, fmt))
        else:
            out.append(to_bits(fmt, s))
    return out


def parse_scales(p, sa_text: str | None, sb_text: str | None):
    """--scale-a and --scale-b as bit patterns of the model's scale format
    (None where not given; check_scales says what a model needs)."""
    from tcsmt.model.formats import parse_bits

    if p.scale_format is None:
        if sa_text or sb_text:
            raise UserError(f"{p.name} has no block scales: leave out --scale-a and --scale-b")
        return None, None
    out = []
    for name, text in (("scale-a", sa_text), ("scale-b", sb_text)):
        if text is None:
            out.append(None)
            continue
        items = [x for x in text.replace(" ", "").split(",") if x]
        if not items:
            raise UserError(f"--{name} is empty")
        out.append([parse_bits(x, p.fscale) for x in items])
    return out


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
@click.option("--explain", is_flag=True, help="Print every stage of the datapath.")
def simulate_cmd(arch, formats, overrides, a_text, b_text, c_text, sa_text, sb_text, explain):
    """Compute d = c + sum a_i*b_i for one dot product under a model.

    `tcsmt params` lists every parameter --set can change, with its values
    and meaning; --arch also takes the reference models exact, fma-chain
    and fma-pairwise."""
    from tcsmt.model.formats import describe
    from tcsmt.sim.dot import Result, check_inputs, check_scales, dot_bits, model
    from tcsmt.sim.dot import explain as explain_dot

    p = model(arch, formats, list(overrides))
    a = parse_terms(a_text, p.fin, "a")
    b = parse_terms(b_text, p.fb, "b")
    c = parse_terms(c_text, p.fc, "c")
    if len(c) != 1:
        raise UserError("--c takes one value")
    if len(a) != len(b):
        raise UserError(f"--a has {len(a)} terms and --b has {len(b)}: they must match")
    a, b, c0 = check_inputs(p, a, b, c[0])
    sa, sb = check_scales(p, len(a), *parse_scales(p, sa_text, sb_text))
    scaled = "" if p.scale_format is None else f", scales {p.scale_format} per {p.scale_block}"
    grouped = "" if p.group_size == 1 else f", exact groups of {p.group_size}"
    click.echo(f"model  {p.name}: {p.in_format} x {p.fb.name} + {p.c_format} -> {p.out_format}, "
               f"block {p.block_size}, {p.F} fraction bits, {p.final_rounding}{scaled}{grouped}")
    click.echo("a      " + ", ".join(describe(p.fin, x) for x in a))
    click.echo("b      " + ", ".join(describe(p.fb, x) for x in b))
    click.echo("c      " + describe(p.fc, c0))
    if sa is not None:
        click.echo("scales of a  " + ", ".join(describe(p.fscale, x) for x in sa))
        click.echo("scales of b  " + ", ".join(describe(p.fscale, x) for x in sb))
    if explain:
        for stage, text in explain_dot(p, a, b, c0, sa, sb):
            click.echo(f"  {stage:<18} {text}")
    r = Result(dot_bits(p, a, b, c0, sa, sb), p.fout)
    click.echo(f"d      {r.hex} = {r.decimal}" + ("" if r.kind in ("normal", "zero") else f" ({r.kind})"))


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
@click.option("--json", "json_path", type=click.Path(), default=None, help="Also write the report as JSON.")
@options.scheduler
def conformance_cmd(folder, arch, engine, limit, json_path):
    """Replay recorded GPU outputs (DIR/DEVICE/FORMAT/{a,b,c,d}_*.txt) through
    the models; exit 0 only if every judged row matches bit for bit."""
    from tcsmt.fileio import write_json_atomic
    from tcsmt.judge import conformance

    reports = conformance.run(folder, arch, engine, limit)
    failed = False
    for r in reports:
        status = "" if r.ok else "  MISMATCH"
        if not r.judged:
            status = "  known problem, not judged"
        count = f"matched {r.matched}/{r.rows}" if r.model else f"not modelled ({r.rows} rows)"
        click.echo(f"{r.device:<6} {r.folder:<5} -> {r.output:<5} {r.model or '-':<22} {count}{status}")
        for note in r.notes:
            click.echo(f"       note: {note}")
        if r.judged and not r.ok:
            failed = True
            click.echo(f"       first mismatching rows (0-based): {r.mismatches}")
    total = conformance.summary(reports)
    if json_path:
        write_json_atomic(json_path, {"schema": "tcsmt-conformance/2", "summary": total,
                                      "folders": [r.__dict__ for r in reports]})
    click.echo(f"{total['matched']}/{total['judged']} judged rows match in {total['judged_outputs']} "
               f"folder outputs; {total['judged']} of {total['rows']} recorded rows judged"
               + (f" ({c0} with c read as +0)" if (c0 := total["judged_with_c_zero"]) else ""))
    for why, rows in total["not_judged"].items():
        click.echo(f"  {rows} rows not judged: {why}")
    if failed:
        sys.exit(1)
