"""Result files: vectors and proofs as versioned JSON, written atomically, replayable.

Schema ``tcsmt-result/2``: one JSON object per query. Everything but ``run``
is the result's stable content: the question, the vectors and what they
separate, the verdicts and what is proved, and the versions of the solvers
installed (pinned in pyproject.toml, so a new release is a visible change).
``run`` holds what depends on timing and on which solver won a race. A
file whose stable content would not change is left as it was, byte for
byte (``write_result``), so regenerating results gives no diff without a
real change.

    schema        "tcsmt-result/2"
    query         {"kind": "diff", "equiv" or a property's name,
                   "description": one line,
                   "k": products per dot product (len(a) == len(b) == k),
                   "domain": the allowed inputs (see tcsmt.search.domain.Domain):
                       {"finite", "signs", "exp_range", "c_exp_range", "nonzero"},
                   "command": the command line, or ""}
    formats       {"a": in_format, "b": b_format (or in_format), "c": c_format,
                   "scale": scale_format (only for block-scaled models)}
    hypotheses    N >= 1 models the vectors are run through, each
                  {"id": short unique name ("A", "B", "carry_bits=3"),
                   "label": a longer name (the model's),
                   "spec": how it was asked for ("ampere --set carry_bits=3"),
                   "parameters": every parameter that changes the arithmetic
                                 (ModelParams.parameter_dict()); replay uses
                                 these, not the model files, which may change}
    verdict       "sat": the vectors below separate hypotheses;
                  "unsat": proved that no input of the domain separates them;
                  "unknown": no answer within the time limit
    proof         for "unsat": {"cross_checked": proved by two or more
                                solvers}; else null (run.proved_by names them)
    solvers       {solver: version} of every solver installed
    vectors       M >= 0 input vectors, each
                  {"a": [{"hex": "0x3c00", "decimal": "1"}, ...k],
                   "b": [...k], "c": {"hex", "decimal"},
                   "scale_a", "scale_b": [{"hex", "decimal"}, ...] the scales
                              of a and b, one per scale_block products (only
                              with a "scale" format),
                   "mask": [0 or 1, ...k] which products the metadata of a
                           sparse model selects (only for sparse models),
                   "outputs": {hypothesis id: {"hex", "decimal"}} (d under
                              each hypothesis, in its out_format),
                   "separates": [[id1, id2], ...] every pair of hypotheses
                                whose outputs differ, ids in hypothesis order}
    run           how this answer was obtained, this time:
                  {"tool": {"name": "tcsmt", "version"},
                   "created": ISO 8601, UTC, "seconds": wall time,
                   "proved_by": [solvers that answered unsat],
                   "solver": {"name": the solver that answered, "version",
                              "seconds", "formula": which formulation answered
                              ("full", or a restriction such as "support-2"),
                              "runs": [{"solver", "status", "seconds",
                                        "version"?, "reason"?, "formula"?}],
                              "notes": [...]},
                   "smt2_sha256": sha256 of the SMT-LIB text whose answer is
                                  reported (``--emit-smt2`` writes the text),
                   ...: a search's own details (which vector each solver
                        found, per-pair proofs)}

A carry-bit proof (kind "prove carry-bits") adds to ``query``: "fewest",
"method", "lemmas" {count: verdict of the lemma "no block sum leaves a
register of that many carry bits"} and, when the lemma for the fewest was
proved in parts (tcsmt.search.overflow), "parts": one {"part": "term i" or
"sum", "statement", "verdict"} per part; ``run`` adds "lemmas" {count:
{"runs", "notes"}} and "parts" [{"part", "proved_by", "smt2_sha256",
"runs"}] ([] when the lemma was proved whole). ``proof.cross_checked`` is
true when the whole lemma, or every part, was proved by two solvers.

Hex patterns are in each format's storage width (tf32 in a 32-bit word);
"decimal" is the exact value ("-0", "inf", "nan" for those). ``replay``
runs every vector through the concrete model of every hypothesis and
reports any output or "separates" entry that does not match.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from tcsmt import fileio
from tcsmt.enums import FileStatus, Verdict
from tcsmt.errors import AnswersLost, UserError
from tcsmt.fileio import write_json_atomic
from tcsmt.model.choices import OPTIONAL_INT_KEYS
from tcsmt.model.formats import Format, get_format, parse_bits
from tcsmt.model.load import params_from_dict
from tcsmt.model.params import ModelParams
from tcsmt.report.answers import lost_answers, lost_text
from tcsmt.search.vectors import Hypothesis, Vector, outputs, separated_pairs
from tcsmt.sim.dot import Result
from tcsmt.smt.service import PORTFOLIO
from tcsmt.version import tool

SCHEMA = "tcsmt-result/2"
VERDICTS = tuple(Verdict)
TOP_KEYS = ("schema", "query", "formats", "hypotheses", "verdict", "proof", "solvers", "vectors",
            "run")
SOLVER_PACKAGES = {"bitwuzla": "bitwuzla", "cvc5": "cvc5", "z3": "z3-solver", "boolector": "pyboolector"}
"""Every file names the versions of the portfolio's solvers, another
solver's (Boolector's) only where it answered."""


# ---------------------------------------------------------------------------
# Building a result
# ---------------------------------------------------------------------------

def number(fmt: Format, bits: int) -> dict:
    r = Result(bits, fmt)
    return {"hex": r.hex, "decimal": r.decimal}


def vector_record(vec: Vector, hyps: list[Hypothesis]) -> dict:
    """A vector with its outputs under every hypothesis, computed by replay."""
    fin, fb, fc = hyps[0].params.fin, hyps[0].params.fb, hyps[0].params.fc
    outs = outputs(vec, hyps)
    fs = hyps[0].params.fscale
    scales = {} if fs is None else {"scale_a": [number(fs, x) for x in vec.sa],
                                    "scale_b": [number(fs, y) for y in vec.sb]}
    mask = {"mask": list(vec.mask)} if vec.mask else {}
    return {"a": [number(fin, x) for x in vec.a], "b": [number(fb, y) for y in vec.b],
            "c": number(fc, vec.c), **scales, **mask,
            "outputs": {h.id: number(h.params.fout, outs[h.id]) for h in hyps},
            "separates": separated_pairs(outs, [h.id for h in hyps])}


def solver_versions(used=PORTFOLIO) -> dict[str, str]:
    """The version of every installed solver of the portfolio and of the
    solvers in ``used`` (stable content: pinned, so a new release shows as
    a change)."""
    out = {}
    for name, package in SOLVER_PACKAGES.items():
        if name not in PORTFOLIO and name not in used:
            continue
        try:
            out[name] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return out


def run_record(seconds: float, proved_by: Sequence[str] = (), solver: dict | None = None,
               smt2_sha256: str = "", **details) -> dict:
    """The volatile part of a result: how the answer was obtained this time."""
    return {"tool": tool(),
            "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "seconds": round(seconds, 3), "proved_by": list(proved_by), "solver": solver or {},
            "smt2_sha256": smt2_sha256, **details}


def make_result(query: dict, hyps: list[Hypothesis], vectors: list[Vector], verdict: str,
                run: dict, cross_checked: bool = False, **extra) -> dict:
    """A complete result document (validated); ``extra`` adds stable keys
    (a property's ``pairs``)."""
    p = hyps[0].params
    doc = {
        "schema": SCHEMA,
        "query": query,
        "formats": {"a": p.in_format, "b": p.fb.name, "c": p.c_format,
                    **({"scale": p.scale_format} if p.scale_format else {})},
        "hypotheses": [h.record() for h in hyps],
        "verdict": str(verdict),
        "proof": {"cross_checked": cross_checked} if verdict == Verdict.UNSAT else None,
        "solvers": solver_versions(answered(run)),
        "vectors": [vector_record(v, hyps) for v in vectors],
        **extra,
        "run": run,
    }
    validate(doc)
    return doc


# ---------------------------------------------------------------------------
# Writing and reading
# ---------------------------------------------------------------------------

def answered(run: dict) -> set[str]:
    """The solvers a run record names as having proved or found something."""
    solver = run.get("solver") or {}
    return {*run.get("proved_by", []), *solver.get("wins", {}), solver.get("name", "")} - {""}


def stable(doc: dict) -> dict:
    """A document's stable content: everything but ``run``."""
    return {k: v for k, v in doc.items() if k != "run"}


def write_result(path: str | Path, doc: dict, check=None, replace_answers: bool = False,
                 how: str = "--replace-answers") -> FileStatus:
    """Validate, then write atomically (never half a file), unless the file
    already holds the same stable content: then it is left as it was.
    ``check`` validates other schemas (default: tcsmt-result). A document
    that would leave unknown an answer the file holds (its question the
    same) is not written unless ``replace_answers``: AnswersLost, whose
    line says what and that ``how`` forces it."""
    (check or validate)(doc)
    old = fileio.json_object_or_none(path)
    if old is not None and stable(old) == json.loads(json.dumps(stable(doc))):
        return FileStatus.UNCHANGED
    lost = [] if replace_answers else lost_answers(old, doc)
    if lost:
        raise AnswersLost(lost_text(path, lost, how), lost)
    write_json_atomic(path, doc)
    return FileStatus.NEW if old is None else FileStatus.CHANGED


def earlier(prior: str | Path | dict | None) -> dict | None:
    """An earlier result whose vectors a search tries first: the document
    itself (as jobs on other machines receive it), or read from its file."""
    if prior is None or isinstance(prior, dict):
        return prior
    return fileio.json_object_or_none(prior)


def load(path: str | Path) -> dict:
    """A result file, parsed and validated (UserError naming the file)."""
    doc = fileio.read_json(path)
    validate(doc, str(path))
    return doc


def _fail(where: str, msg: str) -> UserError:
    return UserError(f"{where}: {msg}")


def validate(doc, where: str = "result") -> None:
    """Check a result document's shape; UserError at the first problem."""
    if not isinstance(doc, dict):
        raise _fail(where, "not a JSON object")
    schema = doc.get("schema")
    if schema != SCHEMA:
        raise _fail(where, f"schema {schema!r} is not {SCHEMA!r}")
    missing = [k for k in TOP_KEYS if k not in doc]
    if missing:
        raise _fail(where, f"missing key {missing[0]!r}")
    if doc["verdict"] not in VERDICTS:
        raise _fail(where, f"verdict {doc['verdict']!r} is not one of {', '.join(VERDICTS)}")
    if doc["verdict"] == Verdict.UNSAT and not isinstance(doc["proof"], dict):
        raise _fail(where, "an unsat verdict needs a proof")
    if not isinstance(doc["run"], dict):
        raise _fail(where, "run is not an object")
    hyps = _check_hypotheses(doc["hypotheses"], where)
    fmts = _check_formats(doc["formats"], where)
    k = doc["query"].get("k") if isinstance(doc["query"], dict) else None
    if not isinstance(doc["vectors"], list):
        raise _fail(where, "vectors is not a list")
    for i, v in enumerate(doc["vectors"]):
        _check_vector(v, fmts, hyps, k, f"{where}: vector {i}")


def _check_hypotheses(hyps, where: str) -> dict[str, ModelParams]:
    if not isinstance(hyps, list) or not hyps:
        raise _fail(where, "hypotheses is not a non-empty list")
    out: dict[str, ModelParams] = {}
    for h in hyps:
        if not isinstance(h, dict) or not isinstance(h.get("id"), str) or "parameters" not in h:
            raise _fail(where, "a hypothesis needs an id and parameters")
        if h["id"] in out:
            raise _fail(where, f"hypothesis id {h['id']!r} appears twice")
        out[h["id"]] = params_from_record(h, where)
    return out


def params_from_record(h: dict, where: str = "result") -> ModelParams:
    """The ModelParams a hypothesis record describes."""
    params = h.get("parameters")
    if not isinstance(params, dict):
        raise _fail(where, f"hypothesis {h.get('id')!r}: parameters is not an object")
    data = {k: ("none" if v is None and (k in OPTIONAL_INT_KEYS or k == "nan_bits") else v)
            for k, v in params.items()}
    data.update(name=str(h.get("label") or h["id"]), arch="(from result file)")
    return params_from_dict(data, f"{where}: hypothesis {h['id']!r}")


def _check_formats(fmts, where: str) -> dict[str, Format]:
    if not isinstance(fmts, dict) or set(fmts) - {"scale"} != {"a", "b", "c"}:
        raise _fail(where, "formats must name a, b and c (and scale, for block-scaled models)")
    try:
        return {k: get_format(v) for k, v in fmts.items()}
    except UserError as e:
        raise _fail(where, str(e)) from None


def _check_number(n, fmt: Format, where: str) -> int:
    if not isinstance(n, dict) or not isinstance(n.get("hex"), str):
        raise _fail(where, "expected {\"hex\": ..., \"decimal\": ...}")
    try:
        bits = parse_bits(n["hex"], fmt)
    except UserError as e:
        raise _fail(where, str(e)) from None
    if n.get("decimal") != number(fmt, bits)["decimal"]:
        raise _fail(where, f"decimal {n.get('decimal')!r} is not the value of {n['hex']} "
                           f"({number(fmt, bits)['decimal']})")
    return bits


def _check_vector(v, fmts, hyps: dict[str, ModelParams], k, where: str) -> None:
    if not isinstance(v, dict):
        raise _fail(where, "not an object")
    for side in ("a", "b"):
        xs = v.get(side)
        if not isinstance(xs, list) or (k is not None and len(xs) != k) or not xs:
            raise _fail(where, f"{side} is not a list of {k} numbers")
        for j, x in enumerate(xs):
            _check_number(x, fmts[side], f"{where}: {side}[{j}]")
    if len(v["a"]) != len(v["b"]):
        raise _fail(where, "a and b differ in length")
    _check_number(v.get("c"), fmts["c"], f"{where}: c")
    if "scale" in fmts:
        for side in ("scale_a", "scale_b"):
            xs = v.get(side)
            if not isinstance(xs, list) or not xs:
                raise _fail(where, f"{side} is not a list of scales")
            for j, x in enumerate(xs):
                _check_number(x, fmts["scale"], f"{where}: {side}[{j}]")
    mask = v.get("mask")
    if mask is not None and (not isinstance(mask, list) or len(mask) != len(v["a"])
                             or any(x not in (0, 1) or isinstance(x, bool) for x in mask)):
        raise _fail(where, "mask is not a list of one 0 or 1 per product")
    outs = v.get("outputs")
    if not isinstance(outs, dict) or set(outs) != set(hyps):
        raise _fail(where, "outputs must have one entry per hypothesis")
    for hid, n in outs.items():
        _check_number(n, hyps[hid].fout, f"{where}: output {hid}")
    seps = v.get("separates")
    if not isinstance(seps, list) or any(
            not isinstance(p, list) or len(p) != 2 or not set(p) <= set(hyps) for p in seps):
        raise _fail(where, "separates must be a list of pairs of hypothesis ids")


# ---------------------------------------------------------------------------
# Replay
# ---------------------------------------------------------------------------

@dataclass
class ReplayReport:
    path: str
    hypotheses: int = 0
    vectors: int = 0
    checked: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def read_vector(v: dict, fmts: dict[str, Format]) -> Vector:
    def scales(side):
        return tuple(parse_bits(x["hex"], fmts["scale"]) for x in v[side]) if "scale" in fmts else ()
    return Vector(tuple(parse_bits(x["hex"], fmts["a"]) for x in v["a"]),
                  tuple(parse_bits(y["hex"], fmts["b"]) for y in v["b"]),
                  parse_bits(v["c"]["hex"], fmts["c"]), scales("scale_a"), scales("scale_b"),
                  tuple(v.get("mask", ())))


def replay(path: str | Path) -> ReplayReport:
    """Run every vector of a result file through the concrete model of every
    hypothesis it names; list each output or separation that differs."""
    doc = load(path)
    fmts = {k: get_format(v) for k, v in doc["formats"].items()}
    ids = [h["id"] for h in doc["hypotheses"]]
    hyps = [Hypothesis(h["id"], params_from_record(h, str(path))) for h in doc["hypotheses"]]
    report = ReplayReport(str(path), len(hyps), len(doc["vectors"]))
    for i, v in enumerate(doc["vectors"]):
        outs = outputs(read_vector(v, fmts), hyps)
        for h in hyps:
            report.checked += 1
            want = parse_bits(v["outputs"][h.id]["hex"], h.params.fout)
            if outs[h.id] != want:
                got = number(h.params.fout, outs[h.id])
                report.problems.append(
                    f"vector {i}, hypothesis {h.id}: the file says {v['outputs'][h.id]['hex']}, "
                    f"the model gives {got['hex']} ({got['decimal']})")
        claimed = sorted(sorted(p, key=ids.index) for p in v["separates"])
        actual = separated_pairs(outs, ids)
        if claimed != sorted(actual):
            report.problems.append(f"vector {i}: the file says it separates {claimed}, "
                                   f"the model separates {actual}")
    return report
