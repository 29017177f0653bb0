"""``tcsmt check``: observations (or any file of vectors) against named models."""

from __future__ import annotations

import sys

import click

from tcsmt.cli import options


@click.command("check")
@click.argument("source", metavar="OBSERVATIONS")
@click.option("--arch", "models", multiple=True, metavar="MODEL",
              help="A model to check: an architecture (its model for the rows' formats), a "
                   "model name, a model file or a reference model (exact, fma-chain, fma-pairwise); "
                   "repeat for several (one without the rows' formats is skipped with a note); "
                   "'all': every shipped model of the rows' formats, ranked by rows matched. "
                   "Default: the architecture of the device that made the observations.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Change a parameter of every model checked (repeatable); `tcsmt params` "
                   "lists them.")
@click.option("--show", default=3, show_default=True, type=click.IntRange(0, 100_000),
              help="Mismatching rows to show per model, each with the model's stages.")
@click.option("--limit", type=click.IntRange(min=1), help="Check only the first N rows.")
@click.option("--device", metavar="DEVICE",
              help="Run the vectors of OBSERVATIONS (any file of vectors) on a device first: "
                   "cuda[:N] or hip[:N] (a probe built with nvcc or hipcc, one launch on GPU N), "
                   "cuda-host:MODEL or hip-host:MODEL (the same probe run on this machine, d "
                   "computed by MODEL); then check the rows it returned.")
@click.option("--instruction", metavar="NAME",
              help="With --device: the instruction to run (default: the file's, else the usual one "
                   "for the formats).")
@click.option("--formats", metavar="IN:OUT",
              help="With --device: which vectors of a file that holds several (a coverage file).")
@click.option("--observations", "observations_out", metavar="FILE.json",
              help="With --device: where the rows are kept (default observed-DEVICE-NAME.json "
                   "here; an existing file is never written over).")
@options.json_format()
def check(source, models, overrides, show, limit, device, instruction, formats, observations_out,
          out_format):
    """Check OBSERVATIONS against one or more models, bit for bit.

    \b
    OBSERVATIONS is what a probe printed (tcsmt harness), a recorded
    DEVICE/FORMAT folder (data/hwdata/H100/fp16; its known problems are
    applied and named), or any file tcsmt writes that holds vectors (diff,
    find and prove results, coverage files, plans): there the outputs the
    file's hypotheses expect are compared with each model's.
    Every row runs through the batch simulator; the first mismatching rows
    are shown with every stage of the model's datapath (as simulate
    --explain). Exit status 1 when a model misses an observed row (with
    --arch all: when no model reproduces every row).
      tcsmt check results/hardware/H100/mma-f16-f32.json --arch hopper
      tcsmt check data/hwdata/A100/fp16 --arch ampere --arch volta
      tcsmt check results/hardware/H100/mma-f16-f32.json --arch all
      tcsmt check obs.json --arch hopper --set align_bits=1
      tcsmt check results/ampere/rounding.json --arch ampere
      tcsmt check --device cuda vecs/wgmma-e4m3-f32.vectors.json --arch hopper
    """
    from tcsmt import api
    from tcsmt.cli.options import echo_json
    from tcsmt.judge.check import all_matched
    from tcsmt.judge.check_text import text_lines
    if device is None and (instruction or formats or observations_out):
        raise click.UsageError("--instruction, --formats and --observations go with --device")
    doc = api.check(source, list(models), overrides=list(overrides), show=show, limit=limit,
                    device=device, instruction=instruction, formats=formats,
                    observations=observations_out, log=lambda text: click.echo(text, err=True))
    if out_format == "json":
        echo_json(doc)
    else:
        for line in text_lines(doc):
            click.echo(line)
    if not all_matched(doc):
        sys.exit(1)
