"""``tcsmt plan`` and ``tcsmt identify``: find out which hypothesis an
unknown matrix unit follows, with as few hardware runs as possible."""

from __future__ import annotations

import click

from tcsmt.cli import options
from tcsmt.errors import UserError


def _log(text: str) -> None:
    click.echo(text, err=True)


class _Bars:
    """Progress bars on stderr, one per phase, with the time left; a
    ``progress(what, done, total)`` callback for the library."""

    def __enter__(self):
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskID,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
                            console=Console(stderr=True), transient=False)
        self.bar.__enter__()
        self.tasks: dict[str, TaskID] = {}
        return self

    def __call__(self, what: str, done: int, total: int) -> None:
        if what not in self.tasks:
            self.tasks[what] = self.bar.add_task(what, total=total)
        self.bar.update(self.tasks[what], completed=done, total=total)

    def log(self, text: str) -> None:
        self.bar.console.print(text, markup=False, highlight=False)

    def __exit__(self, *exc):
        return self.bar.__exit__(*exc)


@click.command("plan")
@click.option("--formats", metavar="IN:OUT", help="Format pair, e.g. fp16:fp32 (default space).")
@click.option("--space", "space_file", metavar="FILE", help="A space file (TOML: base and axes).")
@click.option("--scales", metavar="FORMAT/BLOCK",
              help="Block scales of the space, e.g. ue4m3/16 with --formats e2m1:fp32 (NVFP4): "
                   "the scales are inputs of the plan's vectors.")
@click.option("--instruction", metavar="NAME",
              help="Instruction the vectors run on (its k is the plan's k); default: the usual "
                   "mma.sync for the formats.")
@click.option("-o", "--output", metavar="PLAN.json", callback=options.checked_output,
              help="Where to write the plan (default: plan-IN-OUT.json here for the default "
                   "space, else plan.json; -2, -3... when that exists).")
@click.option("--candidates", "pool", type=options.SIZE, default=4000, show_default=True,
              help="Candidate vectors every hypothesis is run on.")
@click.option("--solver-budget", type=options.Finite(0, options.MAX_SECONDS), default=240.0,
              show_default=True,
              help="Seconds the solvers may spend looking for inputs that split classes "
                   "and then proving the classes left one function (sweeping).")
@click.option("--seed", type=options.SEED, default=0, show_default=True,
              help="Seed of the random candidate vectors.")
@options.json_format()
@options.scheduler
@options.emit_smt2
def plan(formats, space_file, scales, instruction, output, pool, solver_budget, seed, out_format):
    """Build a decision procedure that tells the hypotheses of a space apart.

    \b
    Every hypothesis of the space runs on a few thousand candidate vectors;
    the solvers look for inputs that split what the candidates leave
    together. The plan holds the first vector to run and, for every output
    the unit may return, the next one, until one class of hypotheses is
    left (hypotheses that build one circuit, were proved equal, or that
    nothing found could separate). It prints the worst-case and expected
    number of hardware runs. The default space for --formats varies
    block_size 1..32, align_bits 0..3, align_rounding, final_rounding,
    product_alignment, normalisation, subnormals and chaining (fp8, fp16
    and bf16 with fp32 output add small parts, see tcsmt/identify/hypspace.py).
    With --scales (NVFP4: --formats e2m1:fp32 --scales ue4m3/16) the space
    varies what the published readings of block-scaled units leave open.

    \b
    The plan is also a vectors file:
      tcsmt plan --formats fp16:fp32            (writes plan-fp16-fp32.json here)
      tcsmt harness plan-fp16-fp32.json --target cuda -o probe.cu
      tcsmt identify observations.json --plan plan-fp16-fp32.json
    (the committed plans, results/plans/, are found by name: tcsmt harness
    fp16-fp32)
    """
    from tcsmt import api
    from tcsmt.identify.workflow import plan_lines
    with _Bars() as bars:
        doc = api.plan(formats, space=space_file, scales=scales, instruction=instruction,
                       output=output, candidates=pool, solver_budget=solver_budget, seed=seed,
                       log=bars.log, progress=bars)
    if out_format == "json":
        options.echo_json(doc)
        return
    for line in plan_lines(doc):
        click.echo(line)


@click.command("identify")
@click.argument("observations", required=False, metavar="[OBSERVATIONS]")
@click.option("--plan", "plan_file", metavar="PLAN.json", help="The plan the vectors came from.")
@click.option("--formats", metavar="IN:OUT", help="Format pair of the default space (and plan).")
@click.option("--space", "space_file", metavar="FILE", help="A space file (TOML: base and axes).")
@click.option("--device", metavar="DEVICE",
              help="Run the whole loop on a device: sim:FILE or sim:ARCH (a model plays the "
                   "unit, blind: its parameters are read only after the verdict), "
                   "cuda[:N] or hip[:N] (probes built with nvcc or hipcc and run on GPU N), "
                   "cuda-host:MODEL or hip-host:MODEL (the same probes run on this machine, "
                   "their d computed by MODEL: no GPU needed).")
@click.option("--instruction", metavar="NAME",
              help="With cuda or hip: the instruction the plan's vectors run on (its k must be "
                   "the plan's; default the plan's, or the target's for the formats).")
@click.option("--observations", "observations_out", metavar="FILE.json",
              help="With cuda or hip: where every row the device ran is kept (default "
                   "observed-DEVICE-PLAN.json here; an existing file is never written over).")
