"""What ``tcsmt plan`` and ``tcsmt identify`` do, as calls that return the
documents the commands print (tcsmt.api.plan, tcsmt.api.identify): reading
observations (a probe's JSON or a recorded folder), choosing the plan and
space, narrowing, proving the class left and writing its model file, and the
loop with a simulated device."""

from __future__ import annotations

from pathlib import Path

from tcsmt.errors import UserError
from tcsmt.identify.classes import say


def build(formats=None, space_file=None, scales=None, instruction=None, output=None,
          pool: int = 4000, solver_budget: float = 240.0, seed: int = 0, log=None, progress=None) -> dict:
    """Build a plan for a space and write it (see tcsmt.identify.plan):
    {"output", "stats"} with the plan's statistics."""
    from tcsmt.identify.hypspace import space_for
    from tcsmt.identify.plan import build_plan, space_plan_name, write_plan
    from tcsmt.report.where import file_name, target
    space = space_for(formats, space_file, scales)
    if output is None:                  # a free name here: a plan takes minutes to build again
        name = "plan.json" if space_file else file_name("plan", Path(space_plan_name(space.base)).stem)
        output = str(target(name).path)
    p = build_plan(space, instruction, pool, seed, solver_budget, log=log, progress=progress)
    write_plan(output, p)
    return {"output": str(output), "stats": p.stats}


def plan_lines(doc: dict) -> list[str]:
    """What ``tcsmt plan`` prints of a built plan."""
    from tcsmt.identify.report import CLASS_STATUS
    s = doc["stats"]
    lines = [f"wrote {doc['output']}: {s['hypotheses']} hypotheses in {s['classes']} classes "
             f"({', '.join(f'{v} {k}' for k, v in s['class_status'].items())}), {s['vectors']} vectors"]
    lines += [f"  {n} {status}: {CLASS_STATUS.get(status, '')}" for status, n in s["class_status"].items()]
    lines.append(f"runs on the hardware: worst case {s['worst_case_runs']}, expected "
                 f"{s['expected_runs']} (classes equally likely), {s['expected_runs_per_hypothesis']} "
                 f"(hypotheses equally likely); planned in {s['planning_seconds']} s")
    return lines


def identify(observations=None, *, plan_file=None, formats=None, space_file=None, device=None,
             batch: str | None = None, instruction: str | None = None, observations_out=None,
             d_output: str = "fp32", limit: int | None = None, model_file=None,
             no_model_file: bool = False, prove: bool | None = None, timeout: float = 600.0,
             confirm: bool = True, log=None, progress=None) -> dict:
    """The identification report of OBSERVATIONS (or of the blind loop on
    ``device``): the document ``tcsmt identify`` prints; it has "failure"
    when no hypothesis explains an observation, verdict "unexplained" when
    nothing explains the device."""
    from tcsmt.probes.device import is_probe_device
    if device and observations:
        raise UserError("give OBSERVATIONS or --device, not both")
    if device and is_probe_device(device):
        from tcsmt.identify.ondevice import identify_on_device
        return identify_on_device(device, probe_plan(device, formats, plan_file), instruction=instruction,
                                  batch=batch or "frontier", observations=observations_out,
                                  prove=prove is not False, timeout=timeout, model_file=model_file,
                                  no_model_file=no_model_file, confirm=confirm, log=log)
    if device and (instruction or observations_out):
        raise UserError("--instruction and --observations go with --device cuda or hip")
    if device:
        return identify_sim(device, formats, plan_file, prove, timeout, log, batch or "one",
                            model_file, no_model_file, confirm)
    if not observations:
        raise UserError("missing OBSERVATIONS (a JSON file or a DEVICE/FORMAT folder), or --device sim:ARCH")
    from tcsmt.identify.narrow import identify as run
    from tcsmt.identify.report import report_record, shipped_check
    obs = load_observations(observations, d_output, limit)
    space, pl = choose_plan(plan_file, formats, space_file, obs)
    res = run(obs, space, pl, observations, log=log, progress=progress)
    extra = {"shipped": shipped_check(res)}
    if res.verdict == "identified":
        extra.update(finish_identified(res, prove, timeout, model_file, no_model_file, log))
    return report_record(res, extra)


