"""What the current code would write, given a committed file's answers.

A result file holds two kinds of content: what the code states without a
solver (the question, the hypotheses and their parameters, the formats,
the skipped properties, the schema, each vector's outputs and what it
separates, the solvers' versions) and what only solving gave (which
vectors, the verdicts, who proved what). ``restate(kind, ..., doc)`` hands
the second kind, read from the file, to the very document builder the
query uses, and returns the document the current code writes with those
answers. Its stable content equals the file's exactly when the file is
current; witnesses are replayed on the concrete model on the way (a
witness that no longer holds raises WitnessError).

No solver is asked: ``tcsmt regen --check`` restates every file in seconds.
Proofs (unsat verdicts) are taken as the file states them; that the code
they were proved on still computes the same is what the replayed vectors
and the restated hypotheses check, not a new proof.
"""

from __future__ import annotations

import json

from tcsmt.enums import PairVerdict as PV
from tcsmt.enums import PropertyKind, Status, Verdict
from tcsmt.smt.service import Answer, Run
from tcsmt.smt.smtlib import Formula

COVERAGE_ANSWERS = ("vectors", "summary", "verdict")
"""Keys of a coverage document only its gap search gives (its generated
vectors are replayed by tcsmt.cases.coverage.replay_coverage instead)."""


def _proof_runs(solvers: list[str], tag: str = "full") -> list[Run]:
    """Runs standing for the solvers a file says proved it."""
    return [Run(s, Status.UNSAT, tag=tag) for s in solvers]


def restate_property(prop_name: str, arch: str, command: str, doc: dict) -> dict:
    """A property's document (tcsmt.properties.run.document, or the
    monotonicity document) from the file's vectors and verdicts."""
    from tcsmt.properties.registry import get_property
    from tcsmt.properties.run import resolve_base
    prop = get_property(prop_name)
    base = resolve_base(prop, arch)
    if prop.kind == PropertyKind.MONOTONIC:
        return restate_monotonicity(prop, base, command, doc)
    return _restate_search(prop, base, command, doc)


def _restate_search(prop, base, command: str, doc: dict) -> dict:
    from tcsmt.properties.run import document, hypotheses
    from tcsmt.report.documents import prior_vectors
    from tcsmt.search.find import FindOutcome, PairVerdict
    hyps = hypotheses(prop, base)
    ids = [h.id for h in hyps]

    def index(pr) -> tuple[int, int]:
        return ids.index(pr[0]), ids.index(pr[1])
    how = {tuple(p["pair"]): p for p in doc["run"].get("pairs", [])}
    pairs = [PairVerdict(index(p["pair"]), PV(p["verdict"]),
                         list(how.get(tuple(p["pair"]), {}).get("proved_by", [])),
                         same_as=index(p["same_as"]) if p.get("same_as") else None,
                         parts=how.get(tuple(p["pair"]), {}).get("parts"))
             for p in doc.get("pairs", [])]
    out = FindOutcome(hyps, prop.k(base), prop.domain(base), prior_vectors(doc), pairs,
                      Verdict(doc["query"]["one_vector_for_all_pairs"]))
    separated = out.separated
    for pv in pairs:
        if pv.pair in separated:
            raise Inconsistent(f"pair {ids[pv.pair[0]]}|{ids[pv.pair[1]]} is listed {pv.verdict.value}, "
                               "yet a vector of the file separates it on the concrete model")
    return document(prop, base, out, command)


class Inconsistent(ValueError):
    """A file whose answers contradict each other (a pair listed unknown or
    proved inseparable that one of its own vectors separates)."""


def restate_monotonicity(prop, base, command: str, doc: dict) -> dict:
    from tcsmt.report.documents import monotonicity_document, prior_vectors
    from tcsmt.search import monotone_cuts, monotone_exact, monotone_split, monotonic
    from tcsmt.search.separation import Outcome
    k = prop.k(base)
    for method in (monotone_exact, monotone_split, monotone_cuts):
        if doc["query"].get("method") == method.METHOD:
            return _restate_parts(prop, base, k, command, doc, method)
    vectors = prior_vectors(doc)
    if doc["verdict"] == Verdict.SAT:
        monotonic.check_witness(base, k, *vectors)
    out = Outcome(Verdict(doc["verdict"]), Formula(""), _proof_runs(doc["run"]["proved_by"]),
                  vectors, tag="full")
    return monotonicity_document(prop, base, k, out, command)


def _restate_parts(prop, base, k: int, command: str, doc: dict, method) -> dict:
    """A monotonicity proof in parts (``method``: tcsmt.search.monotone_exact,
    monotone_split or monotone_cuts) from the file's verdicts and runs; the parts as the
    current code names them (one the file lacks: unknown)."""
    from tcsmt.report.documents import monotonicity_parts_document
    from tcsmt.search.monotone_cuts import Part, Proof
    said = {p["part"]: p["verdict"] for p in doc["query"].get("parts", [])}
    how = {p["part"]: p for p in doc["run"].get("parts", [])}
    parts = [Part(name, said.get(name, "unknown"), list(how.get(name, {}).get("proved_by", [])),
                  dict(how.get(name, {}).get("cpu_seconds", {})), dict(how.get(name, {}).get("seconds", {})),
                  sha256=how.get(name, {}).get("smt2_sha256", ""))
             for name in method.part_names(base, k, said)]
    verdict = Verdict.UNSAT if all(p.verdict in ("unsat", "unread") for p in parts) else Verdict.UNKNOWN
    return monotonicity_parts_document(prop, base, k, Proof(verdict, parts, []),
                                       doc["run"].get("seconds", 0.0), command, method)


