"""What a published test suite really separates, and vectors for its gaps.

A suite (tcsmt.cases.suites) holds vectors and the features each claims to
reveal. Coverage runs every vector through a space of hypotheses around the
shipped model of each device the suite names, in each of its format groups,
and reports:

* per vector, the pairs of hypotheses whose outputs (bits) it tells apart;
* per claim ("reveals parameter P"), whether the vector separates at least
  one pair that differs in P: ``holds``; ``reveals nothing`` when pairs
  differing in P exist but it separates none; ``outside the space`` when
  no pair differs in P;
* every published expectation against the shipped model (tcsmt.cases.suites
  check_suite); each one that fails is explained: the hypotheses of the
  space under which it would hold, and the vectors of the suite whose
  published outputs rule those hypotheses out (the settling vectors);
* the pairs no vector of the suite separates, and new vectors that close
  them: the candidate pool first (tcsmt.search.pool), then the solvers
  (tcsmt.search.find.ask), every one replayed on the concrete model before it is
  written; a pair the solvers prove inseparable (on the question's domain
  and k: the property's) is reported so, one without an answer in time
  (``--timeout`` per pair, ``--budget`` per query) as unknown.

The space (``--space``): ``properties`` (default: the hypotheses of every
separating property in queries/ that applies to the device model, pairs
within one property), a comma-separated list of property names, ``axes``
(tcsmt.identify.space.DEFAULT_AXES, one parameter at a time around the device
model), or a space file (TOML, tcsmt.identify.space.load_space: its axes, one at a
time around the device model). A pair is always two hypotheses of one
question (one property, or one axis), so each pair asks about a few
parameters with everything else held at the device's values.

Result document, schema ``tcsmt-coverage/2``: schema, query {kind, suite,
source, space, command}, spaces [{space, group, device, base, questions
[{name, parameters, k, hypotheses [{id, set}]}]}], suite_vectors [{id,
group, separates {space: [pair ids]}}], claims [...], expectations
{checked, holding, failing [...]}, unseparated [{space, pair, differs,
status, by (the closing vector)}], vectors (the generated ones: inputs,
space, question, outputs, separates, closes), summary, verdict ("closed":
every pair separated or proved inseparable; "open" otherwise), solvers,
and run (as in tcsmt-result/2: tool, created, seconds; found_by per
generated vector; per unseparated pair not closed, who proved it or why
there is no answer). A pair id is ``QUESTION:ID1~ID2``. An earlier
result's generated vectors are replayed first (``prior``), so a rerun
keeps them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from tcsmt.cases.suites import Suite, check_suite, compare_values, device_model, find_suite, vector_inputs
from tcsmt.enums import PropertyKind, Verdict
from tcsmt.errors import UserError
from tcsmt.fileio import read_json
from tcsmt.model.formats import format_value, parse_bits
from tcsmt.model.params import ModelParams
from tcsmt.report.results import earlier, number, run_record, solver_versions, write_result
from tcsmt.search.domain import Domain
from tcsmt.search.vectors import Hypothesis, Vector
from tcsmt.sim.dot import dot_bits

SCHEMA = "tcsmt-coverage/2"
EARLIER = "earlier result"
PREVIOUS = "tcsmt-coverage/1"          # its vectors read the same: a rerun keeps them
SPACE_DEFAULT = "properties"


@dataclass
class Question:
    """Hypotheses told apart pairwise: one property, or one axis."""
    name: str
    parameters: tuple[str, ...]
    hyps: list[Hypothesis]
    k: int
    domain: Domain

    def pairs(self) -> list[tuple[int, int]]:
        n = len(self.hyps)
        return [(i, j) for i in range(n) for j in range(i + 1, n)]

    def pair_id(self, pr: tuple[int, int]) -> str:
        return f"{self.name}:{self.hyps[pr[0]].id}~{self.hyps[pr[1]].id}"

    def differs(self, pr: tuple[int, int]) -> dict:
        return param_diff(self.hyps[pr[0]].params, self.hyps[pr[1]].params)


def param_diff(p: ModelParams, q: ModelParams) -> dict:
    """{parameter: [p's value, q's value]} where they differ."""
    x, y = p.parameter_dict(), q.parameter_dict()
    return {k: [x[k], y[k]] for k in x if x[k] != y[k] and k != "name"}


@dataclass
class Space:
    """The questions around one device's model in one format group."""
    group: str
    device: str
    base: ModelParams
    questions: list[Question] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.group}@{self.device}"


