"""What ``tcsmt identify`` says: the report (text and JSON), the shipped
models it is compared with, the proof that a class is one behaviour, and
the model file.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from tcsmt.enums import Verdict
from tcsmt.identify.hypspace import HypSpace, position
from tcsmt.identify.narrow import Identification
from tcsmt.identify.plan import vector_json
from tcsmt.model.params import ModelParams
from tcsmt.search.domain import Domain
from tcsmt.search.vectors import Hypothesis

SCHEMA = "tcsmt-identification/1"
LIST_MAX = 40

CLASS_STATUS = {
    "single": "one hypothesis",
    "identical": "its hypotheses build the very same circuit",
    "proved": "its hypotheses were proved to give the same bits on every input of the plan's domain",
    "open": "no vector found tells its hypotheses apart, but they were not proved equal",
}
"""What each status of a class of hypotheses means, in plain words."""


def status_words(status: str) -> str:
    return f"{status}: {CLASS_STATUS[status]}" if status in CLASS_STATUS else status


# ---------------------------------------------------------------------------
# Where a model sits in a space
# ---------------------------------------------------------------------------

def projection(space: HypSpace, p: ModelParams) -> tuple[int | None, list[str]]:
    """Where p sits in the space: the part where p differs in the fewest
    parameters (its axis values missing from the part's axes, and the
    other parameters that differ from the part's base), and those
    parameters, which are outside the space. When p's values on every axis
    of that part are in the part's axes, the hypothesis with those values
    (its index); else None. A part that lacks one of p's axis values is
    still the closest when the others differ in more: a part with few axes
    must not win by differing in parameters another part varies."""
    best: tuple[tuple[int, int], int | None, list[str]] | None = None
    offset = 0
    for part in space.parts:
        missing = [k for k in part.axes if getattr(p, k) not in part.axes[k]]
        idx = None if missing else offset + position(part, p)
        ref = space.models()[idx] if idx is not None else part.base
        diff = [k for k, v in p.parameter_dict().items()
                if k in missing or (k not in part.axes and getattr(ref, k) != v)]
        key = (len(diff), idx is None)
        if best is None or key < best[0]:
            best = (key, idx, diff)
        offset += part.size
    if best is None:
        return None, []
    return best[1], best[2]


def shipped_models(obs) -> list[ModelParams]:
    """The shipped models of the observations' device (by its name) with
    the observations' formats."""
    from tcsmt.model.catalogue import DEVICE_ARCH, all_models, arch_for_device
    if obs.device.startswith("model "):           # simulated observations
        name = obs.device.split()[1]
        return [m for m in all_models() if m.name == name]
    arch = arch_for_device(obs.device)
    words = obs.device.upper().replace("-", " ").split()
    for dev, a in DEVICE_ARCH.items():
        if arch is None and dev.replace(" ", "") in words:
            arch = a
    from tcsmt.identify.plan import formats_record
    block = obs.scale_block if obs.fscale is not None else 0
    return [m for m in all_models() if m.arch == arch and formats_record(m) == obs.formats()
            and (m.scale_block if m.fscale else 0) == block]


def shipped_check(res: Identification, models: list[ModelParams] | None = None) -> list[dict]:
    from tcsmt.identify.narrow import row_arrays, row_scales
    from tcsmt.sim.batch import dot_batch
    a, b, c, d = row_arrays(res.obs)
    sa, sb = row_scales(res.obs)
    out = []
    consistent = set(res.consistent)
    for m in (shipped_models(res.obs) if models is None else models):
        got = dot_batch(m, a, b, c, sa_bits=sa, sb_bits=sb)
        idx, diff = projection(res.space, m)
        rec = {"model": m.name, "rows_matched": int((got == d).sum()), "rows": len(res.obs.rows),
               "space_hypothesis": res.space.models()[idx].name if idx is not None else None,
               "space_hypothesis_consistent": idx in consistent if idx is not None else False,
               "outside_the_space": {k: getattr(m, k) for k in diff} if idx is not None else
               {k: getattr(m, k) for k in diff}}
        out.append(rec)
    return out


# ---------------------------------------------------------------------------
# Proof that a class is one behaviour (and equals a given model)
# ---------------------------------------------------------------------------

def distinct_circuits(models: list[ModelParams], k: int) -> list[ModelParams]:
    """One model per distinct circuit (the recording graph's root)."""
    from tcsmt.sim.evaluate import trace
    roots = trace(models, k)
    seen: dict[int, ModelParams] = {}
    for r, m in zip(roots, models):
        seen.setdefault(r.id, m)
    return list(seen.values())


def prove_class(members: list[ModelParams], k: int, domain: Domain, device: ModelParams | None = None,
                timeout: float = 600.0, plan=None) -> dict:
    """One member per circuit, and the device's model first when given:
    a proof the plan holds (members all in one class the plan proved), else
    first fresh pools through the simulator (tcsmt.identify.simsplit), then
    run_diff (with a cross-check). unsat proves every output equal on the
    domain; sat gives a replayed witness ("found_by": simulation or the
    solvers)."""
    from tcsmt.identify.simsplit import simulated_split
    from tcsmt.search.diff import run_diff
    circ = distinct_circuits(members, k)
    hyps = ([Hypothesis("device", device)] if device is not None else []) + \
        [Hypothesis(f"H{j}", m) for j, m in enumerate(circ)]
    if len(hyps) == 1:
        return {"verdict": "unsat", "proved_by": [], "how": "one circuit: nothing to prove",
                "circuits": 1, "seconds": 0.0}
    held = planned_proof(plan, members) if device is None else None
    if held is not None:
        return {**held, "circuits": len(circ)}
    split = simulated_split([h.params for h in hyps], k, domain)
    if split is not None:
        p = hyps[0].params
        return {"verdict": "sat", "proved_by": [], "found_by": "simulation", "circuits": len(circ),
                "how": (f"a row of fresh pool {split['pools']} ({split['rows']} rows simulated) "
                        "gives two outputs, replayed by the scalar interpreter"),
                "seconds": split["seconds"],
                "witness": vector_json(p.fin, p.fc, split["vector"], p.fb, p.fscale),
                "witness_outputs": {h.label: p.fout.hex(split["outputs"][h.id]) for h in hyps}}
    pairs = [(0, j) for j in range(1, len(hyps))]
    out = run_diff(hyps, k, domain, timeout=timeout, cross_check=True, pairs=pairs)
    rec = {"verdict": out.verdict, "proved_by": out.proved_by, "found_by": "solvers", "circuits": len(circ),
           "seconds": round(out.seconds, 1), "notes": out.notes}
    if out.verdict == Verdict.SAT:
        p = hyps[0].params
        rec["witness"] = vector_json(p.fin, p.fc, out.vectors[0], p.fb, p.fscale)
        from tcsmt.search.vectors import outputs
        rec["witness_outputs"] = {h.label: p.fout.hex(v) for h, v in
                                  zip(hyps, outputs(out.vectors[0], hyps).values())}
    elif out.verdict == Verdict.UNKNOWN:
        rec["reason"] = out.reason
    return rec


def planned_proof(plan, members: list[ModelParams]) -> dict | None:
    """The proof of the plan's class that holds every member, when the plan
    proved that class one function on its domain (tcsmt.identify.plansearch:
    sweeping, every lemma UNSAT by two solvers); None otherwise."""
    proved = [cl for cl in plan.classes if cl.status == "proved"] if plan is not None else []
    if not proved:
        return None
    models = plan.models()
    index = {m.parameter_dict().__repr__(): i for i, m in enumerate(models)}
    ids = {index.get(m.parameter_dict().__repr__()) for m in members}
    for cl in proved:
        if ids <= set(cl.members):
            return {"verdict": "unsat", "proved_by": list(cl.proved_by), "found_by": "the plan",
                    "how": "the plan's class, proved one function on the plan's domain when the plan "
                           "was built", "proof": list(cl.proof), "seconds": 0.0}
    return None


# ---------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------

def parameter_values(models: list[ModelParams], axes: dict[str, list]) -> dict[str, list]:
    out: dict[str, list] = {}
    for k in axes:
        vals = []
        for m in models:
            v = getattr(m, k)
            if v not in vals:
                vals.append(v)
        out[k] = vals
    return out


def report_record(res: Identification, extra: dict | None = None) -> dict:
    from tcsmt.identify.atk import other_counts
    models = res.space.models()
    obs = res.obs
    cons = [models[i] for i in res.consistent]
    rec = {
        "schema": SCHEMA,
        "observations": {"source": res.source, "device": obs.device, "instruction": obs.instruction,
                         "formats": obs.formats(), "k": obs.k, "rows": len(obs.rows),
                         "known_problems": obs.meta.get("known_problems", []),
                         **({"rows_at_other_k": other_counts(obs)} if obs.other else {})},
        "space": {"name": res.space.name, "hypotheses": res.space.size},
        "plan": res.plan.source if res.plan is not None else None,
        "plan_rows_walked": len(res.walked),
        "hypotheses_run": res.evaluated,
        "verdict": res.verdict,
        "consistent": {
            "hypotheses": len(res.consistent),
            "classes": [{"size": len(g), "status": st, "first": models[g[0]].name}
                        for g, st in itertools.islice(zip(res.classes, res.class_status), LIST_MAX)],
            "parameters": parameter_values(cons, res.space.axes()),
            "names": [m.name for m in cons[:LIST_MAX]],
        },
        "next_vector": (vector_json(obs.fin, obs.fc, res.next_vector, obs.fb, obs.fscale)
                        if res.next_vector else None),
        "next_note": res.next_note,
        "failure": res.failure,
        "seconds": round(res.seconds, 1),
    }
    rec.update(extra or {})
    return rec


def text_lines(rec: dict) -> list[str]:
    o = rec["observations"]
    out = [f"observations: {o['source']} ({o['device']}; {o['instruction']}; "
           f"{o['rows']} rows, k = {o['k']}"
           + "".join(f"; {n} rows at k = {k}" for k, n in o.get("rows_at_other_k", {}).items()) + ")",
           f"space: {rec['space']['name']} ({rec['space']['hypotheses']} hypotheses)"
           + (f"; plan: {rec['plan']} ({rec['plan_rows_walked']} rows read along its tree)"
              if rec["plan"] else "")]
    for kp in o.get("known_problems") or []:
        out.append(f"known problem of the recording ({kp['rule']}): {kp['why']}")
    cons = rec["consistent"]
    if rec["verdict"] == "none":
        f = rec["failure"]
        out.append(f"no hypothesis in the space explains observation {f['index']} "
                   f"(d = {f.get('observed')}, with the rows before it)")
        out.append("closest hypotheses (rows reproduced; the others off by):")
        for c in f["closest"]:
            off = "nan" if c["max_ulps"] is None else f"{c['max_ulps']} ulp"
            out.append(f"  {c['rows_matched']}/{c['rows']} rows, up to {off} and "
                       f"{c['max_bits_differing']} bit{'' if c['max_bits_differing'] == 1 else 's'} off, "
                       f"first miss at observation {c['first_mismatch']}: {c['hypothesis']}"
                       + (f" (and {c['same_outputs'] - 1} with the same outputs)"
                          if c["same_outputs"] > 1 else ""))
    else:
        n, ncls = cons["hypotheses"], len(cons["classes"])
        out.append(f"consistent: {n} hypothes{'is' if n == 1 else 'es'} in {ncls}"
                   f"{'+' if ncls >= LIST_MAX else ''} class{'' if ncls == 1 else 'es'}"
                   + (f" ({status_words(cons['classes'][0]['status'])})" if ncls == 1 else ""))
        for k, vs in cons["parameters"].items():
            out.append(f"  {k}: {', '.join('none' if v is None else str(v) for v in vs)}")
        if rec["next_vector"]:
            v = rec["next_vector"]
            out.append(f"run next ({rec['next_note']}): a = {v['a']}, b = {v['b']}, c = {v['c']}")
        elif rec["next_note"]:
            out.append(rec["next_note"])
    for s in rec.get("shipped", []):
        where = ("are consistent" if s["space_hypothesis_consistent"] else "are NOT consistent") \
            if s["space_hypothesis"] else "are not in the space"
        outside = ", ".join(f"{k}={v}" for k, v in s["outside_the_space"].items())
        out.append(f"shipped model {s['model']}: reproduces {s['rows_matched']}/{s['rows']} rows; "
                   f"its values on the space's axes {where}"
                   + (f"; outside the space: {outside}" if outside else ""))
        if s["space_hypothesis_consistent"] and rec["verdict"] != "none":
            n, ncls = cons["hypotheses"], len(cons["classes"])
            out.append(f"  -> narrowed to the shipped model's class ({n} hypothes{'is' if n == 1 else 'es'})"
                       if rec["verdict"] == "identified" else
                       f"  -> narrowed to a set of {n} hypotheses in {ncls}"
                       f"{'+' if ncls >= LIST_MAX else ''} classes that contains the shipped model")
    if rec.get("proof"):
        out.append(proof_line(rec["proof"]))
    if rec.get("model_file"):
        out.append(f"model file: {rec['model_file']}")
    out.append(f"verdict: {rec['verdict']} ({rec['seconds']} s)")
    return out


def proof_line(p: dict) -> str:
    if p["verdict"] == Verdict.UNSAT:
        by = ", ".join(p["proved_by"]) or p.get("how", "")
        if p.get("circuits") == 1:
            return "proof: its hypotheses build one circuit (nothing to prove)"
        return f"proof: the {p['circuits']} circuits are equal on every input of the plan's domain ({by})"
    if p["verdict"] == Verdict.SAT:
        return f"proof: refuted: the witness {p['witness']} gives {p['witness_outputs']}"
    return f"proof: undecided ({p.get('reason', '')})"


def write_identified(members, space, obs, source: str, proof_text: str, model_file=None) -> str:
    """The model file of a class of hypotheses that reproduce ``obs`` (an
    ObservationSet): identified-DEVICE-IN-OUT.toml unless named."""
    from tcsmt.model.modelfile import identified_sources, model_for_class, render, slug, write_model
    from tcsmt.model.names import short_format
    name = f"identified-{slug(obs.device)}-{short_format(obs.fin.name)}-{short_format(obs.fout.name)}"
    evidence = f"{source}: {len(obs.rows)} observations of {obs.device}, {obs.instruction}"
    p = model_for_class(members, name, "identified", obs.device, obs.instruction,
                        f"identified by tcsmt identify from {Path(source).name}")
    sources = identified_sources(members, space.axes(), evidence, proof_text, space.name)
    header = [f"{name}: identified by tcsmt identify from {source}",
              f"{len(members)} hypotheses of the space {space.name} reproduce every row; "
              f"the first is written"]
    path = model_file or f"{name}.toml"
    write_model(path, render(p, sources, header))
    return str(path)
