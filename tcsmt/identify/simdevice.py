"""``tcsmt identify --device sim:FILE|ARCH``: a model plays the unknown unit, blind.

The model (a model file, a shipped model's name, or an architecture) runs
the vectors the loop asks for (tcsmt.identify.loop.ModelDevice) and is read
by nothing else until the verdict is in (tcsmt.identify.blind: the plan's
adaptive search, then confirmation). Then, apart from the verdict, the
check says whether the verdict was right:

* identified: the model written has the unit's own circuit (every
  parameter that changes the arithmetic equal, or the very same circuit
  by the recording interpretation), or the solvers prove the two compute
  the same on every finite input (tcsmt.identify.rivals.settle), or they
  find an input on which they differ (the verdict was wrong);
* unexplained: how far the unit is from the shipped models;
* phase 1 alone (``confirm=False``): whether the class the plan's search
  ended in holds the unit's values on the space's axes, and which of its
  parameters the space does not vary.
"""

from __future__ import annotations

from tcsmt.errors import UserError
from tcsmt.identify.blind import identify_blind
from tcsmt.identify.loop import ModelDevice
from tcsmt.identify.neighbours import differs
from tcsmt.identify.plan import Plan
from tcsmt.identify.report import projection
from tcsmt.identify.setting import setting, shipped_like
from tcsmt.model.choose import choose
from tcsmt.model.params import ModelParams


def parse_device(text: str) -> str:
    """sim:SPEC -> SPEC (a model file, model name or architecture)."""
    kind, sep, spec = text.partition(":")
    if kind != "sim" or not sep or not spec.strip():
        raise UserError(f"--device {text!r}: expected sim:FILE or sim:ARCH (such as sim:hopper or "
                        "sim:unit.toml), cuda[:N], hip[:N], cuda-host:MODEL or hip-host:MODEL")
    return spec.strip()


CHECK_TIMEOUT = 300.0
"""Seconds the solvers may spend, at each k, on whether an identified
unit's model file computes what the unit does (at most --timeout): the
check reports on a verdict already reached and written, so it does not
hold the command for the whole timeout; an UNSAT that no second solver
confirms in it keeps its answer, with a note."""


def run_sim(spec, formats: str | None = None, plan: Plan | str | None = None, prove: bool = True,
            timeout: float = 600.0, log=None, confirm: bool = True, batch: str = "one",
            on_verdict=None) -> dict:
    """The blind loop with ``spec`` (a model file, a model or architecture
    name, or a ModelParams) as the unit, then the check of the verdict.
    ``on_verdict(rec)`` runs between the two (identify writes the model
    file there, so the verdict is kept whatever the check costs)."""
    p = spec if isinstance(spec, ModelParams) else choose(spec, formats)
    label = p.name if isinstance(spec, ModelParams) else spec
    st = setting(p, plan, confirm)        # from p's formats and scales alone
    plan = st.plan
    rec = identify_blind(ModelDevice(p, f"sim:{label}"), st.fmt, st.k, plan, st.shipped, log,
                         confirm=confirm, prove=prove, batch=batch)
    if on_verdict is not None:
        on_verdict(rec)
    rec["check"] = check(rec, p, plan, prove, timeout)
    return rec


def check(rec: dict, truth: ModelParams, plan: Plan | None, prove: bool, timeout: float) -> dict:
    """Whether the verdict was right, with the unit's own parameters (read
    only here, after the verdict)."""
    out: dict = {"unit": truth.name}
    if plan is not None:
        alone = rec["verdict"] in ("narrowed", "outside the plan's space")
        p1 = phase1_check(rec["phase1"], truth, plan, prove and alone, timeout)
        out.update(p1 if alone else {k: v for k, v in p1.items() if k != "phase1_verdict"})
    if rec["verdict"] == "identified":
        out.update(_compare(rec["phase2"]["model"], truth, rec["k"], prove, min(timeout, CHECK_TIMEOUT)))
    elif rec["verdict"] == "unexplained":
        from tcsmt.identify.neighbours import distance
        near = min(shipped_like(truth), key=lambda m: distance(m, truth), default=None)
        out["right"] = None
        out["how"] = (f"the unit differs from the nearest shipped model, {near.name}, in "
                      f"{distance(near, truth)} parameters" if near else "no shipped model of its formats")
    return out


NOT_IN_CLASS = "not recovered: the unit's values are not in the class it ends in (not proved: --no-prove)"
MAX_REFINE = 8