# ---------------------------------------------------------------------------
# Spaces
# ---------------------------------------------------------------------------

def property_questions(base: ModelParams, names: list[str] | None) -> tuple[list[Question], list[str]]:
    from tcsmt.properties.registry import all_properties, get_property
    from tcsmt.properties.run import hypotheses
    props = [get_property(n) for n in names] if names else \
        [p for _, p in sorted(all_properties().items()) if p.kind == PropertyKind.SEPARATE]
    out, skipped = [], []
    for p in props:
        if p.kind != PropertyKind.SEPARATE:
            raise UserError(f"property {p.name} has no hypotheses to separate (it is a {p.kind} "
                            f"property)")
        try:
            hyps = hypotheses(p, base)
        except UserError as e:
            skipped.append(str(e))
            continue
        out.append(Question(p.name, p.parameters, hyps, p.k(base), p.domain(base)))
    return out, skipped


def axis_questions(base: ModelParams, axes: dict[str, list]) -> tuple[list[Question], list[str]]:
    out, skipped = [], []
    for key, values in axes.items():
        hyps, seen = [], set()
        for x in values:
            try:
                m = base.replace(name=f"{base.name}[{key}={x}]", **{key: x})
            except (UserError, ValueError, TypeError) as e:
                skipped.append(f"{base.name}: {key}={x}: {e}")
                continue
            rep = repr(m.parameter_dict())
            if rep not in seen:
                seen.add(rep)
                hyps.append(Hypothesis(f"{key}={x}", m, f"{base.name} --set {key}={x}"))
        if len(hyps) >= 2:
            out.append(Question(key, (key,), hyps, max(4, base.block_size), Domain()))
    return out, skipped


def parse_space(spec: str):
    """('properties', names or None) or ('axes', {parameter: values})."""
    spec = (spec or SPACE_DEFAULT).strip()
    if spec == "properties":
        return "properties", None
    if spec == "axes":
        from tcsmt.identify.space import DEFAULT_AXES
        return "axes", dict(DEFAULT_AXES)
    if spec.endswith(".toml") or Path(spec).is_file():
        from tcsmt.identify.space import load_space
        return "axes", dict(load_space(spec).axes)
    return "properties", [n.strip() for n in spec.split(",") if n.strip()]


def vector_devices(v) -> list[str]:
    out = []
    for cl in v.claims:
        for d in list(cl.expected) + list(cl.relation.devices if cl.relation else []):
            if d not in out:
                out.append(d)
    return out


def group_of(v) -> str:
    return v.group or "-".join(f.name for f in (v.formats.fin, v.formats.fout))


def build_spaces(suite: Suite, spec: str) -> list[Space]:
    kind, arg = parse_space(spec)
    spaces: dict[tuple[str, str], Space] = {}
    for v in suite.vectors:
        for dev in vector_devices(v):
            key = (group_of(v), dev)
            if key in spaces:
                continue
            base = device_model(dev, v.formats)
            qs, skipped = property_questions(base, arg) if kind == "properties" \
                else axis_questions(base, arg)
            spaces[key] = Space(key[0], dev, base, qs, skipped)
    return list(spaces.values())


# ---------------------------------------------------------------------------
# Outputs, with a cache (many hypotheses are the device model itself)
# ---------------------------------------------------------------------------

