"""Finding the fewest input vectors that tell a property's hypotheses apart.

``find_vectors`` asks the solvers, through the shared diff machinery
(tcsmt.search.diff), for inputs on which hypotheses give different bits:

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
from dataclasses import dataclass, field

from tcsmt import datapath
from tcsmt.datapath import bv
from tcsmt.model.params import ModelParams
from tcsmt.search import diff, pool
from tcsmt.search.domain import Domain
from tcsmt.search.shrink import shrink
from tcsmt.search.vectors import Hypothesis, Vector, outputs
from tcsmt.smt import abstraction, service
from tcsmt.smt.service import Job, Run
from tcsmt.smt.smtlib import Formula, build_formula

Pair = tuple[int, int]
RESTRICTION_BUDGET = 0.8      # CPU seconds per solver on a restricted formula
SINGLE_TIMEOUT = 6.0          # seconds to look for one vector for several pairs (an economy, not a proof)


@dataclass
class PairVerdict:
    """What is known about a pair no vector of the result separates."""
    pair: Pair
    verdict: str                 # "unsat" (proved inseparable) or "unknown"
    proved_by: list[str] = field(default_factory=list)
    reason: str = ""
    smt2_sha256: str = ""
    same_as: Pair | None = None  # inseparable because a proved pair makes it so


@dataclass
class FindOutcome:
    hyps: list[Hypothesis]
    k: int
    domain: Domain
    vectors: list[Vector] = field(default_factory=list)
    pairs: list[PairVerdict] = field(default_factory=list)
    single: str = "unknown"      # one vector for every pair: sat, unsat, unknown
    found_by: list[str] = field(default_factory=list)   # per vector: "pool" or the solver
    runs: list[Run] = field(default_factory=list)
    queries: int = 0
    seconds: float = 0.0
    sha256: list[str] = field(default_factory=list)
    lemma: object = None         # the property's lemma (see ask), if any

    @property
    def separated(self) -> set[Pair]:
        ids = [h.id for h in self.hyps]
        out: set[Pair] = set()
        for v in self.vectors:
            outs = outputs(v, self.hyps)
            out |= {(i, j) for i in range(len(ids)) for j in range(i + 1, len(ids))
                    if outs[ids[i]] != outs[ids[j]]}
        return out


# ---------------------------------------------------------------------------
# Formulas
# ---------------------------------------------------------------------------

def few_bits(I, fmt, x, bits: int):
    """The value x of fmt has at most ``bits`` significant bits (or is a
    subnormal/zero with the same fraction mask)."""
    drop = fmt.frac_bits - (bits - 1)
    if drop <= 0:
        return I.bool_const(True)
    low = I.extract(x, drop - 1, 0)
    return bv.is_zero(I, low)


def separation_formula(hyps: list[Hypothesis], k: int, domain: Domain, pairs: list[Pair],
                       support: tuple[int, ...] | None = None, sig_bits: int | None = None,
                       tag: str = "full") -> Formula:
    """Inputs of the domain on which every pair in ``pairs`` has different
    outputs (d{j} holds hypothesis j's output)."""
    p = hyps[0].params

    def build(I):
        a, b, c = diff.declare_inputs(I, p, k, support)
        out = domain.constraints(I, p.fin, p.fc, a, b, c)
        if sig_bits is not None:
            out += [few_bits(I, p.fin, x, sig_bits) for x in a + b]
            out.append(few_bits(I, p.fc, c, sig_bits + 1))
        dots = [datapath.dot(I, h.params, a, b, c) for h in hyps]
        out += [I.eq(I.var(f"d{j}", I.width(d)), d) for j, d in enumerate(dots)]
        return out + [I.not_(I.eq(dots[i], dots[j])) for i, j in pairs]

    names = " ".join(hyps[i].id for i in sorted({x for pr in pairs for x in pr}))
    return build_formula(build, description=f"tcsmt find: separate {names} ({tag}, k={k}, "
                                            f"domain {domain.describe()})")


def formulations(hyps, k, domain, pairs, readable: bool) -> list[tuple[str, Formula]]:
    """Restricted formulas first (they only find vectors), the full one last."""
    forms = []
    if readable:
        for m, bits in ((1, 2), (2, 2), (2, 4), (3, 4)):
            if m < k:
                forms.append((f"support-{m}/bits-{bits}",
                              separation_formula(hyps, k, domain, pairs, diff.support_positions(k, m),
                                                 bits, f"support-{m}/bits-{bits}")))
    for m in (1, 2):
        if m < k:
            forms.append((f"support-{m}", separation_formula(
                hyps, k, domain, pairs, diff.support_positions(k, m), None, f"support-{m}")))
    forms.append((diff.FULL, separation_formula(hyps, k, domain, pairs)))
    return forms


def job_order(forms: list[tuple[str, Formula]], names: list[str],
              abstract: Formula | None = None) -> list[Job]:
    """Jobs in the order they start (a few run at once). First the first
    solver on the full formula and on the free-products formula (the quick
    proofs), and a second solver (Z3 where installed) on the formula with
    two non-zero products, where witnesses are usually found fastest; then
    the other solvers on the full formula; then the restricted formulas
    (readable witnesses, short budgets). Witnesses are shrunk on the
    concrete model afterwards (tcsmt.search.shrink), so the restrictions are not
    needed for readability first."""
    full = forms[-1]
    by_tag = dict(forms[:-1])
    make = lambda tag, f, s: Job(f, s, tag, None if tag == diff.FULL else RESTRICTION_BUDGET)  # noqa: E731
    order = [make(*full, names[0])]
    if abstract is not None:
        order.append(Job(abstract, names[0], abstraction.TAG))
    others = names[1:]
    second = "z3" if "z3" in others else (others[0] if others else names[0])
    if "support-2" in by_tag:
        order.append(make("support-2", by_tag["support-2"], second))
    order += [make(*full, s) for s in others]
    started = {(j.tag, j.solver) for j in order}
    order += [make(t, f, s) for s in names for t, f in forms[:-1] if (t, s) not in started]
    return order


# ---------------------------------------------------------------------------
# One question: a vector separating every pair in a set
# ---------------------------------------------------------------------------

@dataclass
class Asked:
    verdict: str
    vector: Vector | None
    runs: list[Run]
    full: Formula
    reason: str = ""

    @property
    def solver(self) -> str:
        sat = [r for r in self.runs if r.status == "sat" and r.tag not in NO_WITNESS_TAGS]
        return f"{sat[0].solver} ({sat[0].tag})" if sat else ""


LEMMA_TAG = "lemma"
PROOF_TAGS = (diff.FULL, abstraction.TAG, LEMMA_TAG)
NO_WITNESS_TAGS = (abstraction.TAG, LEMMA_TAG)     # their SAT answers are no witnesses


def ask(hyps, k, domain, pairs: list[Pair], solver: str, timeout: float, readable: bool,
        cross_check: bool = False, lemma=None) -> Asked:
    """One vector separating every pair in ``pairs``, or a proof there is
    none. Proofs come from the full formula, from the same question with
    free products (an over-approximation: its UNSAT is a proof, its SAT is
    ignored), or, for one pair, from the property's lemma (a formula whose
    UNSAT implies the pair agrees everywhere; its SAT is ignored too)."""
    forms = formulations(hyps, k, domain, pairs, readable)
    full = forms[-1][1]
    if full.trivially_unsat:
        return Asked("unsat", None, [], full, "the hypotheses build the same formula")
    names, _ = service.choose_solvers(solver)
    abstract = free_products_formula(hyps, k, domain, pairs)
    jobs = job_order(forms, names, abstract)
    if lemma is not None and len(pairs) == 1:
        extra = lemma(hyps[pairs[0][0]], hyps[pairs[0][1]], k, domain)
        if extra is not None:
            jobs.insert(1, Job(extra, names[0], LEMMA_TAG))
    votes = {tag: 2 if cross_check and len(names) > 1 else 1 for tag in PROOF_TAGS}
    runs = service.race(jobs, timeout, stop=_ends, unsat_votes=votes)
    _check_agreement(runs)
    sat = [r for r in runs if r.status == "sat" and r.tag not in NO_WITNESS_TAGS]
    if sat:
        vec = diff.replayed_witness(sat[0].values, hyps, k, domain, pairs)
        if readable:
            vec = shrink(vec, hyps, pairs, domain)
        missed = [pr for pr in pairs if pr not in separated_by(vec, hyps)]
        if missed:
            raise diff.WitnessError(f"witness {vec} leaves pairs {missed} unseparated on the "
                                    f"concrete model although the formula asked for them")
        return Asked("sat", vec, runs, full)
    proved = _provers(runs)
    if proved:
        if cross_check and len(proved) < 2:
            runs += service.confirm_unsat(full, proved, timeout, diff.FULL)
            _check_agreement(runs)
        return Asked("unsat", None, runs, full)
    reasons = sorted({f"{r.solver}: {r.reason}" for r in runs if r.tag == diff.FULL and r.reason})
    return Asked("unknown", None, runs, full, "; ".join(reasons) or "no answer")


def _ends(run: Run) -> bool:
    """A witness on a real formula, or a proof, ends the race."""
    if run.status == "sat":
        return run.tag not in NO_WITNESS_TAGS
    return run.status == "unsat" and run.tag in PROOF_TAGS


def _provers(runs: list[Run]) -> list[str]:
    return [r.solver for r in runs if r.status == "unsat" and r.tag in PROOF_TAGS]


def _check_agreement(runs: list[Run]) -> None:
    """A witness on a real formula beside a proof: one solver is wrong."""
    sat = [r for r in runs if r.status == "sat" and r.tag not in NO_WITNESS_TAGS]
    unsat = [r for r in runs if r.status == "unsat" and r.tag in PROOF_TAGS]
    if sat and unsat:
        raise diff.WitnessError("solvers disagree: " + ", ".join(
            f"{r.solver} {r.status} ({r.tag})" for r in sat + unsat))


def free_products_formula(hyps, k, domain, pairs) -> Formula:
    p = hyps[0].params

    def build(I):
        a, b, c = diff.declare_inputs(I, p, k)
        out = domain.constraints(I, p.fin, p.fc, a, b, c)
        dots = [datapath.dot(I, h.params, a, b, c) for h in hyps]
        return out + [I.not_(I.eq(dots[i], dots[j])) for i, j in pairs]

    f, _ = abstraction.free_products(build, description=f"tcsmt find: separate {len(pairs)} pair(s), "
                                                         f"k={k}, domain {domain.describe()}")
    return f


# ---------------------------------------------------------------------------
# The greedy search
# ---------------------------------------------------------------------------

def separated_by(vec: Vector, hyps: list[Hypothesis]) -> set[Pair]:
    outs = outputs(vec, hyps)
    n = len(hyps)
    return {(i, j) for i in range(n) for j in range(i + 1, n) if outs[hyps[i].id] != outs[hyps[j].id]}


def find_vectors(hyps: list[Hypothesis], k: int, domain: Domain, solver: str = "portfolio",
                 timeout: float = 60.0, readable: bool = True, cross_check: bool = False,
                 use_pool: bool = True, lemma=None) -> FindOutcome:
    """The fewest vectors this search finds that separate every separable
    pair of hypotheses, and the verdict on every pair left.

    First the candidate pool (tcsmt.search.pool) separates what it can. If it
    needed more than one vector, the solvers are asked, briefly, for one
    vector that separates every pair (it replaces the pool's when found).
    Then each round asks, briefly, for one vector for every pair still
    open; when there is none, the first open pair is asked on its own, with
    the full time: a vector (which usually separates several pairs) or a
    proof that the pair is inseparable (or no answer in time)."""
    t0 = time.monotonic()
    res = FindOutcome(hyps, k, domain)
    res.lemma = lemma
    n = len(hyps)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    remaining = list(pairs)
    if use_pool:
        for vec in pool.search(hyps, k, domain, pairs):
            _take(res, vec, remaining, "pool")
    asked_all = False
    if len(res.vectors) != 1 and n > 2:
        got = _ask(res, pairs, solver, min(timeout, SINGLE_TIMEOUT), readable)
        res.single, asked_all = got.verdict, not res.vectors
        if got.verdict == "sat":
            res.vectors, res.found_by, remaining = [], [], list(pairs)
            _take(res, got.vector, remaining, got.solver)
    elif res.vectors and not remaining:
        res.single = "sat"
    while remaining:
        if len(remaining) > 1 and not asked_all:
            got = _ask(res, remaining, solver, min(timeout, SINGLE_TIMEOUT), readable)
            if got.verdict == "sat":
                _take(res, got.vector, remaining, got.solver)
                continue
        asked_all = False
        pair = remaining[0]
        one = _ask(res, [pair], solver, timeout, readable, cross_check)
        if n == 2:
            res.single = one.verdict
        if one.verdict == "sat":
            _take(res, one.vector, remaining, one.solver)
        else:
            _settle(res, pair, one, remaining)
    _settle_followers(res)
    res.seconds = time.monotonic() - t0
    return res


def _settle(res: FindOutcome, pair: Pair, got: Asked, remaining: list[Pair]) -> None:
    """No vector for this pair: record the proof (or the lack of an answer)."""
    proved = _provers(got.runs)
    reason = got.reason or ("the hypotheses build the same formula" if got.verdict == "unsat"
                            and not proved else "")
    if got.verdict == "unsat" and proved:
        reason = "; ".join(sorted({f"{r.solver}: unsat on the {r.tag} formula" for r in got.runs
                                   if r.status == "unsat" and r.tag in PROOF_TAGS}))
    if got.verdict == "unsat" and not proved:
        proved = ["identical formulas"]
    res.pairs.append(PairVerdict(pair, got.verdict, proved, reason, got.full.sha256))
    remaining.remove(pair)
    if got.verdict == "unsat":
        _merge(res, pair, remaining)


def _ask(res: FindOutcome, pairs, solver, timeout, readable, cross_check=False) -> Asked:
    got = ask(res.hyps, res.k, res.domain, pairs, solver, timeout, readable, cross_check,
              res.lemma)
    res.queries += 1
    res.runs += got.runs
    res.sha256.append(got.full.sha256)
    return got


def _take(res: FindOutcome, vec: Vector, remaining: list[Pair], source: str) -> None:
    res.vectors.append(vec)
    res.found_by.append(source)
    done = separated_by(vec, res.hyps)
    remaining[:] = [p for p in remaining if p not in done]


def _merge(res: FindOutcome, pair: Pair, remaining: list[Pair]) -> None:
    """Hypotheses i and j compute the same function on the domain: a pair
    (j, x) is separable exactly when (i, x) is, so it is not asked again."""
    i, j = pair
    for q in list(remaining):
        if j in q:
            other = q[0] if q[1] == j else q[1]
            twin = tuple(sorted((i, other)))
            if twin == pair:
                continue
            remaining.remove(q)
            res.pairs.append(PairVerdict(q, "follows", [], f"as {twin}, since {pair} is inseparable",
                                         same_as=twin))


def _settle_followers(res: FindOutcome) -> None:
    """A pair set aside as following an inseparable pair takes the verdict
    of its twin: separated if a vector separates it, else the twin's."""
    done = res.separated
    by_pair = {pv.pair: pv for pv in res.pairs}
    kept = []
    for pv in res.pairs:
        if pv.verdict != "follows":
            kept.append(pv)
            continue
        if pv.pair in done:
            continue
        twin = by_pair.get(pv.same_as)
        pv.verdict = twin.verdict if twin and twin.verdict != "follows" else "unknown"
        pv.proved_by = list(twin.proved_by) if twin else []
        kept.append(pv)
    res.pairs = kept


def base_params(hyps: list[Hypothesis]) -> ModelParams:
    return hyps[0].params
