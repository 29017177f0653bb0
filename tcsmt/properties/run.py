"""Running a property on an architecture: hypotheses, the search, the file.

``run_property`` resolves the architecture's model (or the format pair the
property asks for), builds the hypotheses, calls ``tcsmt.search.find`` and returns a
tcsmt-result/1 document with one more key, ``pairs``: the verdict on every
pair of hypotheses no vector separates (proved inseparable, with the solvers
that proved it, or unknown with the reason).
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

from tcsmt.errors import UserError
from tcsmt.invocation import command_line
from tcsmt.model.catalogue import find_model
from tcsmt.model.params import ModelParams, apply_overrides
from tcsmt.properties.registry import Property, get_property, resolve_hypotheses
from tcsmt.report.results import make_result
from tcsmt.search import find
from tcsmt.search.vectors import Hypothesis
from tcsmt.smt import service


def resolve_base(prop: Property, arch: str, formats: str | None = None,
                 overrides: list[str] | None = None) -> ModelParams:
    """The model the property is asked about: the architecture's default
    model, or the format pair the property needs when the default does not
    apply, or the formats asked for."""
    base = find_model(arch, formats)
    if formats is None and prop.applies(base) and prop.formats:
        base = find_model(arch, prop.formats)
    base = apply_overrides(base, list(overrides or []))
    prop.check(base)
    return base


def hypotheses(prop: Property, base: ModelParams) -> list[Hypothesis]:
    models = resolve_hypotheses(prop, base)
    return [Hypothesis(label, m, f"{base.name} " + " ".join(
        f"--set {k}={v}" for k, v in _diff(base, m).items()))
        for label, m in zip(models.labels, models.models)]


def _diff(base: ModelParams, m: ModelParams) -> dict:
    a, b = base.parameter_dict(), m.parameter_dict()
    return {k: ("unbounded" if b[k] is None and k == "carry_bits" else b[k])
            for k in b if a.get(k) != b[k]}


def result_dir(base: ModelParams, prop: Property) -> str:
    """results/<dir>/: the architecture's name for the model a property
    picks by default, the model's name otherwise."""
    try:
        default = resolve_base(prop, base.arch)
    except UserError:
        default = None
    if default is not None and default.parameter_dict() == base.parameter_dict() \
            and default.name == base.name:
        return base.arch
    return base.name


def result_path(base: ModelParams, prop: Property, root: str | Path = "results") -> Path:
    return Path(root) / result_dir(base, prop) / f"{prop.name}.json"


def run_property(prop: Property, base: ModelParams, solver: str = "portfolio",
                 timeout: float = 60.0, readable: bool = True, cross_check: bool = False,
                 command: str | None = None) -> dict:
    if prop.kind == "monotonic":
        from tcsmt.search.monotonic import run_monotonicity
        return run_monotonicity(prop, base, solver, timeout, readable, cross_check, command)
    hyps = hypotheses(prop, base)
    k, domain = prop.k(base), prop.domain(base)
    out = find.find_vectors(hyps, k, domain, solver, timeout, readable, cross_check,
                            lemma=prop.lemma)
    return document(prop, base, out, solver, command)


def document(prop: Property, base: ModelParams, out: find.FindOutcome, solver: str,
             command: str | None) -> dict:
    proved = [pv for pv in out.pairs if pv.verdict == "unsat"]
    unknown = [pv for pv in out.pairs if pv.verdict not in ("unsat",)]
    if out.vectors:
        verdict = "sat"
    elif not unknown:
        verdict = "unsat"
    else:
        verdict = "unknown"
    ids = [h.id for h in out.hyps]
    query = {
        "kind": prop.name,
        "description": prop.description,
        "parameters": list(prop.parameters),
        "model": base.name,
        "k": out.k,
        "domain": out.domain.describe(),
        "readable": True,
        "one_vector_for_all_pairs": out.single,
        "command": command if command is not None else _command(),
    }
    solver_info = {
        "name": solver,
        "versions": _versions(out),
        "queries": out.queries,
        "seconds": round(out.seconds, 3),
        "wins": _wins(out),
        "formulas": out.sha256,
    }
    proved_by = sorted({s for pv in proved for s in pv.proved_by})
    doc = make_result(query, out.hyps, out.vectors, verdict, solver_info,
                      out.sha256[0] if out.sha256 else "", out.seconds, proved_by)
    for v, src in zip(doc["vectors"], out.found_by):
        v["found_by"] = src
    doc["pairs"] = [{"pair": [ids[pv.pair[0]], ids[pv.pair[1]]], "verdict": pv.verdict,
                     "proved_by": pv.proved_by, "reason": pv.reason,
                     "smt2_sha256": pv.smt2_sha256,
                     "same_as": [ids[pv.same_as[0]], ids[pv.same_as[1]]] if pv.same_as else None}
                    for pv in out.pairs]
    return doc


def _versions(out: find.FindOutcome) -> dict:
    vs = {}
    for r in out.runs:
        if r.version:
            vs[r.solver] = r.version
    for name in service.available_solvers():
        if name not in vs:
            try:
                vs[name] = metadata.version(service.PIP_NAMES.get(name, name))
            except metadata.PackageNotFoundError:
                pass
    return vs


def _wins(out: find.FindOutcome) -> dict:
    wins: dict[str, int] = {}
    for r in out.runs:
        if r.status in ("sat", "unsat"):
            wins[r.solver] = wins.get(r.solver, 0) + 1
    return wins


def _command() -> str:
    return command_line()


def run_named(name: str, arch: str, formats: str | None = None, overrides=None, **kw) -> dict:
    prop = get_property(name)
    return run_property(prop, resolve_base(prop, arch, formats, overrides), **kw)