@click.option("--batch", type=click.Choice(["one", "frontier", "plan"]), default=None,
              help="What one launch on the --device runs: the plan's next vector (one; the "
                   "default for sim:), that vector and every vector the plan may ask for right "
                   "after it (frontier; the default for cuda and hip), or the whole plan, in "
                   "phase 1. Its runs count the vectors on the plan's path, whatever the batch.")
@click.option("--output", "d_output", type=click.Choice(["fp32", "fp16"]), default="fp32",
              show_default=True, help="Which recorded d of a hwdata folder to read.")
@click.option("--limit", type=options.SIZE, help="Read only the first N rows.")
@click.option("-o", "--report", metavar="FILE", callback=options.checked_output,
              help="Write the report as JSON.")
@click.option("--model-file", metavar="FILE.toml", callback=options.checked_output,
              help="Where to write the model when one class remains, or with --device when the "
                   "unit is identified (default: identified-DEVICE-IN-OUT.toml).")
@click.option("--no-model-file", is_flag=True, help="Do not write a model file.")
@click.option("--prove/--no-prove", default=None,
              help="Prove with the solvers that the class left is one behaviour (default: on "
                   "for --device, and for a class with several circuits).")
@click.option("--timeout", type=options.SECONDS, default=600.0, show_default=True,
              help="Seconds for a proof.")
@click.option("--no-confirm", is_flag=True,
              help="With --device: stop after phase 1, the plan's adaptive search (no model file).")
@options.json_format()
@options.scheduler
@options.emit_smt2
def identify(observations, plan_file, formats, space_file, device, instruction, observations_out,
             batch, d_output, limit, report, model_file, no_model_file, prove, timeout,
             no_confirm, out_format):
    """Which hypotheses explain OBSERVATIONS, and what to run next.

    \b
    OBSERVATIONS is the JSON a probe prints (tcsmt harness), or a recorded
    DEVICE/FORMAT folder in the layout of data/hwdata (its known problems
    are applied and reported). The answer: the hypotheses still consistent
    (their parameter values), the vector to run next when more than one
    class remains, and when one remains a model file for models/.
      tcsmt identify observations.json --plan results/plans/fp16-fp32.json
      tcsmt identify data/hwdata/A100/fp16
      tcsmt identify --device cuda --formats fp16:fp32   (on GPU 0)
      tcsmt identify --device cuda-host:hopper --formats fp16:fp32
    A run is one vector on the plan's path; a launch is one probe built and
    run (--batch). With cuda and hip every row is kept in an observations
    file, with the device, driver and compiler: replay it offline with
    tcsmt identify FILE, or tcsmt check FILE (docs/gpu.md).
    Without --plan or --space, the committed plan of the observations'
    formats is used (results/plans/), else the default space.

    \b
    --device identifies a unit blind, in two phases, from its outputs alone:
      tcsmt identify --device sim:unit.toml --model-file out.toml
      1. the plan's adaptive search: run the plan's next vector, follow the
         branch of the output, until one class of the plan's space is left;
         a RUN is one vector on the plan's path (--batch says how many
         vectors one launch of the unit holds);
      2. confirmation: the models one and two parameters around the shipped
         models and that class that reproduce every row; the best is checked
         on its property vectors and random rows of every kind in one
         LAUNCH of many vectors (a probe); rows it misses name the
         parameters they are about and the search moves to the model that
         explains every row; models one parameter away that still agree
         are split by more rows or proved the same.
    The verdict is "identified" (the model file starts from the nearest
    shipped model and lists what differs, each value with the rows it was
    read from) or "unexplained" (the rows the closest model misses). A
    model playing the unit (sim:) is compared with the verdict afterwards.
    Exit status 0 when hypotheses remain; 2 with "error: no hypothesis in
    the space explains observation N" (after the closest hypotheses) when
    none does, and 2 with a one-line error for bad input.
    """
    from tcsmt import api
    from tcsmt.identify.workflow import identify_lines
    kw = dict(plan=plan_file, formats=formats, space=space_file, device=device, batch=batch,
              instruction=instruction, observations_out=observations_out, output=d_output,
              limit=limit, report=report, model_file=model_file, no_model_file=no_model_file,
              prove=prove, timeout=timeout, confirm=not no_confirm)
    if device and out_format != "json":      # the loop says what it runs, line by line
        rec = api.identify(observations, log=_log, **kw)
    else:
        with _Bars() as bars:
            rec = api.identify(observations, log=bars.log, progress=bars, **kw)
    if out_format == "json":
        options.echo_json(rec)
    else:
        for line in identify_lines(rec):
            click.echo(line)
    if report:
        _log(f"wrote {report}")
    message = _failure(rec)
    if message:
        raise UserError(message)


def _failure(rec: dict) -> str | None:
    """The error an identification ends with when no hypothesis explains the
    unit (None when one does)."""
    if rec.get("verdict") == "unexplained":
        return f"nothing within two parameters of a known model explains {rec['device']}"
    fail = rec.get("failure")
    if not fail:
        return None
    if "run" in fail:
        who = f"the simulated {rec['model']}" if "model" in rec else rec["device"]
        return f"no hypothesis in the space explains run {fail['run']} of {who}"
    return f"no hypothesis in the space explains observation {fail['index']}"
