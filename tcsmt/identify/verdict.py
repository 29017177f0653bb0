"""What blind identification says: the document, its text, and the model file.

The model file starts from the shipped model nearest to the unit
(``base = "NAME"``) and lists only what differs, each value with a
``# source:`` line naming the rows it was read from: the rows that, with
the base model's value instead (the rest as identified), come out
otherwise.
"""

from __future__ import annotations

from pathlib import Path

from tcsmt.errors import UserError
from tcsmt.identify.device import Seen
from tcsmt.identify.explain import describe, missed
from tcsmt.identify.neighbours import LATE_ONLY, differs, word
from tcsmt.model.params import ModelParams

SCHEMA = "tcsmt-identify-blind/1"
NAMED = 4      # rows named in a source line


def reverted(model: ModelParams, base: ModelParams, key: str) -> ModelParams | None:
    """model with base's value of key (with c's placement, what it needs)."""
    change = {key: getattr(base, key)}
    if key == "c_placement" or key in LATE_ONLY:
        change = {k: getattr(base, k) for k in ("c_placement", *LATE_ONLY)}
    try:
        return model.replace(**change)
    except UserError:          # a value that needs another: said in the source line
        return None


def sources(seen: Seen, model: ModelParams, base: ModelParams) -> dict[str, str]:
    """The source line of every key where model differs from base."""
    diff = differs(base, model)
    alts = {k: reverted(model, base, k) for k in diff}
    ok = [a for a in alts.values() if a is not None]
    misses = dict(zip([k for k, a in alts.items() if a is not None], missed(ok, seen))) if ok else {}
    where = f"{len(seen)} rows run on {seen.name}"
    out = {}
    for k, v in diff.items():
        old = word(k, getattr(base, k))
        if k not in misses:
            out[k] = (f"identified blind from {where}: needed with the other values below "
                      f"({base.name}'s {old} does not go with them)")
            continue
        rows = [int(r) for r in misses[k]]
        if not rows:
            out[k] = (f"identified blind from {where}: no row seen tells it from {base.name}'s "
                      f"{old}; it comes with the other values of the nearest explanation")
            continue
        named = "; ".join(f"row {r} ({seen.origins[r]})" for r in rows[:NAMED])
        more = f" and {len(rows) - NAMED} more" if len(rows) > NAMED else ""
        out[k] = (f"identified blind from {where}: with {base.name}'s {old} instead, {named}{more} "
                  f"come out otherwise; {word(k, v)} reproduces all {len(seen)}")
    return out


def model_file_text(rec: dict, name: str) -> str:
    """The identified model as a file that starts from its nearest shipped model."""
    from tcsmt.model.modelfile import starts_from
    p2 = rec["phase2"]
    model, base = p2["model"], p2["base"]
    desc = f"identified blind on {rec['device']}: {describe(base, model)}"
    n = rec["launches"]
    header = (f"{n['phase1'] + n['phase2']} launches of the unit ({n['phase1']} in phase 1, the plan's "
              f"adaptive search; {n['phase2']} in phase 2, confirmation), {n['vectors']} vectors",
              *[f"undecided: {line}" for line in _settled_lines(p2) if line.startswith("not ruled out")])
    return starts_from(name, base, base.name, model, sources(rec["seen"], model, base),
                       "tcsmt identify --device (blind identification)", desc, header)


def write_model_file(rec: dict, path: str | Path | None = None) -> str:
    from tcsmt.model.modelfile import slug, write_model
    kind, _, spec = rec["device"].partition(":")
    label = f"{kind}-{Path(spec).stem}" if spec.endswith(".toml") else rec["device"]
    name = f"identified-{slug(label)}-{slug(rec['formats'])}"
    path = str(path or f"{name}.toml")
    write_model(path, model_file_text(rec, name))
    return path


# ---------------------------------------------------------------------------
# The document (JSON) and its text
# ---------------------------------------------------------------------------

def document(rec: dict) -> dict:
    """rec without its objects: models as their description and changes,
    the rows seen as a vectors file holds them (to replay offline)."""
    seen: Seen = rec["seen"]
    out = {"schema": SCHEMA, **{k: v for k, v in rec.items() if k != "seen"}}
    p2 = dict(rec["phase2"])
    if "model" in p2:
        p2["model"] = {"base": p2["base"].name, "differs": differs(p2["base"], p2["model"])}
        p2.pop("base")
    out["phase2"] = p2
    fmt = rec["fmt"]
    out.pop("fmt")
    out["observations"] = [seen.row_json(n, (fmt.fin, fmt.fb, fmt.fc, fmt.fout, fmt.fscale))
                           for n in range(len(seen))]
    return out


