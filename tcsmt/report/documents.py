"""Result documents of the searches: diff and equiv, the carry-bit proof and
monotonicity (a property's document is built by tcsmt.properties.run).

Each builder takes what a search returned (``separation.Outcome``,
``prove.CarryProof``) and gives a tcsmt-result/2 document: the question and
the answer as stable content, how it was obtained under ``run``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from tcsmt.enums import PairVerdict, Status, Verdict
from tcsmt.errors import UserError
from tcsmt.model.formats import get_format
from tcsmt.model.params import ModelParams
from tcsmt.report.results import SCHEMA, earlier, make_result, read_vector, run_record
from tcsmt.search import monotonic
from tcsmt.search.diff import ModelsDiff
from tcsmt.search.domain import Domain
from tcsmt.search.find import FindOutcome
from tcsmt.search.prove import CarryProof
from tcsmt.search.separation import Outcome
from tcsmt.search.vectors import Hypothesis, Vector
from tcsmt.smt.service import Run


def solver_record(out: Outcome) -> dict:
    """The ``run.solver`` entry of an outcome: who answered, on which
    formula, and every run."""
    w = out.winner
    return {"name": w.solver if w else "", "version": w.version if w else "",
            "seconds": round(w.seconds, 3) if w else 0.0, "formula": out.tag,
            "runs": [r.summary() for r in out.runs], "notes": list(out.notes)}


def cross_checked(proved_by: list[str]) -> bool:
    return len(set(proved_by)) >= 2


def separation_document(kind: str, hyps: list[Hypothesis], k: int, domain: Domain, out: Outcome,
                        command: str = "") -> dict:
    """diff or equiv of two or more models."""
    names = ", ".join(h.label for h in hyps)
    query = {"kind": kind, "description": f"inputs on which {names} differ", "k": k,
             "domain": domain.describe(), "command": command}
    sha = (out.answered or out.full).sha256
    run = run_record(out.seconds, out.proved_by, solver_record(out), sha)
    return make_result(query, hyps, out.vectors, out.verdict, run, cross_checked(out.proved_by))


def search_document(query: dict, hyps: list[Hypothesis], vectors: list[Vector], pair_verdicts: list,
                    out: FindOutcome | None, seconds: float) -> dict:
    """The document of a search for the fewest vectors (tcsmt.search.find):
    ``pair_verdicts`` (find.PairVerdict) on every pair no vector separates
    become ``pairs`` (stable) and ``run.pairs`` (who proved it, or why
    there is no answer); ``out`` the search's runs (None: no solver asked)."""
    proved = [pv for pv in pair_verdicts if pv.verdict == PairVerdict.UNSAT]
    unknown = [pv for pv in pair_verdicts if pv.verdict != PairVerdict.UNSAT]
    verdict = Verdict.SAT if vectors else (Verdict.UNSAT if not unknown else Verdict.UNKNOWN)
    ids = [h.id for h in hyps]
    pair = lambda pr: [ids[pr[0]], ids[pr[1]]] if pr else None  # noqa: E731
    proved_by = sorted({s for pv in proved for s in pv.proved_by})
    sha = out.sha256 if out else []
    run = run_record(seconds, proved_by, {"queries": out.queries if out else 0, "wins": _wins(out),
                                          "formulas": sha},
                     sha[0] if sha else "", found_by=list(out.found_by) if out else [],
                     pairs=[_pair_run(pv, pair) for pv in pair_verdicts])
    pairs = [{"pair": pair(pv.pair), "verdict": str(pv.verdict), "same_as": pair(pv.same_as)}
             for pv in pair_verdicts]
    return make_result(query, hyps, vectors, verdict, run,
                       all(len(set(pv.proved_by)) >= 2 for pv in proved), pairs=pairs)


def _pair_run(pv, pair) -> dict:
    """run.pairs: who proved a pair (and the parts of a proof in parts)."""
    out = {"pair": pair(pv.pair), "proved_by": pv.proved_by, "reason": pv.reason,
           "smt2_sha256": pv.smt2_sha256}
    if pv.parts is not None:
        out["parts"] = pv.parts
    return out