class Outputs:
    def __init__(self, suite: Suite):
        self.suite = suite
        self.inputs = {v.id: vector_inputs(v) for v in suite.vectors}
        self.cache: dict[tuple[str, str], int] = {}

    def __call__(self, vid: str, p: ModelParams) -> int:
        key = (vid, repr(sorted(p.parameter_dict().items())))
        if key not in self.cache:
            a, b, c = self.inputs[vid]
            self.cache[key] = dot_bits(p, a, b, c)
        return self.cache[key]


def separated_pairs(space: Space, group_vectors, out: Outputs) -> dict[str, set[str]]:
    """vector id -> ids of the pairs of the space it separates."""
    res = {}
    for v in group_vectors:
        got = set()
        for q in space.questions:
            outs = [out(v.id, h.params) for h in q.hyps]
            got |= {q.pair_id(pr) for pr in q.pairs() if outs[pr[0]] != outs[pr[1]]}
        res[v.id] = got
    return res


# ---------------------------------------------------------------------------
# Claims and expectations
# ---------------------------------------------------------------------------

def claim_rows(suite: Suite, spaces: dict, seps: dict) -> list[dict]:
    rows = []
    for v in suite.vectors:
        for cl in v.claims:
            devs = [d for d in vector_devices(v) if d in (list(cl.expected) + list(
                cl.relation.devices if cl.relation else []))] or vector_devices(v) or \
                [d for g, d in spaces if g == group_of(v)]
            for dev in devs:
                sp = spaces[(group_of(v), dev)]
                about = [q.pair_id(pr) for q in sp.questions for pr in q.pairs()
                         if cl.parameter in q.differs(pr)]
                hit = [p for p in about if p in seps[sp.name][v.id]]
                status = "holds" if hit else ("reveals nothing" if about else "outside the space")
                rows.append({"vector": v.id, "feature": cl.feature, "parameter": cl.parameter,
                             "device": dev, "space": sp.name, "status": status,
                             "pairs_about_parameter": len(about), "separated": hit})
    return rows


def expectation_holds(suite: Suite, v, cl, kind: str, dev: str, p: ModelParams, out: Outputs) -> bool:
    fout = v.formats.fout
    bits = out(v.id, p)
    if kind == "expected":
        return bits == cl.expected[dev].bits
    r = cl.relation
    other = fout.value(out(r.vector, p)) if r.vector is not None else r.value
    return compare_values(r.op, fout.value(bits), other)


def explain_failure(suite: Suite, chk, space: Space, out: Outputs) -> dict:
    """A failing expectation: the hypotheses of the space under which it
    would hold, each with the suite vectors whose published outputs on the
    device rule it out."""
    v, cl, dev = chk.vector, chk.claim, chk.device
    alts, seen = [], {repr(space.base.parameter_dict())}
    for q in space.questions:
        for h in q.hyps:
            rep = repr(h.params.parameter_dict())
            if rep in seen:
                continue
            seen.add(rep)
            if not expectation_holds(suite, v, cl, chk.kind, dev, h.params, out):
                continue
            settle = []
            for w in suite.vectors:
                for wc in w.claims:
                    pub = wc.expected.get(dev)
                    if pub is None or group_of(w) != group_of(v):
                        continue
                    if out(w.id, space.base) == pub.bits and out(w.id, h.params) != pub.bits:
                        fo = w.formats.fout
                        settle.append({"vector": w.id, "published": f"{fo.hex(pub.bits)} = {pub.decimal}",
                                       "hypothesis_gives": _show(fo, out(w.id, h.params))})
            alts.append({"question": q.name, "hypothesis": h.id,
                         "differs": param_diff(space.base, h.params), "settled_by": settle})
    return {"vector": v.id, "device": dev, "model": chk.model, "kind": chk.kind,
            "feature": cl.feature, "paper": chk.want, "model_gives": chk.got,
            "would_hold_under": alts,
            "settled": bool(alts) and all(a["settled_by"] for a in alts)}


def _show(fmt, bits: int) -> str:
    return f"{fmt.hex(bits)} = {format_value(fmt.value(bits))}"


# ---------------------------------------------------------------------------
# Closing the gaps
# ---------------------------------------------------------------------------