def lines(doc: dict) -> list[str]:
    out = [f"device {doc['device']} ({doc['formats']}, k = {doc['k']}), plan {doc['plan'] or 'none'}"]
    out += _phase1_lines(doc["phase1"])
    p2 = doc["phase2"]
    if "events" in p2:
        out.append("phase 2, confirmation (a launch of many vectors each, or of the few that split rivals):")
        out += [f"  {_event(e)}" for e in p2["events"]]
    r = doc["launches"]
    if doc["verdict"] == "identified":
        out += [f"  {x}" for x in _settled_lines(p2)]
        if p2.get("base_twins"):
            out.append(f"  {p2['model']['base']} has the arithmetic of {', '.join(p2['base_twins'])}")
    out.append(f"launches of the unit: {r['phase1'] + r['phase2']} ({r['phase1']} in phase 1, "
               f"{r['phase2']} in phase 2); {r['vectors']} vectors in all")
    if doc["verdict"] == "identified":
        out.append(f"verdict: identified: {p2['describe']} ({doc['seconds']} s)")
    elif doc["verdict"] == "unexplained":
        out.append(f"no model within two parameters of the {p2['centres']} known models explains the "
                   f"unit; the closest tried misses {p2['rows_missed_by_closest']} of "
                   f"{p2['rows_seen']} rows, among them:")
        for row in p2["rows"]:
            out.append(f"  row {row['row']} ({row['origin']}): a = [{' '.join(row['a'])}], "
                       f"b = [{' '.join(row['b'])}], c = {row['c']} -> d = {row['d']} "
                       f"(the closest model: {row['closest_model_gives']})")
        out.append(f"verdict: unexplained ({doc['seconds']} s)")
    else:
        out.append(f"verdict: {doc['verdict']} ({doc['seconds']} s)")
    if doc.get("model_file"):
        out.append(f"model file: {doc['model_file']}")
    if doc.get("check"):
        out += check_lines(doc["check"])
    return out


def _phase1_lines(p1: dict) -> list[str]:
    if "skipped" in p1:
        return [f"phase 1 skipped: {p1['skipped']}"]
    out = ["phase 1, the plan's adaptive search (a run is one vector on the plan's path):"]
    for s in p1["steps"]:
        out.append(f"  run {s['run']}: a = [{' '.join(s['a'])}], b = [{' '.join(s['b'])}], c = {s['c']}"
                   + (f", scale_a = [{' '.join(s['scale_a'])}], scale_b = [{' '.join(s['scale_b'])}]"
                      if "scale_a" in s else "") + f" -> d = {s['d']}")
    n = p1["launches"]
    out.append(f"  {p1['runs']} run{'s' if p1['runs'] != 1 else ''} in {n} launch{'es' if n != 1 else ''} "
               f"of {p1['vectors_run']} vectors")
    if "failure" in p1:
        out.append(f"  no class of the plan gives d = {p1['failure']['d']} at run {p1['failure']['run']}")
    else:
        n = p1["class_size"]
        out.append(f"  ends in class {p1['class']} ({n} hypothes{'is' if n == 1 else 'es'}, "
                   f"{p1['class_status']}): {p1['members'][0]}" + (f" and {n - 1} more" if n > 1 else ""))
    return out


def _event(e: dict) -> str:
    if "first" in e:
        return f"launch {e['launch']}: {e['vectors']} vectors, {e['first']}"
    if "confirming" in e:
        head = (f"launch {e['launch']}: {e['vectors']} vectors confirming {e['confirming']} "
                f"({e['property_vectors']} property vectors, {e['random_rows']} random rows): ")
        if not e["missed_count"]:
            return head + "every one agrees"
        return head + (f"{e['missed_count']} come out otherwise, about {'; '.join(e['about'])}: "
                       "searching again over every row")
    if "refused" in e:
        return (f"after launch {e['launch']}: {e['rivals']} rivals differ only at k = {e['k']}, "
                f"where the unit is not run: {e['refused']}")
    return (f"launch {e['launch']}: {e['vectors']} vector{'s' if e['vectors'] != 1 else ''} splitting "
            f"{e['rivals']} {e['split']}")


