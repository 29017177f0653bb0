"""Running a property on an architecture: hypotheses, the search, the file.

``run_property`` resolves the architecture's model (or the format pair the
property asks for), builds the hypotheses, calls ``tcsmt.search.find`` and
returns a tcsmt-result/2 document with one more key, ``pairs``: the verdict
on every pair of hypotheses no vector separates (proved inseparable, or
unknown; ``run.pairs`` says which solvers proved it, or why there is no
answer). Given the path of an earlier result for the same question, its
vectors are tried first (``tcsmt.search.find``'s ``prior``), so a rerun keeps
them.
"""

from __future__ import annotations

import time
from pathlib import Path

from tcsmt.enums import PropertyKind, Verdict
from tcsmt.errors import UserError
from tcsmt.invocation import command_line
from tcsmt.model.choose import choose
from tcsmt.model.overrides import apply_overrides
from tcsmt.model.params import ModelParams
from tcsmt.properties.registry import Property, get_property, resolve_hypotheses
from tcsmt.report.documents import (
    monotonicity_document,
    monotonicity_parts_document,
    prior_single,
    prior_vectors,
    search_document,
)
from tcsmt.report.results import earlier
from tcsmt.search import find, monotone_cuts, monotone_exact, monotone_split
from tcsmt.search.monotonic import run_monotonicity
from tcsmt.search.vectors import Hypothesis
from tcsmt.smt import service


def resolve_base(prop: Property, arch: str, formats: str | None = None,
                 overrides: list[str] | None = None) -> ModelParams:
    """The model the property is asked about: the architecture's default
    model, or the model the property needs when the default does not
    apply (its format pair, or the model its ``pick`` names), or the
    formats asked for; a model named (not an architecture) is that model,
    or the property's reason why it does not apply."""
    base = choose(arch, formats)
    if formats is None and prop.applies(base) and arch != base.name:
        if prop.pick is not None:                  # an architecture: the model the property asks for
            base = choose(prop.pick(base.arch))
        elif prop.formats:
            base = choose(arch, prop.formats)      # an architecture: its pair the property asks for
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
                 timeout: float = service.DEFAULT_TIMEOUT, readable: bool = True,
                 cross_check: bool = False, command: str | None = None,
                 prior: str | Path | dict | None = None, use_pool: bool = True,
                 progress=None) -> dict:
    """The property's result document; ``prior``: an earlier result for
    the same question (a document, or its file's path), whose vectors are
    tried first; ``progress(name, done, total)`` hears of a proof in parts
    as it goes."""
    command = command if command is not None else command_line()
    k = prop.k(base)
    old = prior_vectors(prior) if prior else []
    if prop.kind == PropertyKind.MONOTONIC:
        exact = None
        if monotone_exact.applies(base, k):          # the whole formula is too hard: in parts
            start = time.monotonic()
            proof = monotone_exact.prove(base, k, budget=timeout, every_part=True)   # per part and solver
            exact = monotonicity_parts_document(prop, base, k, proof, time.monotonic() - start, command)
            if proof.verdict == Verdict.UNSAT:
                return exact
        mono = run_monotonicity(base, k, solver, timeout, readable, cross_check, old, use_pool)
        if mono.verdict == Verdict.UNKNOWN and exact is not None:
            return exact         # no answer either way: the file keeps which parts stand
        if mono.verdict == Verdict.UNKNOWN and monotone_split.applies(base, k):
            # the whole formula is too hard: one step at a time, split at the alignment points
            start = time.monotonic()
            proof = monotone_split.prove(base, k, budget=max(timeout, monotone_split.PART_TIMEOUT),
                                         total=monotone_split.TOTAL_PARTS * timeout, progress=progress)
            if proof.verdict == Verdict.UNSAT:
                return monotonicity_parts_document(prop, base, k, proof, time.monotonic() - start,
                                                   command, monotone_split)
        elif mono.verdict == Verdict.UNKNOWN and monotone_cuts.applies(base, k):
            # every addition rounded: segment by segment, cut at those roundings
            start = time.monotonic()
            proof = monotone_cuts.prove(base, k, ("bitwuzla", "boolector"),
                                        budget=max(timeout, monotone_cuts.PART_TIMEOUT),
                                        gaps=monotone_cuts.GAPS, at_once=True,
                                        total=monotone_cuts.TOTAL_PARTS * timeout, progress=progress)
            if proof.verdict == Verdict.UNSAT:
                return monotonicity_parts_document(prop, base, k, proof, time.monotonic() - start,
                                                   command, monotone_cuts)
            if proof.verdict == Verdict.SAT and proof.vectors:     # a step part's pair replays
                found = monotone_cuts.counterexample(mono, proof, mono.seconds + time.monotonic() - start)
                return monotonicity_document(prop, base, k, found, command)
        return monotonicity_document(prop, base, k, mono, command)
    hyps = hypotheses(prop, base)
    single = prior_single(prior) if prior is not None and same_question(prior, hyps, k) else None
    out = find.find_vectors(hyps, k, prop.domain(base), solver, timeout, readable, cross_check,
                            use_pool, prop.lemma, old, single)
    return document(prop, base, out, command)


def same_question(path: str | Path | dict, hyps: list[Hypothesis], k: int) -> bool:
    """Whether the earlier result (a document, or its path) asked about
    these hypotheses and k."""
    doc = earlier(path)
    if doc is None:
        return False
    try:
        return doc["query"]["k"] == k and [h["parameters"] for h in doc["hypotheses"]] == \
            [h.params.parameter_dict() for h in hyps]
    except (TypeError, KeyError):
        return False


def document(prop: Property, base: ModelParams, out: find.FindOutcome, command: str) -> dict:
    query = {
        "kind": prop.name,
        "description": prop.description,
        "parameters": list(prop.parameters),
        "model": base.name,
        "k": out.k,
        "domain": out.domain.describe(),
        "readable": True,
        "one_vector_for_all_pairs": str(out.single),
        "command": command,
    }
    return search_document(query, out.hyps, out.vectors, out.pairs, out, out.seconds)


def run_named(name: str, arch: str, formats: str | None = None, overrides=None, **kw) -> dict:
    prop = get_property(name)
    return run_property(prop, resolve_base(prop, arch, formats, overrides), **kw)