def close_gaps(space: Space, open_ids: set[str], solver: str, timeout: float,
               deadline: float, prior: dict | None = None,
               cross_check: bool = False) -> tuple[list[dict], dict[str, dict]]:
    """Generated vectors for the open pairs of one space, and the verdict on
    each open pair (separated by a generated vector, proved inseparable, or
    unknown) by ``deadline`` (wall-clock time.time(): the spaces are
    independent jobs, perhaps on other machines). ``prior`` vectors
    ((space, question) -> vectors of an earlier result) are replayed first,
    so a rerun keeps them."""
    from tcsmt.search import find, pool
    vectors: list[dict] = []
    verdicts: dict[str, dict] = {}
    for q in space.questions:
        pairs = [pr for pr in q.pairs() if q.pair_id(pr) in open_ids]
        if not pairs:
            continue
        found = [(vec, EARLIER) for vec in _read_prior(q, (prior or {}).get((space.name, q.name), []))]
        found += [(vec, "pool") for vec in pool.search(q.hyps, q.k, q.domain, pairs)]
        remaining = list(pairs)
        for vec, src in found:
            _take(space, q, vec, src, remaining, vectors, verdicts)
        while remaining:
            pr = remaining[0]
            left = deadline - time.time()
            if left <= 1:
                verdicts[q.pair_id(pr)] = {"status": "unknown", "by": "out of time"}
                remaining.pop(0)
                continue
            got = find.ask([q.hyps[pr[0]], q.hyps[pr[1]]], q.k, q.domain, [(0, 1)], solver,
                           min(timeout, left), readable=True, cross_check=cross_check)
            if got.verdict == Verdict.SAT:
                _take(space, q, got.vectors[0], got.found_by, remaining, vectors, verdicts)
            else:
                if got.verdict == Verdict.UNSAT:
                    by = ", ".join(sorted(set(got.proved_by))) or got.reason
                    verdicts[q.pair_id(pr)] = {"status": "inseparable", "by": by}
                else:
                    verdicts[q.pair_id(pr)] = {"status": "unknown", "by": got.reason}
                remaining.pop(0)
    return vectors, verdicts


def _take(space, q: Question, vec: Vector, src: str, remaining, vectors, verdicts) -> None:
    """Replay on the concrete model; keep the vector if it separates an open pair."""
    outs = [dot_bits(h.params, list(vec.a), list(vec.b), vec.c) for h in q.hyps]
    done = [pr for pr in remaining if outs[pr[0]] != outs[pr[1]]]
    if not done:
        if src not in ("pool", EARLIER):
            raise UserError(f"{space.name} {q.name}: a solver witness separates no open pair "
                            f"on the concrete model")
        return
    p = q.hyps[0].params
    idx = len(vectors)
    vectors.append({"space": space.name, "question": q.name, "k": len(vec.a),
                    "a": [number(p.fin, x) for x in vec.a], "b": [number(p.fin, y) for y in vec.b],
                    "c": number(p.fc, vec.c),
                    "outputs": {h.id: number(h.params.fout, o) for h, o in zip(q.hyps, outs)},
                    "separates": [q.pair_id(pr) for pr in q.pairs() if outs[pr[0]] != outs[pr[1]]],
                    "closes": [q.pair_id(pr) for pr in done], "found_by": src})
    for pr in done:
        verdicts[q.pair_id(pr)] = {"status": "closed", "by": f"vector {idx}"}
        remaining.remove(pr)


# ---------------------------------------------------------------------------
# The query
# ---------------------------------------------------------------------------

def prior_gap_vectors(path: str | Path | dict | None) -> dict:
    """(space, question) -> the gap vectors (records) of an earlier result
    (a document, or its path)."""
    doc = earlier(path) if path else None
    out: dict = {}
    if not doc or doc.get("schema") not in (SCHEMA, PREVIOUS):
        return out
    for v in doc.get("vectors", []):
        if isinstance(v, dict) and "space" in v and "question" in v:
            out.setdefault((v["space"], v["question"]), []).append(v)
    return out