def phase1_check(p1: dict, truth: ModelParams, plan: Plan, prove: bool, timeout: float) -> dict:
    """Where phase 1 ended against the unit's own values: whether its class
    holds them (and, with ``prove``, proofs that the class is one behaviour
    on the plan's domain and that the unit is it): phase1_verdict
    recovered, recovered (not proved), recovered, not proved, outside the
    space."""
    models = plan.models()
    idx, outside = projection(plan.space, truth)
    out: dict = {"space_hypothesis": models[idx].name if idx is not None else None,
           "outside_the_space": {key: getattr(truth, key) for key in outside}}
    if "failure" in p1:
        return {**out, "phase1_verdict": "outside the space"}
    members = [models[i] for i in plan.classes[p1["class"]].members]
    out["phase1_class_holds_unit"] = idx in plan.classes[p1["class"]].members
    if not prove:
        return {**out, "phase1_verdict": "recovered (not proved: --no-prove)"
                if out["phase1_class_holds_unit"] else NOT_IN_CLASS}
    return {**out, **_prove_class(truth, plan, members, idx, outside, timeout)}


def _prove_class(truth, plan: Plan, members, idx, outside, timeout) -> dict:
    """1. The class: its members equal on the plan's domain (one circuit:
    nothing to prove; else the solvers; a witness that splits it keeps the
    members that give the unit's d on it). 2. The unit: the space's
    hypothesis with its values after lemmas for the parameters the space
    does not vary (tcsmt.identify.lemmas), else the solvers on the unit
    against the class."""
    from tcsmt.identify.lemmas import same_circuit, settle_outside
    from tcsmt.identify.report import prove_class
    from tcsmt.sim.dot import dot_bits
    models = plan.models()
    for _ in range(MAX_REFINE):
        proof = prove_class(members, plan.k, plan.domain, None, timeout, plan=plan)
        if proof["verdict"] != "sat":
            break
        w = proof["witness"]
        a, b, c = [int(x, 16) for x in w["a"]], [int(x, 16) for x in w["b"]], int(w["c"], 16)
        sa, sb = (([int(x, 16) for x in w[key]] if key in w else None) for key in ("scale_a", "scale_b"))
        members = [m for m in members if dot_bits(m, a, b, c, sa, sb) == dot_bits(truth, a, b, c, sa, sb)]
        if not members:
            return {"class_proof": proof, "phase1_verdict": "outside the space"}
    names = {m.name for m in members}
    if idx is not None and models[idx].name in names:
        hyp = models[idx]
        if outside:
            dev = settle_outside(truth, hyp, outside, plan.k, plan.domain, min(timeout, 300.0))
        else:
            same = same_circuit(truth, hyp, plan.k)
            dev = {"verdict": "unsat" if same else "unknown", "lemmas": [], "same_circuit_after_lemmas": same}
        dev["hypothesis"] = hyp.name
    else:
        dev = prove_class(members, plan.k, plan.domain, truth, timeout)
    verdicts = {proof["verdict"], dev["verdict"]}
    return {"class_proof": proof, "unit_proof": dev, "class_left": [m.name for m in members],
            "phase1_verdict": ("outside the space" if "sat" in verdicts else
                               "recovered" if verdicts == {"unsat"} else "recovered, not proved")}


def _compare(m: ModelParams, truth: ModelParams, k: int, prove: bool, timeout: float) -> dict:
    """Whether m computes what the unit computes at k (where it was played)
    and at the k tcsmt equiv asks by default (the largest block size): a
    model file holds for every k, and two models that agree on every row of
    k products may still differ on one block (separate chaining sums c
    inside a lone block). The smaller k first: its question is the easier."""
    from tcsmt.identify.lemmas import same_circuit
    from tcsmt.search.diff import default_k
    diff = differs(truth, m)
    ks = sorted({k, default_k(m, truth)})
    if not diff or all(same_circuit(m, truth, n) for n in ks):
        return {"right": True, "how": "the same circuit" if diff else "every parameter equal",
                "differs": diff}
    if not prove:
        return {"right": None, "how": "not proved (--no-prove)", "differs": diff}
    from tcsmt.identify.rivals import settle
    out: dict = {"right": True, "how": [], "proved_by": [], "differs": diff}
    for n in ks:
        got = settle(m, truth, n, timeout)
        out["how"].append(f"k = {n}: {got['how']}")
        out["proved_by"] += [s for s in got.get("proved_by", []) if s not in out["proved_by"]]
        if got["verdict"] == "sat":
            from tcsmt.identify.plan import vector_json
            out.update(right=False, k=n, witness=vector_json(m.fin, m.fc, got["witness"], m.fb, m.fscale))
            break
        if got["verdict"] != "unsat":
            out["right"] = None
    out["how"] = "; ".join(out["how"])
    return out