def _wins(out: FindOutcome | None) -> dict:
    wins: dict[str, int] = {}
    for r in out.runs if out else []:
        if r.status in (Status.SAT, Status.UNSAT):
            wins[r.solver] = wins.get(r.solver, 0) + 1
    return wins


def diff_document(diff: ModelsDiff, k: int, domain: Domain, command: str = "") -> dict:
    """diff of two or more models: the fewest vectors that separate every
    pair (and more with --count), and the verdict on every pair left."""
    names = ", ".join(h.label for h in diff.hyps)
    found = diff.found
    query = {"kind": "diff", "description": f"inputs on which {names} differ",
             "k": k, "domain": domain.describe(), "readable": True,
             "vectors_asked": max(1, len(diff.vectors)), "command": command}
    if found is not None:
        query["one_vector_for_all_pairs"] = str(found.single)
    return search_document(query, diff.hyps, diff.vectors, diff.pair_verdicts(), found, diff.seconds)


WHOLE = ("lemma: no finite input's block sum leaves the range of a {c}-carry-bit register "
         "(UNSAT); hence the outputs are equal.")
IN_PARTS = ("lemma, in parts: every aligned term of the block stays within its bound on every "
            "finite input (one formula per term, UNSAT of the converse), and words within those "
            "bounds, added one at a time, stay inside a {c}-carry-bit register (UNSAT); hence no "
            "block sum leaves it and the outputs are equal.")
WITNESS = " Vector: outputs differ with one carry bit fewer (replayed)."


def carry_proof_document(proof: CarryProof, command: str = "") -> dict:
    """The fewest carry bits: hypotheses unbounded, the fewest and one fewer;
    the witness that one fewer gives other bits; the lemma's parts, each
    with its verdict (when it was proved in parts)."""
    base, fewest = proof.base, proof.fewest
    hyps = [proof.hypothesis(None), proof.hypothesis(fewest)]
    lemma = proof.lemmas[fewest]
    vectors, notes = [], list(lemma.notes)
    if proof.witness is not None:
        hyps.append(proof.hypothesis(fewest - 1))
        vectors = proof.witness.vectors
        notes += proof.witness.notes
    query = {"kind": "prove carry-bits", "model": base.name, "k": proof.k,
             "description": "the fewest carry bits with which the block's accumulator gives the "
                            "same bits as an unbounded one for every finite input",
             "domain": proof.domain.describe(), "fewest": fewest,
             "method": (IN_PARTS if proof.parts else WHOLE).format(c=fewest) + (WITNESS if vectors else ""),
             "lemmas": {str(c): a.status for c, a in sorted(proof.lemmas.items())},
             "command": command}
    if proof.parts:             # proved in parts: each part's statement and verdict
        query["parts"] = [{"part": p.name, "statement": p.statement, "verdict": str(p.answer.status)}
                          for p in proof.parts]
    w = proof.witness
    decisive = lambda a: [r.summary() for r in a.runs if r.status in (Status.SAT, Status.UNSAT)]  # noqa: E731
    run = run_record(proof.seconds, proof.proved_by,
                     {"name": (proof.proved_by or [""])[0], "version": lemma.version,
                      "seconds": round(lemma.seconds, 3), "formula": "parts" if proof.parts else "full",
                      "runs": decisive(lemma), "notes": notes},
                     proof.formula.sha256,
                     lemmas={str(c): {"runs": decisive(a), "notes": list(a.notes)}
                             for c, a in sorted(proof.lemmas.items())},
                     parts=[{"part": p.name, "proved_by": p.answer.proved_by,
                             "smt2_sha256": p.formula.sha256, "runs": decisive(p.answer)}
                            for p in proof.parts],
                     witness=({"solver": w.winner.solver if w.winner else "", "formula": w.tag,
                               "seconds": round(w.seconds, 3)} if w else None))
    return make_result(query, hyps, vectors, Verdict.UNSAT, run, proof.cross_checked)


