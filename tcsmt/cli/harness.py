"""``tcsmt harness``: write a program that runs test vectors on a real matrix unit."""

from __future__ import annotations

import click

from tcsmt.cli import options
from tcsmt.errors import UserError


@click.command("harness")
@click.argument("vectors", required=False, type=click.Path(dir_okay=False))
@click.option("--target", type=click.Choice(["cuda", "hip"]), default="cuda", show_default=True,
              help="Program to write: cuda (NVIDIA: mma.sync, wmma, wgmma, tcgen05) or hip "
                   "(AMD MFMA); one matrix instruction per vector.")
@click.option("-o", "--output", "output", metavar="FILE", callback=options.checked_output,
              help="The program to write, e.g. probe.cu.")
@click.option("--instruction", metavar="NAME",
              help="Instruction to run: a full name (see --list-instructions), an interface "
                   "(mma, wmma, wgmma, tcgen05, mfma), an architecture (sm_90a, sm_100a, "
                   "sm_120a, gfx942) or a shape such as m16n8k8. Default: the file's, else "
                   "the usual mma.sync for the formats.")
@click.option("--expect", "--hypothesis", "models", multiple=True, metavar="MODEL",
              help="A model (architecture, model name or file) whose outputs the probe carries "
                   "and compares with the device's: it prints PASS or FAIL per vector and in "
                   "total for each (repeat for several).")
@click.option("--formats", metavar="IN:OUT",
              help="Which vectors of a file that holds several formats (a coverage file).")
@click.option("--list-instructions", is_flag=True,
              help="List the supported instructions and exit.")
@options.json_format()
def harness(vectors, target, output, instruction, models, formats, list_instructions, out_format):
    """Write a self-contained program that runs VECTORS on a GPU.

    \b
    VECTORS is any file tcsmt writes that holds vectors: a plan, a result
    of diff, find or prove, a coverage file, observations (run again on
    another device), or the name of a shipped plan (fp16-fp32, bf16-fp32,
    tf32-fp32, fp16-fp16). Each vector runs as one matrix instruction (one
    warp, warpgroup or wavefront); the program prints the bits of D for
    every vector as JSON (schema tcsmt-observations/1, which `tcsmt check`
    and `tcsmt identify` read), after checking with calibration vectors
    that the operands reached the right places. With expected outputs (a
    result file's hypotheses, --expect MODEL) it prints on stderr PASS or
    FAIL for each vector and in total for each, and exits with status 4
    when the device followed none of them on every vector. The build
    command is in its first lines:
      tcsmt harness fp16-fp32 --expect hopper --expect ampere -o probe.cu
      nvcc -O2 -arch=sm_90 probe.cu -o probe && ./probe > observations.json
      tcsmt harness results/ampere/rounding.json -o rounding.cu
      tcsmt harness plan.json --instruction wgmma -o wgmma.cu     (H100, sm_90a)
      tcsmt harness plan.json --target hip -o probe.hip           (AMD Instinct)
      tcsmt harness diff.json --instruction tcgen05 -o b200.cu    (B200, sm_100a)
    """
    from tcsmt import api

    if list_instructions and out_format == "json":
        options.echo_json(api.instructions(target))
        return
    if list_instructions:
        for ins in api.instructions(target):
            mark = " (default)" if ins["default"] else ""
            click.echo(f"{ins['name']:<78} k={ins['k']:<3} {','.join(ins['archs'])}{mark}")
        return
    if not vectors:
        raise UserError("missing VECTORS: a file of vectors or a shipped plan's name "
                        "(or use --list-instructions)")
    if not output:
        raise UserError("missing -o FILE: where to write the program (e.g. -o probe.cu)")
    doc = api.harness(vectors, output, target=target, instruction=instruction, expect=models,
                      formats=formats)
    if out_format == "json":
        options.echo_json(doc)
        return
    many = "vector" if doc["vectors"] == 1 else "vectors"
    click.echo(f"wrote {output}: {doc['vectors']} {many}, {doc['instruction']} (k = {doc['k']})", err=True)
    click.echo(f"build: {doc['build']}", err=True)