def probe_plan(device: str, formats: str | None, plan_file):
    """The plan a GPU runs: --plan, else the committed plan of --formats."""
    from tcsmt.identify.plan import committed_plan, read_plan
    if plan_file:
        return read_plan(plan_file)
    if not formats:
        raise UserError(f"--device {device}: say which plan to run (--formats IN:OUT for a "
                        "committed plan, or --plan PLAN.json)")
    path = committed_plan(formats)
    if path is None:
        raise UserError(f"no committed plan for {formats}: make one with tcsmt plan --formats "
                        f"{formats} (or pass --plan PLAN.json)")
    return read_plan(path)


def load_observations(path: str, output: str, limit: int | None):
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


def choose_plan(plan_file, formats, space_file, obs):
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


def finish_identified(res, prove, timeout, model_file, no_model_file, log=None) -> dict:
    """Prove the class left (when asked, or when it has several circuits and
    no proof yet) and write the model file."""
    from tcsmt.identify.plan import plan_domain
    from tcsmt.identify.report import distinct_circuits, prove_class
    models = res.space.models()
    members = [models[i] for i in res.classes[0]]
    status = res.class_status[0]
    out: dict = {}
    domain = res.plan.domain if res.plan is not None else plan_domain(res.obs.fin, res.obs.fout)
    proof_text = f"class status in the plan: {status}"
    if len(members) > 1 and (prove or (prove is None and status == "open"
                                       and len(distinct_circuits(members, res.obs.k)) > 1)):
        say(log, f"proving the {len(members)} hypotheses left equal on the plan's domain")
        out["proof"] = prove_class(members, res.obs.k, domain, None, timeout)
        proof_text = f"proof: {out['proof']['verdict']} by {', '.join(out['proof']['proved_by']) or '-'}"
    if not no_model_file:
        from tcsmt.identify.report import write_identified
        out["model_file"] = write_identified(members, res.space, res.obs, res.source, proof_text,
                                             model_file)
    return out


def identify_sim(device, formats, plan_file, prove, timeout, log=None, batch: str = "one",
                 model_file=None, no_model_file: bool = False, confirm: bool = True) -> dict:
    """Blind identification of a simulated unit (``sim:FILE`` or
    ``sim:ARCH``): both phases on the plan of its formats
    (tcsmt.identify.blind; phase 1 alone without ``confirm``), then the
    check against its own parameters; the model file written when it is
    identified. The document of tcsmt.identify.verdict."""
    from tcsmt.fileio import refuse_overwriting
    from tcsmt.identify.simdevice import parse_device, run_sim
    from tcsmt.identify.verdict import document, write_model_file
    spec = parse_device(device)
    refuse_overwriting(model_file, {"--device": spec}, "--model-file")
    def keep(rec: dict) -> None:
        if rec["verdict"] == "identified" and not no_model_file:
            rec["model_file"] = write_model_file(rec, model_file)
            say(log, f"model file written: {rec['model_file']} (checking the verdict next)")

    rec = run_sim(spec, formats, plan_file, prove=prove is not False, timeout=timeout, log=log,
                  confirm=confirm, batch=batch, on_verdict=keep)
    return document(rec)


def identify_lines(rec: dict) -> list[str]:
    """What ``tcsmt identify`` prints of its document."""
    if "device_spec" in rec:
        from tcsmt.identify.ondevice import device_lines
        return device_lines(rec)
    if "phase1" in rec:
        from tcsmt.identify.verdict import lines
        return lines(rec)
    from tcsmt.identify.report import text_lines
    return text_lines(rec)