def monotonicity_document(prop, base: ModelParams, k: int, out: Outcome, command: str = "") -> dict:
    """x <= y with f(x) > f(y): vectors[0] is x, vectors[1] is y."""
    hyp = Hypothesis("model", base, base.name)
    query = {"kind": prop.name, "description": prop.description, "model": base.name, "k": k,
             "domain": dict(monotonic.DOMAIN),
             "monotonic_pair": "vectors[0] is x, vectors[1] is y: x <= y and f(x) > f(y)"
             if out.vectors else None,
             "command": command}
    run = run_record(out.seconds, out.proved_by, solver_record(out), out.full.sha256)
    return make_result(query, [hyp], out.vectors, out.verdict, run, cross_checked(out.proved_by))


def monotonicity_parts_document(prop, base: ModelParams, k: int, proof, seconds: float,
                                command: str = "", method=None) -> dict:
    """Monotonicity proved in parts (``proof``: a monotone_cuts.Proof, its
    parts those of ``method``: tcsmt.search.monotone_exact by default,
    tcsmt.search.monotone_split or monotone_cuts): each part's verdict in the question, who
    proved it, its formula's hash and its seconds under run."""
    from tcsmt.search import monotone_exact
    method = method or monotone_exact
    query = {"kind": prop.name, "description": prop.description, "model": base.name, "k": k,
             "domain": dict(monotonic.DOMAIN), "monotonic_pair": None,
             "method": method.METHOD,
             "parts": [{"part": p.what, "verdict": p.verdict} for p in proof.parts],
             "command": command}
    proved_by = _proved_by_all(proof) if proof.verdict == Verdict.UNSAT else []
    sha = hashlib.sha256("".join(p.sha256 for p in proof.parts).encode()).hexdigest()
    cpu = proof.cpu_seconds()
    run = run_record(seconds, proved_by,
                     {"name": (proved_by or [""])[0], "version": "", "seconds": round(seconds, 3),
                      "formula": "parts", "runs": [], "notes": [],
                      "cpu_seconds": cpu},
                     sha, parts=[{**p.doc(), "smt2_sha256": p.sha256} for p in proof.parts])
    return make_result(query, [Hypothesis("model", base, base.name)], [], proof.verdict, run,
                       cross_checked(proved_by))


def _proved_by_all(proof) -> list[str]:
    """The solvers that proved every part."""
    asked = [p for p in proof.parts if p.verdict != "unread"]    # unread: no solver needed
    names = [s for s in (asked[0].proved_by if asked else [])]
    return [s for s in names if all(s in p.proved_by for p in asked)]


def prior_vectors(path: str | Path | dict) -> list[Vector]:
    """The vectors of an earlier tcsmt-result (a document, or the path of its
    file; none when it is missing, unreadable or of another schema):
    searches try them first, so a rerun keeps them whichever solver would
    win a race."""
    doc = earlier(path)
    if doc is None or doc.get("schema") not in (SCHEMA, "tcsmt-result/1"):   # same vector layout
        return []
    try:
        fmts = {k: get_format(v) for k, v in doc["formats"].items()}
        return [read_vector(v, fmts) for v in doc["vectors"]]
    except (KeyError, TypeError, ValueError, AttributeError, UserError):
        return []


def prior_single(path: str | Path | dict) -> Verdict | None:
    """The earlier result's answer to "one vector for every pair"."""
    doc = earlier(path)
    try:
        return Verdict(doc["query"]["one_vector_for_all_pairs"]) if doc else None
    except (KeyError, TypeError, ValueError):
        return None


__all__ = ["Run", "carry_proof_document", "diff_document", "monotonicity_document",
           "monotonicity_parts_document", "prior_single",
           "prior_vectors", "search_document", "separation_document", "solver_record"]