def _settled_lines(p2: dict) -> list[str]:
    """The models one parameter away (or other explanations) that reproduce
    every row: proved the same, or not ruled out (grouped by what they
    change)."""
    out = [f"the same on every finite input: {_changes(s['changes'])} ({s['how']})"
           for s in p2["same_behaviour"]]
    groups: dict[tuple, list] = {}
    for s in p2["undecided"]:
        groups.setdefault((s.get("k"), tuple(s["changes"])), []).append(s)
    for (k, keys), undecided in groups.items():
        changes = [s["changes"] for s in undecided]
        if len(keys) == 1:
            vals = [c[keys[0]] for c in changes]
            text = f"{keys[0]} = {_values(keys[0], vals)}"
        else:
            text = "; ".join(_changes(c) for c in changes)
        refused = next((s["how"] for s in undecided if "not run: " in s["how"]), None)
        why = (refused.split("not run: ", 1)[1] if refused else
               f"no row of {k} products tells it apart; the solvers did not decide" if k else
               "no row tells it apart; the solvers did not decide")
        out.append(f"not ruled out{f' at k = {k}' if k else ''} ({why}): {text}")
    return out


def _changes(c: dict) -> str:
    return ", ".join(f"{k} = {word(k, v)}" for k, v in c.items())


def _values(key: str, vals: list) -> str:
    """Values as a list, integers in runs (-141..-128)."""
    ints = sorted(v for v in vals if isinstance(v, int) and not isinstance(v, bool))
    other = [word(key, v) for v in vals if v not in ints]
    runs, start = [], None
    for n, v in enumerate(ints):
        if start is None:
            start = v
        if n + 1 == len(ints) or ints[n + 1] != v + 1:
            runs.append(str(start) if start == v else f"{start}..{v}")
            start = None
    return ", ".join(other + runs) + (f" ({len(vals)} values)" if len(vals) > 3 else "")


def check_lines(c: dict) -> list[str]:
    out = [f"check, after the verdict, against the simulated unit's own parameters ({c['unit']}):"]
    if "phase1_class_holds_unit" in c:
        outside = ", ".join(f"{k}={v}" for k, v in c["outside_the_space"].items())
        out.append(f"  phase 1's class {'holds' if c['phase1_class_holds_unit'] else 'does NOT hold'} "
                   "the unit's values on the space's axes"
                   + (f"; parameters the space does not vary: {outside}" if outside else ""))
    if c.get("class_proof"):
        from tcsmt.identify.report import proof_line
        out.append("  phase 1's class " + proof_line(c["class_proof"]))
    if c.get("unit_proof"):
        out += unit_proof_lines(c["unit_proof"])
    if "phase1_verdict" in c:
        out.append(f"  phase 1: {c['phase1_verdict']}")
    if "right" in c:
        word_ = {True: "right", False: "WRONG", None: "not decided"}[c["right"]]
        out.append(f"  the verdict is {word_}: {c['how']}"
                   + (f" (differs in {', '.join(c['differs'])})" if c.get("differs") else ""))
    return out


def unit_proof_lines(dev: dict) -> list[str]:
    from tcsmt.identify.report import proof_line
    if "lemmas" not in dev:
        return ["  unit " + proof_line(dev)]
    out = []
    for lem in dev["lemmas"]:
        by = ", ".join(lem.get("proved_by", [])) or lem.get("how", "")
        what = {"unsat": "changes nothing", "sat": "CHANGES outputs", "unknown": "undecided"}[lem["verdict"]]
        extra = (f"; {lem['fewest_that_suffice']} carry bits suffice" if "fewest_that_suffice" in lem else "")
        out.append(f"  unit's {lem['parameter']} = {lem.get('value')}: {what} "
                   f"on the plan's domain ({by}{extra})")
    same = dev["same_circuit_after_lemmas"]
    out.append(f"  unit {'builds the same circuit as' if same else 'differs from'} "
               f"{dev['hypothesis']}" + (" once those are set to the space's values" if dev["lemmas"] else "")
               + (": proved equal" if dev["verdict"] == "unsat" else ""))
    return out
