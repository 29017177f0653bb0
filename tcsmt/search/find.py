"""Finding the fewest input vectors that tell a property's hypotheses apart.

``find_vectors`` asks the solvers, through the shared separation machinery
(tcsmt.search.separation), for inputs on which hypotheses give different bits:

1. one vector that separates every pair at once, if there is one;
2. otherwise, a vector for the first pair not yet separated (it usually
   separates several), then again one vector for every pair still open;
   every witness is replayed on the concrete model, and what it separates
   is read off the replay;
3. a pair no vector separates is proved so (UNSAT of the full formula,
   optionally cross-checked) and its hypotheses merge into one class, so
   no question is asked twice.

A pool of readable candidates (tcsmt.search.pool) goes first: it is run through
every hypothesis with the batch simulator and often separates most pairs
without a solver.

Readable vectors: besides the full formula, restricted formulas race
(few non-zero products, inputs with few significant bits) and the first
satisfying one wins; they are smaller, so they usually answer first, and
their witnesses look like the hand-made tests of the papers (powers of two,
1 + 2^-k). A restriction can only find vectors; proofs use the full formula.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from tcsmt.enums import PairVerdict as PV
from tcsmt.enums import Verdict
from tcsmt.errors import WitnessError
from tcsmt.search import pool, sweeping
from tcsmt.search import separation as sep
from tcsmt.search.domain import Domain
from tcsmt.search.shrink import shrink
from tcsmt.search.vectors import Hypothesis, Pair, Vector, all_pairs, separated_by
from tcsmt.smt import service
from tcsmt.smt.service import Job, Run
from tcsmt.smt.smtlib import Formula

SINGLE_TIMEOUT = 6.0          # seconds to look for one vector for several pairs (an economy, not a proof)


@dataclass
class PairVerdict:
    """What is known about a pair no vector of the result separates."""
    pair: Pair
    verdict: PV                  # proved inseparable (unsat), or unknown
    proved_by: list[str] = field(default_factory=list)
    reason: str = ""
    smt2_sha256: str = ""
    same_as: Pair | None = None  # inseparable because a proved pair makes it so
    parts: dict | None = None    # a proof in parts (tcsmt.search.sweeping): its summary


@dataclass
class FindOutcome:
    hyps: list[Hypothesis]
    k: int
    domain: Domain
    vectors: list[Vector] = field(default_factory=list)
    pairs: list[PairVerdict] = field(default_factory=list)
    single: Verdict = Verdict.UNKNOWN    # one vector for every pair
    found_by: list[str] = field(default_factory=list)   # per vector: "pool" or the solver
    runs: list[Run] = field(default_factory=list)
    queries: int = 0
    seconds: float = 0.0
    sha256: list[str] = field(default_factory=list)
    lemma: object = None         # the property's lemma (see ask), if any

    @property
    def separated(self) -> set[Pair]:
        return set().union(*(separated_by(v, self.hyps) for v in self.vectors))


# ---------------------------------------------------------------------------
# One question: a vector separating every pair in a set
# ---------------------------------------------------------------------------

def job_order(forms: list[tuple[str, Formula]], names: list[str],
              abstract: Formula | None = None) -> list[Job]:
    """Jobs in the order they start (a few run at once). First the first
    solver on the full formula and on the free-products formula (the quick
    proofs), and a second solver (Z3 where installed) on the formula with
    two non-zero products, where witnesses are usually found fastest; then
    the other solvers on the full formula; then the restricted formulas
    (readable witnesses, short budgets). Witnesses are shrunk on the
    concrete model afterwards (tcsmt.search.shrink), so the restrictions are
    not needed for readability first."""
    full = forms[-1]
    by_tag = dict(forms[:-1])
    budget = lambda tag: None if tag == sep.FULL else sep.RESTRICTION_BUDGET  # noqa: E731
    order = [Job(full[1], names[0], full[0])]
    if abstract is not None:
        order.append(Job(abstract, names[0], sep.ABSTRACT))
    others = names[1:]
    second = "z3" if "z3" in others else (others[0] if others else names[0])
    if "support-2" in by_tag:
        order.append(Job(by_tag["support-2"], second, "support-2", budget("support-2")))
    order += [Job(full[1], s, full[0]) for s in others]
    started = {(j.tag, j.solver) for j in order}
    order += [Job(f, s, t, budget(t)) for s in names for t, f in forms[:-1] if (t, s) not in started]
    return order


EQUAL = "equal-products"
EQUAL_BUDGET = 8.0
"""CPU seconds of the first solver on the equal-products formula (every
product a0*b0) when the hypotheses differ only in their carry bits: the
large sums that tell register widths apart are there, found in 1 to 3 s
where the full formula gives nothing in a minute (RTX Blackwell's and
Blackwell Ultra's carry bits 3, 4 and 5 at k = 16)."""


def differ_only_in(hyps, pairs: list[Pair], name: str) -> bool:
    """Whether every pair's hypotheses differ in parameter ``name`` and in
    no other."""
    for i, j in pairs:
        a, b = hyps[i].params.parameter_dict(), hyps[j].params.parameter_dict()
        if {key for key in a.keys() | b.keys() if a.get(key) != b.get(key)} != {name}:
            return False
    return bool(pairs)


def simulated(hyps, k, domain, pairs: list[Pair]) -> Vector | None:
    """A vector of the candidate pool (tcsmt.search.pool: readable inputs
    run through the batch simulator) that separates every pair in
    ``pairs`` on the concrete model, or None."""
    for vec in pool.search(hyps, k, domain, pairs)[:1]:
        if set(pairs) <= separated_by(vec, hyps):
            return vec
    return None


def ask(hyps, k, domain, pairs: list[Pair], solver: str, timeout: float, readable: bool,
        cross_check: bool = False, lemma=None, simulate: bool = False) -> sep.Outcome:
    """One vector separating every pair in ``pairs``, or a proof there is
    none. Proofs come from the full formula, from the same question with
    free products (an over-approximation: its UNSAT is a proof, its SAT is
    ignored), or, for one pair, from the property's lemma (a formula whose
    UNSAT implies the pair agrees everywhere; its SAT is ignored too).
    ``simulate``: first the candidate pool (``simulated``), replayed on the
    concrete model; the solvers are asked only when it separates nothing,
    that is mostly for proofs (find_vectors runs the pool itself)."""
    if simulate:
        t0 = time.monotonic()
        vec = simulated(hyps, k, domain, pairs)
        if vec is not None:
            full = sep.separation_formula(hyps, k, domain, pairs, every=True)
            return sep.Outcome(Verdict.SAT, full, [], [vec], tag="pool", source="pool",
                               seconds=time.monotonic() - t0)
    forms = sep.formulations(hyps, k, domain, pairs, every=True, readable=readable)
    full = forms[-1][1]
    if full.trivially_unsat:
        return sep.Outcome(Verdict.UNSAT, full, reason="the hypotheses build the same formula",
                           tag=sep.FULL, answered=full)
    names, _ = service.choose_solvers(solver)
    abstract = sep.free_products_formula(hyps, k, domain, pairs, every=True)
    jobs = job_order(forms, names, abstract)
    known = forms + [(sep.ABSTRACT, abstract)]
    if k > 2 and differ_only_in(hyps, pairs, "carry_bits"):
        equal = sep.separation_formula(hyps, k, domain, pairs, every=True, tag=EQUAL, equal=True)
        jobs.insert(1, Job(equal, names[0], EQUAL, EQUAL_BUDGET))
        known.append((EQUAL, equal))
    if lemma is not None and len(pairs) == 1:
        extra = lemma(hyps[pairs[0][0]], hyps[pairs[0][1]], k, domain)
        if extra is not None:
            jobs.insert(1, Job(extra, names[0], sep.LEMMA))
            known.append((sep.LEMMA, extra))

    def replay(run):
        vec = sep.replayed_witness(run.values, hyps, k, domain, pairs, every=True)
        if readable:
            vec = shrink(vec, hyps, pairs, domain)
        missed = [pr for pr in pairs if pr not in separated_by(vec, hyps)]
        if missed:
            raise WitnessError(f"witness {vec} leaves pairs {missed} unseparated on the "
                               f"concrete model although the formula asked for them")
        return [vec]

    return sep.race(jobs, known, timeout, replay, cross_check, names)


# ---------------------------------------------------------------------------
# The greedy search
# ---------------------------------------------------------------------------

def find_vectors(hyps: list[Hypothesis], k: int, domain: Domain, solver: str = "portfolio",
                 timeout: float = service.DEFAULT_TIMEOUT, readable: bool = True, cross_check: bool = False,
                 use_pool: bool = True, lemma=None, prior: Sequence[Vector] = (),
                 prior_single: Verdict | None = None, pairs: list[Pair] | None = None,
                 sweep: bool = True, together: bool = True) -> FindOutcome:
    """The fewest vectors this search finds that separate every separable
    pair of hypotheses, and the verdict on every pair left.

    First the candidate pool (tcsmt.search.pool) separates what it can. If it
    needed more than one vector, the solvers are asked, briefly, for one
    vector that separates every pair (it replaces the pool's when found).
    Then each round asks, briefly, for one vector for every pair still
    open; when there is none, the first open pair is asked on its own, with
    the full time: a vector (which usually separates several pairs) or a
    proof that the pair is inseparable (or no answer in time). A pair with
    no answer is proved by sweeping unless ``sweep`` is False (a caller
    with a budget of seconds: a sweep may take sweeping.MIN_TIMEOUT, 30
    minutes, where CDNA1's exact-products pair took 20 CPU-s).

    ``prior`` vectors (those of an earlier result) are replayed first and
    kept, in their order, for every pair they still separate: a rerun then
    gives the same vectors, whichever solver would have won a race, and asks
    the solvers only what they leave open. ``pairs`` (every pair by
    default) are the pairs to separate. ``prior_single`` is that result's
    answer to the one-vector-for-all question, given when it asked the same
    question: a proof that no one vector does (unsat) is proved again with
    the full time; an earlier "unknown" stays unknown rather than depend on
    timing. ``together=False`` never asks for one vector for several pairs
    (a caller that runs every vector found, and wants no fewest set, asks
    each pair the pool leaves on its own)."""
    t0 = time.monotonic()
    res = FindOutcome(hyps, k, domain)
    res.lemma = lemma
    n = len(hyps)
    pairs = list(pairs) if pairs is not None else all_pairs(n)
    remaining = list(pairs)
    p = hyps[0].params
    for vec in prior:
        if domain.contains(p.fin, p.fc, list(vec.a), list(vec.b), vec.c, p.fb):
            _take(res, vec, remaining, "earlier result")
    single_time = min(timeout, SINGLE_TIMEOUT)
    ask_single = together
    if together and res.vectors and prior_single is not None:
        ask_single, single_time = prior_single == Verdict.UNSAT, timeout
        res.single = prior_single if not ask_single else res.single
    if use_pool and remaining:
        for vec in pool.search(hyps, k, domain, remaining):
            _take(res, vec, remaining, "pool")
    asked_all = False
    if ask_single and len(res.vectors) != 1 and len(pairs) > 1:
        got = _ask(res, pairs, solver, single_time, readable)
        res.single, asked_all = got.verdict, not res.vectors
        if got.verdict == Verdict.SAT:
            res.vectors, res.found_by, remaining = [], [], list(pairs)
            _take(res, got.vectors[0], remaining, got.found_by)
    elif len(res.vectors) == 1 and not remaining:
        res.single = Verdict.SAT
    while remaining:
        if together and len(remaining) > 1 and not asked_all:
            got = _ask(res, remaining, solver, min(timeout, SINGLE_TIMEOUT), readable)
            if got.verdict == Verdict.SAT:
                _take(res, got.vectors[0], remaining, got.found_by)
                continue
        asked_all = False
        pair = remaining[0]
        one = _ask(res, [pair], solver, timeout, readable, cross_check)
        if len(pairs) == 1:
            res.single = one.verdict
        if one.verdict == Verdict.SAT:
            _take(res, one.vectors[0], remaining, one.found_by)
        elif one.verdict == Verdict.UNKNOWN and sweep and _swept(res, pair, solver, timeout, remaining):
            pass
        else:
            _settle(res, pair, one, remaining)
    _settle_followers(res)
    res.seconds = time.monotonic() - t0
    return res


def _settle(res: FindOutcome, pair: Pair, got: sep.Outcome, remaining: list[Pair]) -> None:
    """No vector for this pair: record the proof (or the lack of an answer)."""
    proved = list(dict.fromkeys(got.proved_by))      # each solver once
    reason = got.reason
    if got.verdict == Verdict.UNSAT and proved:
        reason = "; ".join(sorted({f"{r.solver}: unsat on the {r.tag} formula" for r in got.runs
                                   if sep.is_proof(r)}))
    if got.verdict == Verdict.UNSAT and not proved:
        proved = ["identical formulas"]
    verdict = PV.UNSAT if got.verdict == Verdict.UNSAT else PV.UNKNOWN
    res.pairs.append(PairVerdict(pair, verdict, proved, reason, got.full.sha256))
    remaining.remove(pair)
    if verdict == PV.UNSAT:
        _merge(res, pair, remaining)


def _swept(res: FindOutcome, pair: Pair, solver: str, timeout: float, remaining: list[Pair]) -> bool:
    """A pair the solvers did not answer, proved inseparable by sweeping
    (tcsmt.search.sweeping: lemma by lemma, each UNSAT by two solvers)."""
    proof = sweeping.prove_pair(res.hyps[pair[0]], res.hyps[pair[1]], res.k, res.domain, solver,
                                max(timeout, sweeping.MIN_TIMEOUT))
    if proof is None:
        return False
    summary = proof.summary()
    merged = (f"each of {proof.blocks} block steps into the other's" if proof.blocks
              else "one dot product into the other")
    reason = f"{summary['lemmas']} lemmas merging {merged}, each unsat by {' and '.join(proof.proved_by)}"
    res.pairs.append(PairVerdict(pair, PV.UNSAT, proof.proved_by, reason, proof.sha256, parts=summary))
    remaining.remove(pair)
    _merge(res, pair, remaining)
    return True


def _ask(res: FindOutcome, pairs, solver, timeout, readable, cross_check=False) -> sep.Outcome:
    got = ask(res.hyps, res.k, res.domain, pairs, solver, timeout, readable, cross_check,
              res.lemma)
    res.queries += 1
    res.runs += got.runs
    res.sha256.append(got.full.sha256)
    return got


def _take(res: FindOutcome, vec: Vector, remaining: list[Pair], source: str) -> None:
    """Keep a vector that separates some pair still open."""
    done = separated_by(vec, res.hyps)
    if not done & set(remaining):
        return
    res.vectors.append(vec)
    res.found_by.append(source)
    remaining[:] = [p for p in remaining if p not in done]


def _merge(res: FindOutcome, pair: Pair, remaining: list[Pair]) -> None:
    """Hypotheses i and j compute the same function on the domain: a pair
    (j, x) is separable exactly when (i, x) is, so it is not asked again."""
    i, j = pair
    for q in list(remaining):
        if j in q:
            other = q[0] if q[1] == j else q[1]
            twin = (min(i, other), max(i, other))
            if twin == pair:
                continue
            remaining.remove(q)
            res.pairs.append(PairVerdict(q, PV.FOLLOWS, [], f"as {twin}, since {pair} is inseparable",
                                         same_as=twin))


def _settle_followers(res: FindOutcome) -> None:
    """A pair set aside as following an inseparable pair takes the verdict
    of its twin: separated if a vector separates it, else the twin's."""
    done = res.separated
    by_pair = {pv.pair: pv for pv in res.pairs}
    kept = []
    for pv in res.pairs:
        if pv.verdict != PV.FOLLOWS:
            kept.append(pv)
            continue
        if pv.pair in done:
            continue
        twin = by_pair.get(pv.same_as) if pv.same_as is not None else None
        pv.verdict = twin.verdict if twin and twin.verdict != PV.FOLLOWS else PV.UNKNOWN
        pv.proved_by = list(twin.proved_by) if twin else []
        kept.append(pv)
    res.pairs = kept