def _read_prior(q, records: list[dict]) -> list[Vector]:
    """The earlier vectors of a question, read in its formats (a record
    that does not read is left out)."""
    p = q.hyps[0].params
    out = []
    for v in records:
        try:
            out.append(Vector(tuple(parse_bits(x["hex"], p.fin) for x in v["a"]),
                              tuple(parse_bits(y["hex"], p.fin) for y in v["b"]),
                              parse_bits(v["c"]["hex"], p.fc)))
        except (KeyError, TypeError, UserError):
            continue
    return out


def run_coverage(suite_spec: str, space: str = SPACE_DEFAULT, generate: bool = True,
                 solver: str = "portfolio", timeout: float = 20.0, budget: float = 240.0,
                 command: str | None = None, prior: str | Path | dict | None = None,
                 progress=None, cross_check: bool = False) -> dict:
    """The tcsmt-coverage/2 document of a suite (file or shipped name).
    ``progress(name, done, total)`` is called as the gaps of each space are
    closed (one job per space with open pairs, tcsmt.runner)."""
    t0 = time.monotonic()
    earlier = prior_gap_vectors(prior)
    suite = find_suite(suite_spec)
    spaces = build_spaces(suite, space)
    by_key = {(s.group, s.device): s for s in spaces}
    out = Outputs(suite)
    seps = {s.name: separated_pairs(s, [v for v in suite.vectors if group_of(v) == s.group], out)
            for s in spaces}
    checks = check_suite(suite)
    failing = [explain_failure(suite, c, by_key[(group_of(c.vector), c.device)], out)
               for c in checks if not c.holds]
    unseparated: list[dict] = []
    gen: list[dict] = []
    opened = {s.name: {q.pair_id(pr) for q in s.questions for pr in q.pairs()}
              - (set().union(*seps[s.name].values()) if seps[s.name] else set()) for s in spaces}
    closed = _close_every_gap([s for s in spaces if generate and opened[s.name]], opened, solver, timeout,
                              time.time() + budget, earlier, progress, cross_check)
    for s in spaces:
        open_ids, verdicts = opened[s.name], {}
        if s.name in closed:
            found, verdicts = closed[s.name]
            offset = len(gen)
            gen += found
            for v in verdicts.values():
                if v["by"].startswith("vector "):
                    v["by"] = f"vector {offset + int(v['by'].split()[1])}"
        for q in s.questions:
            for pr in q.pairs():
                pid = q.pair_id(pr)
                if pid in open_ids:
                    unseparated.append({"space": s.name, "pair": pid, "differs": q.differs(pr),
                                        **verdicts.get(pid, {"status": "open", "by": ""})})
    claims = claim_rows(suite, by_key, seps)
    return document(suite, space, spaces, seps, claims, checks, failing, unseparated, gen,
                    time.monotonic() - t0, command)


def _close_every_gap(spaces: list[Space], opened: dict, solver: str, timeout: float, deadline: float,
                     earlier: dict, progress=None, cross_check: bool = False) -> dict:
    """close_gaps of every space, as independent jobs (tcsmt.runner):
    space name -> (vectors, verdicts)."""
    from tcsmt import runner
    tasks = [runner.Task(s.name, partial(close_gaps, s, opened[s.name], solver, timeout, deadline, earlier,
                                         cross_check)) for s in spaces]
    return {d.name: d.result() for d in runner.run(tasks, progress=progress)}


