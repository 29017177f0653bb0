"""``tcsmt identify --device sim:ARCH``: a shipped model plays the unknown unit.

The loop is the one a real device runs (``tcsmt.identify.loop``): take the
plan's first vector, run it on the device (here: the model), follow the
branch of the output it returns, until one class of hypotheses remains.
Then the class is checked against the device's model with the solvers:
one formula holds the device's model and one member per distinct circuit
of the class, and asks for an input of the plan's domain on which
some member's output differs from the device's (run_diff, cross-checked).
UNSAT proves that the class is the device's behaviour on that domain, also
where the device's model has parameters the space does not vary
(min_exponent floors, carry_bits = 3 on Volta). SAT means the device is
outside the space: its witness is replayed and reported.
"""

from __future__ import annotations

import time

from tcsmt.enums import Verdict
from tcsmt.errors import UserError
from tcsmt.identify.loop import ModelDevice, run_loop, runs_line
from tcsmt.identify.plan import Plan, formats_record
from tcsmt.identify.report import projection, prove_class
from tcsmt.model.choose import choose
from tcsmt.model.params import ModelParams

NOT_IN_CLASS = ("not recovered: the device's values are not in the class it ends in "
                "(not proved: --no-prove)")


def parse_device(text: str) -> str:
    kind, sep, arch = text.partition(":")
    if kind != "sim" or not sep or not arch.strip():
        raise UserError(f"--device {text!r}: expected sim:ARCH (such as sim:hopper), cuda[:N], "
                        "hip[:N], cuda-host:MODEL or hip-host:MODEL")
    return arch.strip()


def run_sim(arch, formats: str | None, plan: Plan, prove: bool = True, timeout: float = 600.0,
            log=None, batch: str = "one") -> dict:
    """The loop with ``arch`` (an architecture or model name, or a
    ModelParams) as the device."""
    p = arch if isinstance(arch, ModelParams) else choose(arch, formats)
    arch = p.arch if isinstance(arch, ModelParams) else arch
    scales = (p.scale_block if p.fscale else 0, plan.scale_block)
    if formats_record(p) != formats_record(plan.space.base) or scales[0] != scales[1]:
        def label(q, block):
            return q.formats_label + (f" with {q.fscale.name} scales per {block}" if block else "")
        raise UserError(f"{p.name} computes {label(p, scales[0])}; the plan is for "
                        f"{label(plan.space.base, scales[1])}")
    t0 = time.monotonic()
    models = plan.models()
    idx, outside = projection(plan.space, p)
    rec: dict = {"device": f"sim:{arch}", "model": p.name,
           "space_hypothesis": models[idx].name if idx is not None else None,
           "outside_the_space": {k: getattr(p, k) for k in outside}}
    rec.update(run_loop(ModelDevice(p, f"sim:{arch}"), plan, prove, timeout, log, batch))
    if "cls" in rec:
        rec["projection_in_class"] = idx in plan.classes[rec["cls"]].members
        if not prove:
            rec["verdict"] = ("recovered (not proved: --no-prove)" if rec["projection_in_class"]
                              else NOT_IN_CLASS)
        elif rec["class_left"]:
            _prove_device(rec, p, plan, idx, outside, timeout)
    rec["seconds"] = round(time.monotonic() - t0, 1)
    return rec


def _prove_device(rec, p, plan: Plan, idx, outside, timeout) -> None:
    """The device: equal to the space's hypothesis with its values (same
    circuit, after lemmas for the parameters the space does not vary;
    tcsmt.identify.lemmas), else the solvers on the device against the
    class left."""
    from tcsmt.identify.lemmas import same_circuit, settle_outside
    models = plan.models()
    members = [m for m in models if m.name in set(rec["class_left"])]
    if idx is not None and models[idx].name in rec["class_left"]:
        hyp = models[idx]
        if outside:
            dev = settle_outside(p, hyp, outside, plan.k, plan.domain, min(timeout, 300.0))
        else:
            same = same_circuit(p, hyp, plan.k)
            dev = {"verdict": "unsat" if same else "unknown", "lemmas": [],
                   "same_circuit_after_lemmas": same}
        dev["hypothesis"] = hyp.name
    else:
        dev = prove_class(members, plan.k, plan.domain, p, timeout)
    rec["device_proof"] = dev
    verdicts = {rec["proof"]["verdict"], dev["verdict"]}
    rec["verdict"] = ("outside the space" if "sat" in verdicts else
                      "recovered" if verdicts == {"unsat"} else "recovered, not proved")


def sim_lines(rec: dict) -> list[str]:
    """What identify --device prints: the runs, the class, the proofs, the
    verdict (a simulated device's own values and proof where it has them)."""
    model = f" ({rec['model']})" if "model" in rec else ""
    out = [f"device {rec['device']}{model}, plan {rec['plan']}"]
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
        from tcsmt.identify.report import status_words
        out.append(f"class {rec['cls']} ({n} hypothes{'is' if n == 1 else 'es'}; "
                   f"{status_words(rec['class_status'])}): "
                   f"{rec['members'][0]}"
                   + (f" and {rec['class_size'] - 1} more" if rec["class_size"] > 1 else ""))
        if "projection_in_class" in rec:
            out.append(f"  the device model's values on the space's axes "
                       f"{'are' if rec['projection_in_class'] else 'are NOT'} in this class")
    if rec.get("outside_the_space"):
        out.append("  parameters outside the space: " +
                   ", ".join(f"{k}={v}" for k, v in rec["outside_the_space"].items()))
    if rec.get("proof"):
        from tcsmt.identify.report import proof_line
        out.append("  class " + proof_line(rec["proof"]))
    if rec.get("device_proof"):
        out += device_proof_lines(rec["device_proof"])
    if rec.get("class_left") and len(rec["class_left"]) < rec["class_size"]:
        out.append(f"  left after the witnesses: {len(rec['class_left'])} of {rec['class_size']}")
    out.append(f"verdict: {rec['verdict']} ({rec['seconds']} s)")
    return out


def device_proof_lines(dev: dict) -> list[str]:
    from tcsmt.identify.report import proof_line
    if "lemmas" not in dev:
        return ["  device " + proof_line(dev)]
    out = []
    for lem in dev["lemmas"]:
        by = ", ".join(lem.get("proved_by", [])) or lem.get("how", "")
        what = {"unsat": "changes nothing", "sat": "CHANGES outputs", "unknown": "undecided"}[lem["verdict"]]
        extra = (f"; {lem['fewest_that_suffice']} carry bits suffice" if "fewest_that_suffice" in lem else "")
        out.append(f"  device's {lem['parameter']} = {lem.get('value')}: {what} "
                   f"on the plan's domain ({by}{extra})")
    same = dev["same_circuit_after_lemmas"]
    out.append(f"  device model {'builds the same circuit as' if same else 'differs from'} "
               f"{dev['hypothesis']}" + (" once those are set to the space's values" if dev["lemmas"] else "")
               + (": proved equal" if dev["verdict"] == Verdict.UNSAT else ""))
    return out
