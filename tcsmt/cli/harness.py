"""``tcsmt harness``: write a program that runs test vectors on a real matrix unit."""

from __future__ import annotations

import click

from tcsmt.errors import UserError


@click.command("harness")
@click.argument("vectors", required=False, type=click.Path(dir_okay=False))
@click.option("--target", type=click.Choice(["cuda"]), default="cuda", show_default=True,
              help="Program to write: cuda (one warp and one matrix instruction per vector).")
@click.option("-o", "--output", "output", metavar="FILE",
              help="The program to write, e.g. probe.cu.")
@click.option("--instruction", metavar="NAME",
              help="Instruction to run: a full name (see --list-instructions), mma, wmma, or a "
                   "shape such as m16n8k8. Default: the file's, else the usual mma.sync for "
                   "the formats.")
@click.option("--list-instructions", is_flag=True,
              help="List the supported instructions and exit.")
def harness(vectors, target, output, instruction, list_instructions):
    """Write a self-contained program that runs VECTORS.json on a GPU.

    \b
    Each vector runs as one warp and one matrix instruction: a in row 0 of A,
    b in column 0 of B, c in C[0][0], everything else zero. The program prints
    the bits of D[0][0] for every vector as JSON (schema tcsmt-observations/1),
    which `tcsmt identify` reads. The build command is in its first lines:
      tcsmt harness plan.json -o probe.cu
      nvcc -O2 -arch=sm_90 probe.cu -o probe && ./probe > observations.json
    """
    from tcsmt.hardware.harness import build_command, write_probe
    from tcsmt.hardware.instructions import DEFAULTS, INSTRUCTIONS

    if list_instructions:
        defaults = set(DEFAULTS.values())
        for ins in INSTRUCTIONS:
            mark = " (default)" if ins.name in defaults else ""
            click.echo(f"{ins.name:<56} k={ins.k:<3} sm_{ins.min_sm}+{mark}")
        return
    if not vectors:
        raise UserError("missing VECTORS.json (or use --list-instructions)")
    if not output:
        raise UserError("missing -o FILE: where to write the program (e.g. -o probe.cu)")
    ins, count = write_probe(vectors, output, instruction, target)
    click.echo(f"wrote {output}: {count} vectors, {ins.name} (k = {ins.k})", err=True)
    click.echo(f"build: {build_command(ins, output, 'probe')}", err=True)
