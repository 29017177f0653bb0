"""``tcsmt plan`` and ``tcsmt identify``: find out which hypothesis an
unknown matrix unit follows, with as few hardware runs as possible."""

from __future__ import annotations

from pathlib import Path

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
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
                            console=Console(stderr=True), transient=False)
        self.bar.__enter__()
        self.tasks: dict[str, int] = {}
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
@click.option("-o", "--output", metavar="PLAN.json",
              help="Where to write the plan (default: results/plans/IN-OUT.json for the default "
                   "space, else plan.json).")
@click.option("--candidates", "pool", default=4000, show_default=True,
              help="Candidate vectors every hypothesis is run on.")
@click.option("--solver-budget", default=240.0, show_default=True,
              help="Seconds the solvers may spend looking for inputs that split classes.")
@click.option("--seed", default=0, show_default=True, help="Seed of the random candidate vectors.")
@options.scheduler
def plan(formats, space_file, scales, instruction, output, pool, solver_budget, seed):
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
      tcsmt plan --formats fp16:fp32            (writes results/plans/fp16-fp32.json)
      tcsmt harness results/plans/fp16-fp32.json --target cuda -o probe.cu
      tcsmt identify observations.json --plan results/plans/fp16-fp32.json
    """
    from tcsmt.identify.hypspace import space_for
    from tcsmt.identify.plan import build_plan, plans_dir, space_plan_name, write_plan
    space = space_for(formats, space_file, scales)
    if output is None:
        output = str(plans_dir() / space_plan_name(space.base)) if not space_file else "plan.json"
    with _Bars() as bars:
        p = build_plan(space, instruction, pool, seed, solver_budget, log=bars.log, progress=bars)
    write_plan(output, p)
    s = p.stats
    click.echo(f"wrote {output}: {s['hypotheses']} hypotheses in {s['classes']} classes "
               f"({', '.join(f'{v} {k}' for k, v in s['class_status'].items())}), {s['vectors']} vectors")
    from tcsmt.identify.report import CLASS_STATUS
    for status, n in s["class_status"].items():
        click.echo(f"  {n} {status}: {CLASS_STATUS.get(status, '')}")
    click.echo(f"runs on the hardware: worst case {s['worst_case_runs']}, expected "
               f"{s['expected_runs']} (classes equally likely), {s['expected_runs_per_hypothesis']} "
               f"(hypotheses equally likely); planned in {s['planning_seconds']} s")


def _load_observations(path: str, output: str, limit: int | None):
    from tcsmt.observed.observations import parse_observations, read_observations
    from tcsmt.probes.harness import observations_from_hwdata
    p = Path(path)
    if p.is_dir():
        data = observations_from_hwdata(p, output, limit=limit)
        return parse_observations(data, str(p))
    obs = read_observations(p)
    if limit:
        obs.rows = obs.rows[:limit]
    return obs


def _choose_plan(plan_file, formats, space_file, obs):
    """(space, plan or None) for the observations."""
    from tcsmt.identify.hypspace import space_for
    from tcsmt.identify.plan import committed_plan, read_plan
    from tcsmt.model.names import short_format
    if plan_file and space_file:
        raise UserError("give --plan or --space, not both (a plan carries its space)")
    if plan_file:
        pl = read_plan(plan_file)
        return pl.space, pl
    fmts = formats or f"{short_format(obs.fin.name)}:{short_format(obs.fout.name)}"
    scales = f"{obs.fscale.name}/{obs.scale_block}" if obs.fscale is not None else None
    space = space_for(fmts, space_file, None if space_file else scales)
    if not space_file:
        path = committed_plan(fmts, scales)
        if path is not None:
            pl = read_plan(path)
            if pl.space.digest() == space.digest():
                return space, pl
    return space, None


@click.command("identify")
@click.argument("observations", required=False, metavar="[OBSERVATIONS]")
@click.option("--plan", "plan_file", metavar="PLAN.json", help="The plan the vectors came from.")
@click.option("--formats", metavar="IN:OUT", help="Format pair of the default space (and plan).")
@click.option("--space", "space_file", metavar="FILE", help="A space file (TOML: base and axes).")
@click.option("--device", metavar="sim:ARCH",
              help="Play the unknown unit with a shipped model and run the whole loop.")
@click.option("--batch", type=click.Choice(["one", "frontier", "plan"]), default=None,
              help="What one launch on the --device runs: the plan's next vector (one; the "
                   "default for sim:), that vector and every vector the plan may ask for right "
                   "after it (frontier; the default for cuda and hip), or the whole plan. Runs "
                   "count the vectors on the plan's path, whatever the batch.")
@click.option("--output", "d_output", type=click.Choice(["fp32", "fp16"]), default="fp32",
              show_default=True, help="Which recorded d of a hwdata folder to read.")
@click.option("--limit", type=int, help="Read only the first N rows.")
@click.option("-o", "--report", metavar="FILE", help="Write the report as JSON.")
@click.option("--model-file", metavar="FILE.toml",
              help="Where to write the model when one class remains (default: "
                   "identified-DEVICE-IN-OUT.toml).")
@click.option("--no-model-file", is_flag=True, help="Do not write a model file.")
@click.option("--prove/--no-prove", default=None,
              help="Prove with the solvers that the class left is one behaviour (default: on "
                   "for --device, and for a class with several circuits).")
@click.option("--timeout", default=600.0, show_default=True, help="Seconds for a proof.")
@options.scheduler
def identify(observations, plan_file, formats, space_file, device, batch, d_output, limit, report,
             model_file, no_model_file, prove, timeout):
    """Which hypotheses explain OBSERVATIONS, and what to run next.

    \b
    OBSERVATIONS is the JSON a probe prints (tcsmt harness), or a recorded
    DEVICE/FORMAT folder in the layout of data/hwdata (its known problems
    are applied and reported). The answer: the hypotheses still consistent
    (their parameter values), the vector to run next when more than one
    class remains, and when one remains a model file for models/.
      tcsmt identify observations.json --plan results/plans/fp16-fp32.json
      tcsmt identify data/hwdata/A100/fp16
      tcsmt identify --device sim:hopper     (a shipped model plays the unit:
                                              the whole loop, runs counted)
    Without --plan or --space, the committed plan of the observations'
    formats is used (results/plans/), else the default space.
    Exit status 0 when hypotheses remain; 2 with "error: no hypothesis in
    the space explains observation N" (after the closest hypotheses) when
    none does, and 2 with a one-line error for bad input.
    """
    from tcsmt.fileio import refuse_overwriting, write_json_atomic
    inputs = {"OBSERVATIONS": observations, "--plan": plan_file, "--space": space_file}
    refuse_overwriting(report, inputs, "-o")
    refuse_overwriting(model_file, {**inputs, "-o": report}, "--model-file")
    if device:
        return _identify_sim(device, formats, plan_file, report, prove, timeout, batch or "one")
    if not observations:
        raise UserError("missing OBSERVATIONS (a JSON file or a DEVICE/FORMAT folder), or --device sim:ARCH")
    from tcsmt.identify.narrow import identify as run
    from tcsmt.identify.report import report_record, shipped_check, text_lines
    obs = _load_observations(observations, d_output, limit)
    space, pl = _choose_plan(plan_file, formats, space_file, obs)
    with _Bars() as bars:
        res = run(obs, space, pl, observations, log=bars.log, progress=bars)
    extra = {"shipped": shipped_check(res)}
    if res.verdict == "identified":
        extra.update(_finish_identified(res, prove, timeout, model_file, no_model_file))
    rec = report_record(res, extra)
    for line in text_lines(rec):
        click.echo(line)
    if report:
        write_json_atomic(report, rec)
        _log(f"wrote {report}")
    if res.failure:
        raise UserError(f"no hypothesis in the space explains observation {res.failure['index']}")


def _finish_identified(res, prove, timeout, model_file, no_model_file) -> dict:
    """Prove the class left (when asked, or when it has several circuits and
    no proof yet) and write the model file."""
    from tcsmt.identify.plan import plan_domain
    from tcsmt.identify.report import distinct_circuits, prove_class
    from tcsmt.model.modelfile import identified_sources, model_for_class, render, slug, write_model
    from tcsmt.model.names import short_format
    models = res.space.models()
    members = [models[i] for i in res.classes[0]]
    status = res.class_status[0]
    out: dict = {}
    domain = res.plan.domain if res.plan is not None else plan_domain(res.obs.fin, res.obs.fout)
    proof_text = f"class status in the plan: {status}"
    if len(members) > 1 and (prove or (prove is None and status == "open"
                                       and len(distinct_circuits(members, res.obs.k)) > 1)):
        _log(f"proving the {len(members)} hypotheses left equal on the plan's domain")
        out["proof"] = prove_class(members, res.obs.k, domain, None, timeout)
        proof_text = f"proof: {out['proof']['verdict']} by {', '.join(out['proof']['proved_by']) or '-'}"
    if no_model_file:
        return out
    obs = res.obs
    name = f"identified-{slug(obs.device)}-{short_format(obs.fin.name)}-{short_format(obs.fout.name)}"
    evidence = f"{res.source}: {len(obs.rows)} observations of {obs.device}, {obs.instruction}"
    p = model_for_class(members, name, "identified", obs.device, obs.instruction,
                        f"identified by tcsmt identify from {Path(res.source).name}")
    sources = identified_sources(members, res.space.axes(), evidence, proof_text, res.space.name)
    header = [f"{name}: identified by tcsmt identify from {res.source}",
              f"{len(members)} hypotheses of the space {res.space.name} reproduce every row; "
              f"the first is written"]
    path = model_file or f"{name}.toml"
    write_model(path, render(p, sources, header))
    out["model_file"] = path
    return out


def _identify_sim(device, formats, plan_file, report, prove, timeout, batch):
    from tcsmt.fileio import write_json_atomic
    from tcsmt.identify.plan import committed_plan, read_plan
    from tcsmt.identify.simdevice import parse_device, run_sim, sim_lines
    from tcsmt.model.choose import choose
    from tcsmt.model.names import short_format
    arch = parse_device(device)
    p = choose(arch, formats)
    fmts = f"{short_format(p.in_format)}:{short_format(p.out_format)}"
    scales = f"{short_format(p.scale_format)}/{p.scale_block}" if p.fscale is not None else None
    path = plan_file or committed_plan(fmts, scales)
    if path is None:
        how = f"--formats {fmts}" + (f" --scales {scales}" if scales else "")
        raise UserError(f"no committed plan for {fmts}{' with ' + scales + ' scales' if scales else ''}: "
                        f"make one with tcsmt plan {how} (or pass --plan PLAN.json)")
    pl = read_plan(path)
    rec = run_sim(arch, formats, pl, prove=prove is not False, timeout=timeout, log=_log,
                  batch=batch)
    for line in sim_lines(rec):
        click.echo(line)
    if report:
        write_json_atomic(report, rec)
        _log(f"wrote {report}")
    if rec.get("failure"):
        raise UserError(f"no hypothesis in the space explains run {rec['failure']['run']} "
                        f"of the simulated {p.name}")