def restate_carry_proof(arch: str, command: str, doc: dict) -> dict:
    """The carry-bit proof's document from the file's lemma verdicts, parts
    and witness; the parts' statements (their bounds) as the current code
    states them."""
    from tcsmt.model.choose import choose
    from tcsmt.report.documents import carry_proof_document, prior_vectors
    from tcsmt.search import overflow as ov
    from tcsmt.search.domain import Domain
    from tcsmt.search.prove import MAX_CARRY, CarryProof, Part, part_statements
    from tcsmt.search.separation import Outcome
    base = choose(arch)
    fewest = doc["query"]["fewest"]
    lemmas = {int(c): Answer(s, "", _proof_runs(doc["run"]["proved_by"]) if int(c) == fewest else [])
              for c, s in doc["query"]["lemmas"].items()}
    parts = []
    if doc["query"].get("parts"):
        said = {p["part"]: p for p in doc["query"]["parts"]}
        by = {p["part"]: p["proved_by"] for p in doc["run"].get("parts", [])}
        est = ov.estimate(base, base.block_size, MAX_CARRY)
        for name, statement in part_statements(base, est, fewest):
            answer = Answer(said.get(name, {}).get("verdict", "unknown"), "", _proof_runs(by.get(name, [])))
            parts.append(Part(name, statement, Formula(""), answer))
    vectors = prior_vectors(doc)
    witness = Outcome(Verdict.SAT, Formula(""), vectors=vectors, tag="earlier result") if vectors else None
    proof = CarryProof(base, base.block_size, Domain(), fewest, lemmas, witness, parts=parts)
    return carry_proof_document(proof, command)


def restate_compare(arch: str, k: int, reproduce: bool, command: str, doc: dict) -> dict:
    """compare-algorithms' document from the file's verdict and witness
    (replayed on the concrete definition)."""
    from tcsmt.cases import compare
    from tcsmt.search.separation import Outcome
    tc = compare.arch_model(arch)
    vectors = []
    for v in doc["vectors"]:
        a, b = [int(x["hex"], 16) for x in v["a"]], [int(y["hex"], 16) for y in v["b"]]
        c = int(v["c"]["hex"], 16)
        vectors.append(compare.vector_record(compare.check_witness(tc, a, b, c, reproduce=reproduce),
                                             a, b, c))
    out = Outcome(Verdict(doc["verdict"]), Formula(""), _proof_runs(doc["run"]["proved_by"]), tag="full")
    return compare.document(tc, k, reproduce, vectors, out, command)


def restate_coverage(suite: str, command: str, doc: dict) -> dict:
    """A coverage document: everything the suite, its spaces and the
    simulators give (run without closing gaps), with the file's verdicts on
    the pairs it left unseparated and its generated vectors (replayed)."""
    from tcsmt.cases import coverage
    from tcsmt.errors import WitnessError
    new = coverage.run_coverage(suite, generate=False, command=command)
    status = {(u["space"], u["pair"]): u for u in doc.get("unseparated", [])}
    new["unseparated"] = [{**u, **{k: v for k, v in status.get((u["space"], u["pair"]), {}).items()
                                   if k in ("status", "by")}} for u in new["unseparated"]]
    for key in COVERAGE_ANSWERS:
        new[key] = doc.get(key)
    problems = coverage.replay_vectors(doc)
    if problems:
        raise WitnessError(f"a generated vector does not replay: {problems[0]}")
    return new


def differences(old: dict, new: dict) -> list[str]:
    """The keys (one level into objects: ``query.description``) whose
    values differ between two documents' stable content."""
    old, new = json.loads(json.dumps(old)), json.loads(json.dumps(new, default=str))
    out = []
    for key in list(new) + [k for k in old if k not in new]:
        if key == "run" or old.get(key) == new.get(key):
            continue
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += [f"{key}.{k}" for k in list(b) + [k for k in a if k not in b] if a.get(k) != b.get(k)]
        else:
            out.append(key)
    return out


def stale_reason(restate, doc: dict | None) -> str | None:
    """Why a file is not what the current code writes (None: it is):
    no file, a document that cannot be restated (its hypotheses changed,
    a witness no longer holds), or the stable keys that differ."""
    from tcsmt.errors import UserError, WitnessError
    from tcsmt.report.results import stable
    if doc is None:
        return "no file (or not a JSON object)"
    try:
        new = restate(doc)
    except Inconsistent as e:
        return f"its answers disagree: {e}"
    except WitnessError as e:
        return f"a witness no longer holds: {e}"
    except (UserError, KeyError, ValueError, TypeError, IndexError) as e:
        return f"its answers no longer fit the question ({type(e).__name__}: {e})"
    diff = differences(stable(doc), stable(new))
    return f"the current code writes other {', '.join(diff)}" if diff else None