def document(suite, space, spaces, seps, claims, checks, failing, unseparated, gen, seconds,
             command) -> dict:
    total = sum(len(q.pairs()) for s in spaces for q in s.questions)
    closed = sum(u["status"] in ("closed", "inseparable") for u in unseparated)
    summary = {
        "vectors": len(suite.vectors), "spaces": len(spaces), "pairs": total,
        "pairs_separated": total - len(unseparated), "pairs_unseparated": len(unseparated),
        "claims": len(claims), "claims_holding": sum(c["status"] == "holds" for c in claims),
        "claims_revealing_nothing": sum(c["status"] == "reveals nothing" for c in claims),
        "claims_outside_space": sum(c["status"] == "outside the space" for c in claims),
        "expectations": len(checks), "expectations_holding": sum(c.holds for c in checks),
        "expectations_failing": len(failing),
        "gap_vectors": len(gen), "gaps_closed": sum(u["status"] == "closed" for u in unseparated),
        "gaps_inseparable": sum(u["status"] == "inseparable" for u in unseparated),
        "gaps_left": len(unseparated) - closed,
    }
    closed_by = lambda u: {"by": u["by"]} if u["status"] == "closed" else {}  # noqa: E731
    return {
        "schema": SCHEMA,
        "query": {"kind": "coverage", "suite": suite.name, "source": suite.source,
                  "space": space, "command": command or ""},
        "spaces": [{"space": s.name, "group": s.group, "device": s.device, "base": s.base.name,
                    "skipped": s.skipped,
                    "questions": [{"name": q.name, "parameters": list(q.parameters), "k": q.k,
                                   "hypotheses": [h.id for h in q.hyps]} for q in s.questions]}
                   for s in spaces],
        "suite_vectors": [{"id": v.id, "group": group_of(v),
                           "separates": {s.name: sorted(seps[s.name][v.id]) for s in spaces
                                         if v.id in seps[s.name]}} for v in suite.vectors],
        "claims": claims,
        "expectations": {"checked": len(checks), "holding": sum(c.holds for c in checks),
                         "failing": failing},
        "unseparated": [{k: v for k, v in u.items() if k != "by"} | closed_by(u) for u in unseparated],
        "vectors": [{k: v for k, v in g.items() if k != "found_by"} for g in gen],
        "summary": summary,
        "verdict": "closed" if summary["gaps_left"] == 0 else "open",
        "solvers": solver_versions(),
        "run": run_record(seconds, found_by=[g["found_by"] for g in gen],
                          unseparated=[{"space": u["space"], "pair": u["pair"], "by": u["by"]}
                                       for u in unseparated if u["status"] != "closed"]),
    }


def write(path: str | Path, doc: dict, replace_answers: bool = False):
    """Write atomically unless the file holds the same stable content."""
    return write_result(path, doc, check=check_document, replace_answers=replace_answers)


def check_document(doc: dict) -> None:
    if doc.get("schema") != SCHEMA:
        raise UserError(f"schema is not {SCHEMA!r}")


def result_path(suite: str, space: str = SPACE_DEFAULT, root: str | Path = "results") -> Path:
    tag = "" if space == SPACE_DEFAULT else "-" + Path(space).stem.replace(",", "+")
    return Path(root) / "coverage" / f"{Path(suite).stem}{tag}.json"


def replay_coverage(path: str | Path) -> list[str]:
    """The generated vectors of a coverage file through the concrete model
    again (the problems found; none: the file holds)."""
    doc = read_json(path)
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise UserError(f"{path}: schema is not {SCHEMA!r}")
    return replay_vectors(doc)


def replay_vectors(doc: dict) -> list[str]:
    """The generated vectors of a coverage document through the concrete
    model again (the problems found)."""
    suite = find_suite(doc["query"]["suite"])
    spaces = {s.name: s for s in build_spaces(suite, doc["query"]["space"])}
    problems = []
    for i, v in enumerate(doc["vectors"]):
        q = next(q for q in spaces[v["space"]].questions if q.name == v["question"])
        p = q.hyps[0].params
        a, b = [parse_bits(x["hex"], p.fin) for x in v["a"]], [parse_bits(y["hex"], p.fin) for y in v["b"]]
        c = parse_bits(v["c"]["hex"], p.fc)
        outs = [dot_bits(h.params, a, b, c) for h in q.hyps]
        sep = [q.pair_id(pr) for pr in q.pairs() if outs[pr[0]] != outs[pr[1]]]
        if sep != v["separates"] or not set(v["closes"]) <= set(sep):
            problems.append(f"vector {i}: separates {sep}, the file says {v['separates']}")
    return problems
