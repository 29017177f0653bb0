"""``tcsmt identify --device cuda[:N]`` (``hip[:N]``, ``cuda-host:MODEL``,
``hip-host:MODEL``): the identification loop on a GPU, through probes.

The device is a ``tcsmt.probes.device.ProbeDevice``: each launch writes a
probe for the vectors asked for, builds it for the GPU's architecture,
runs it and reads d back. Both phases run on it as ``--device sim:ARCH``
runs them on a model (tcsmt.identify.blind): phase 1 walks the plan (a
launch holds what ``batch`` says); phase 2 confirms the class it ends in on
vectors it was not chosen from (property vectors and random rows, one
launch of many vectors each, and the few rows that split rivals), each
launch one more probe built and run on the GPU. Rows of another k (rivals
that differ only at a second k) run in a probe of an instruction of that
k with the same formats on the same GPU (tcsmt.identify.otherk), or are
refused with the reason when the table holds none that computes the same. The verdict is
"identified" with its model file, or "unexplained" with the rows. With
``--no-confirm`` the loop of tcsmt.identify.loop runs instead: phase 1 and
the solvers' proof of its class, a witness that splits it run on the GPU
as one more launch. Every row the GPU ran is in the observations file,
with the device, its runtime and driver and the compiler, written after
every launch: the run is replayed offline by ``tcsmt identify FILE --plan
PLAN`` and ``tcsmt check FILE``.
"""

from __future__ import annotations

import time
from pathlib import Path

from tcsmt.errors import UserError
from tcsmt.identify.loop import run_loop, runs_line
from tcsmt.identify.plan import Plan
from tcsmt.instructions.instruction import AMD_APIS, Instruction
from tcsmt.version import __version__


def device_instruction(plan: Plan, name: str | None, target: str) -> Instruction:
    """The instruction the plan's vectors run on with this target: the
    plan's own, else the one named, else the target's for the formats with
    the plan's k."""
    from tcsmt.instructions.table import all_instructions, choose_instruction, instruction_by_name
    own = instruction_by_name(plan.instruction)
    if name is None and (own.api in AMD_APIS) == (target == "hip"):
        return own
    p = plan.space.base
    ins = choose_instruction(p.fin.name, p.fc.name, p.fout.name, name, fb=p.fb.name,
                             scale=p.fscale.name if p.fscale else "", scale_block=p.scale_block or 0,
                             target=target)
    if name is None and ins.k != plan.k:
        same_k = [i for i in all_instructions() if i.key() == ins.key() and i.k == plan.k
                  and (i.api in AMD_APIS) == (target == "hip")]
        ins = same_k[0] if same_k else ins
    if ins.k != plan.k:
        raise UserError(f"the plan's vectors have k = {plan.k}; {ins.name} takes k = {ins.k}: "
                        "name an instruction with that k (--instruction; tcsmt harness "
                        f"--list-instructions --target {target})")
    return ins


def identify_on_device(device: str, plan: Plan, *, instruction: str | None = None,
                       batch: str = "frontier", observations: str | Path | None = None,
                       prove: bool = True, timeout: float = 600.0, model_file: str | None = None,
                       no_model_file: bool = False, confirm: bool = True, log=None) -> dict:
    """Both phases on a probe device (``confirm``; tcsmt.identify.blind, as
    ``--device sim`` runs them), else phase 1 and the proof of its class
    (tcsmt.identify.loop); the document identify --device prints."""
    from tcsmt.identify.otherk import instruction_for_k
    from tcsmt.identify.plan import space_plan_name
    from tcsmt.probes.device import ProbeDevice, observations_path, parse_device_spec
    spec = parse_device_spec(device)
    ins = device_instruction(plan, instruction, spec.target)
    t0 = time.monotonic()
    with ProbeDevice(spec, ins, log=log, generator=f"tcsmt {__version__} identify --device {spec.text}",
                     other_k=instruction_for_k) as dev:
        what = Path(plan.source).stem if plan.source else space_plan_name(plan.space.base)
        path = Path(observations) if observations else observations_path(dev.device_name, what)
        dev.record_to(path)
        if confirm:
            return _both_phases(dev, plan, path, batch, prove, model_file, no_model_file, log,
                                {"device_spec": spec.text, "instruction": ins.name})
        rec = run_loop(dev, plan, prove, timeout, log, batch)
        rec.update(device_spec=spec.text, instruction=ins.name, toolchain=dev.tc.record(),
                   observations=str(path), rows_observed=len(dev.rows))
        if dev.model is not None:
            rec["host_model"] = dev.model.name
    left = rec.get("class_left", rec.get("members"))
    if left and not no_model_file and rec["verdict"] != "outside the space":
        rec["model_file"] = _model_file(plan, left, rec, path, model_file)
    rec["seconds"] = round(time.monotonic() - t0, 1)
    return rec


def _both_phases(dev, plan: Plan, path: Path, batch: str, prove: bool, model_file, no_model_file: bool,
                 log, about: dict) -> dict:
    """Phase 1 and confirmation through the probes (every confirming row
    written into a probe, built, run and read back like the plan's); the
    blind document (tcsmt.identify.verdict) with the device, the toolchain
    and the observations file; the model file written when identified."""
    from tcsmt.identify.blind import identify_blind
    from tcsmt.identify.setting import shipped_like
    from tcsmt.identify.verdict import document, write_model_file
    fmt = plan.space.base
    rec = identify_blind(dev, fmt, plan.k, plan, shipped_like(fmt), log, confirm=True, prove=prove,
                         batch=batch)
    doc = document(rec)
    doc.update(about, toolchain=dev.tc.record(), observations_file=str(path), rows_observed=len(dev.rows))
    others = sorted({(x["k"], x["instruction"]) for x in dev.launch_records if x["k"] != dev.ins.k})
    if others:
        doc["instructions_at_other_k"] = [{"instruction": n, "k": k} for k, n in others]
    if dev.model is not None:
        doc["host_model"] = dev.model.name
    if doc["verdict"] == "identified" and not no_model_file:
        doc["model_file"] = write_model_file(rec, model_file)
    return doc


def _model_file(plan: Plan, names: list[str], rec: dict, path: Path, model_file: str | None) -> str:
    from tcsmt.identify.report import proof_line, write_identified
    from tcsmt.observed.observations import read_observations
    members = [m for m in plan.models() if m.name in set(names)]
    proof = proof_line(rec["proof"]) if rec.get("proof") else f"class status: {rec['class_status']}"
    return write_identified(members, plan.space, read_observations(path), str(path), proof, model_file)


def device_lines(rec: dict) -> list[str]:
    """What identify --device cuda prints: the loop's lines, then where the
    observations and the model went."""
    if "phase1" in rec:
        from tcsmt.identify.verdict import lines
        out = lines(rec)
        obs = rec["observations_file"]
    else:
        out = loop_lines(rec)
        obs = rec["observations"]
    tc = rec["toolchain"]
    extra = [f"instruction {rec['instruction']}, {tc['compiler']}"
             + (f", runtime {tc['runtime']}, driver {tc.get('driver_release', tc['driver'])}"
                if "runtime" in tc else f", d computed by {rec.get('host_model')} on the host")]
    extra += [f"rows of k = {x['k']} through {x['instruction']}"
              for x in rec.get("instructions_at_other_k", [])]
    extra.append(f"observations: {obs} ({rec['rows_observed']} rows; "
                 f"replay: tcsmt identify {obs} --plan {rec['plan']}, tcsmt check {obs})")
    if rec.get("model_file") and "phase1" not in rec:       # the blind lines name it
        extra.append(f"model file: {rec['model_file']}")
    return out[:-1] + extra + out[-1:]


def loop_lines(rec: dict) -> list[str]:
    """The loop's record as lines: the runs, the class or the output no
    branch holds, the proof, the verdict."""
    from tcsmt.identify.report import proof_line, status_words
    out = [f"device {rec['device']}, plan {rec['plan']}"]
    for s in rec["steps"]:
        src = "" if isinstance(s["vector"], int) else f" ({s['vector']})"
        scales = (f", scale_a = [{' '.join(s['scale_a'])}], scale_b = [{' '.join(s['scale_b'])}]"
                  if "scale_a" in s else "")
        out.append(f"  run {s['run']}{src}: a = [{' '.join(s['a'])}], b = [{' '.join(s['b'])}], "
                   f"c = {s['c']}{scales} -> d = {s['d']}")
    out.append(runs_line(rec))
    if rec.get("failure"):
        f = rec["failure"]
        out.append(f"no hypothesis in the space explains run {f['run']} (d = {f['d']}); closest outputs:")
        for c in f["closest"]:
            out.append(f"  {c['d']}: {c['ulps']} ulp, {c['bits_differing']} bits off "
                       f"({c['classes']} classes, e.g. {c['example']})")
    else:
        n = rec["class_size"]
        out.append(f"class {rec['cls']} ({n} hypothes{'is' if n == 1 else 'es'}; "
                   f"{status_words(rec['class_status'])}): {rec['members'][0]}"
                   + (f" and {n - 1} more" if n > 1 else ""))
    if rec.get("proof"):
        out.append("  class " + proof_line(rec["proof"]))
    if rec.get("class_left") and len(rec["class_left"]) < rec["class_size"]:
        out.append(f"  left after the witnesses: {len(rec['class_left'])} of {rec['class_size']}")
    out.append(f"verdict: {rec['verdict']} ({rec['seconds']} s)")
    return out
