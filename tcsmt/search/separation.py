"""The one question every search asks: inputs on which hypotheses give
different bits, or a proof that none exist.

``separation_formula`` runs ``datapath.dot`` with the SMT interpretation
once per hypothesis on the same free inputs a0..a{K-1}, b0..b{K-1}, c and
asserts that the outputs of some pair differ (``every=False``: diff, equiv,
prove's witness) or of every pair in a set (``every=True``: find's "one
vector for all these pairs"). It also declares the outputs d0, d1, ... so a
witness checks the solver's outputs against the concrete model's. Models
with the same parameters build the very same terms (hash-consing), so their
formula folds to ``(assert false)``.

Restricted formulations race beside the full one: "support-m" keeps m
products free and fixes the others to +0, "bits-b" lets every input have
at most b significant bits. A witness of a restriction is a witness of the
full question; only the full formula (or an over-approximation of it, or a
property's lemma) can prove that there is none.

``settle`` turns the runs of a race into one ``Outcome``, the type every
search returns: a verdict, the replayed witness vectors, every solver run,
which formula answered and which solvers proved it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tcsmt import datapath
from tcsmt.datapath import bv, sparse
from tcsmt.enums import Status, Verdict
from tcsmt.errors import FormatMismatch, WitnessError
from tcsmt.interp.ints import INT, IntWord
from tcsmt.model.params import ModelParams
from tcsmt.search.domain import Domain
from tcsmt.search.vectors import Hypothesis, Pair, Vector, all_pairs, outputs
from tcsmt.smt import abstraction, service
from tcsmt.smt.service import Job, Run
from tcsmt.smt.smtlib import Formula, build_formula

FULL = "full"
ABSTRACT = abstraction.TAG
LEMMA = "lemma"
PROOF_TAGS = (FULL, ABSTRACT, LEMMA)
"""Formulas whose UNSAT is a proof: the full question, its free-products
over-approximation, and a property's lemma."""
NO_WITNESS_TAGS = (ABSTRACT, LEMMA)
"""Formulas whose SAT answer is no witness (they over-approximate)."""
RESTRICTION_BUDGET = 0.8
"""CPU seconds a solver may spend on a restricted formula before it gives
up: restrictions find readable witnesses quickly or not at all, and the full
formula must always get its turn (benchmarks/bench_diff.py)."""


# ---------------------------------------------------------------------------
# Formulas
# ---------------------------------------------------------------------------

def support_positions(k: int, m: int) -> tuple[int, ...]:
    """m product positions spread over 0..k-1, the last one always included."""
    if m >= k:
        return tuple(range(k))
    if m == 1:
        return (k - 1,)
    return tuple(sorted({round(i * (k - 1) / (m - 1)) for i in range(m)}))


def declare_inputs(I, p: ModelParams, k: int, support: tuple[int, ...] | None = None):
    """Free inputs a{i}, b{i} (for i in support; +0 elsewhere) and c."""
    fin, fc = p.fin, p.fc
    free = set(range(k)) if support is None else set(support)
    a = [I.var(f"a{i}", fin.bits) if i in free else I.const(0, fin.bits) for i in range(k)]
    b = [I.var(f"b{i}", p.fb.bits) if i in free else I.const(0, p.fb.bits) for i in range(k)]
    return a, b, I.var("c", fc.bits)


def inputs_in_domain(I, p: ModelParams, k: int, domain: Domain):
    """Every free input of a dot product of ``p`` at k (a, b, c, the scales
    and the sparsity mask, as the separation formulas declare them) and the
    domain's constraints on them: ((a, b, c, sa, sb, mask), constraints)."""
    a, b, c = declare_inputs(I, p, k)
    sa, sb = declare_scales(I, p, k)
    mask = declare_mask(I, p, k)
    out = domain.constraints(I, p.fin, p.fc, a, b, c, p.fb)
    out += scale_constraints(I, p, domain, sa, sb) + mask_constraints(I, p, mask)
    return (a, b, c, sa, sb, mask), out


def declare_scales(I, p: ModelParams, k: int):
    """Free scales sa{j}, sb{j} of a and b for a block-scaled model (one
    per scale_block products), else (None, None): the scales are inputs
    like a, b and c, so a witness names the scales it needs."""
    if p.scale_format is None:
        return None, None
    n, w = p.scale_count(k), p.scaling()[0].bits
    return [I.var(f"sa{j}", w) for j in range(n)], [I.var(f"sb{j}", w) for j in range(n)]


def scale_constraints(I, p: ModelParams, domain: Domain, sa, sb) -> list:
    """A finite domain also keeps the scales finite (no NaN scale)."""
    if sa is None or not domain.finite:
        return []
    fs = p.scaling()[0]
    return [I.not_(datapath.unpack(I, fs, x, 16, False).nan) for x in sa + sb]


def declare_mask(I, p: ModelParams, k: int):
    """Free mask bits m{i} of a sparse model (one per product), else None:
    the mask is an input like a, b and c, so a witness names the selection
    it needs."""
    if p.sparsity == "dense":
        return None
    return [I.var(f"m{i}", 1) for i in range(k)]


def mask_constraints(I, p: ModelParams, mask) -> list:
    """Only masks the instruction's metadata can spell (two of every four)."""
    return [] if mask is None else sparse.legal(I, p, mask)


def check_same_scales(hyps: list[Hypothesis]) -> None:
    """Hypotheses share the free scales and the mask: the same scale format
    and block, the same sparsity."""
    p = hyps[0].params
    for h in hyps[1:]:
        q = h.params
        if q.sparsity != p.sparsity:
            raise FormatMismatch(f"{p.name} and {q.name} differ in sparsity ({p.sparsity} and "
                                 f"{q.sparsity}): only models with the same selection can be compared")
        if (q.scale_format, q.scale_block) != (p.scale_format, p.scale_block):
            raise FormatMismatch(f"{p.name} and {q.name} scale differently ({p.scale_format} per "
                            f"{p.scale_block} and {q.scale_format} per {q.scale_block}): "
                            "only models with the same scales can be compared")


def few_bits(I, fmt, x, bits: int):
    """The value x of fmt has at most ``bits`` significant bits (or is a
    subnormal/zero with the same fraction mask)."""
    drop = fmt.frac_bits - (bits - 1)
    if drop <= 0:
        return I.bool_const(True)
    return bv.is_zero(I, I.extract(x, drop - 1, 0))


def _differ(I, dots, pairs: list[Pair], every: bool):
    differs = [I.not_(I.eq(dots[i], dots[j])) for i, j in pairs]
    return differs if every else [I.or_(*differs)]


def equal_inputs(I, p: ModelParams, k: int):
    """Every product a0*b0 (one multiplier: large sums are easy to reach);
    a1.. and b1.. only name the copies, so a witness decodes like any other."""
    a0, b0 = I.var("a0", p.fin.bits), I.var("b0", p.fb.bits)
    names = [I.eq(I.var(f"{n}{i}", I.width(x)), x) for i in range(1, k) for n, x in (("a", a0), ("b", b0))]
    return [a0] * k, [b0] * k, I.var("c", p.fc.bits), names


def separation_formula(hyps: list[Hypothesis], k: int, domain: Domain,
                       pairs: list[Pair] | None = None, every: bool = False,
                       support: tuple[int, ...] | None = None, sig_bits: int | None = None,
                       tag: str = FULL, equal: bool = False) -> Formula:
    """Inputs of the domain on which some pair (``every``: every pair) of
    ``pairs`` has different outputs; d{j} holds hypothesis j's output.
    Restrictions: ``support`` (the other products +0), ``sig_bits`` (few
    significant bits), ``equal`` (every product the same a0*b0)."""
    p = hyps[0].params
    check_same_scales(hyps)
    pairs = pairs or all_pairs(len(hyps))

    def build(I):
        if equal:
            a, b, c, out = equal_inputs(I, p, k)
        else:
            (a, b, c), out = declare_inputs(I, p, k, support), []
        sa, sb = declare_scales(I, p, k)
        mask = declare_mask(I, p, k)
        out += domain.constraints(I, p.fin, p.fc, a, b, c, p.fb)
        out += scale_constraints(I, p, domain, sa, sb) + mask_constraints(I, p, mask)
        if sig_bits is not None:
            out += [few_bits(I, p.fin, x, sig_bits) for x in a + b]
            out.append(few_bits(I, p.fc, c, sig_bits + 1))
        dots = [datapath.dot(I, h.params, a, b, c, sa=sa, sb=sb, mask=mask) for h in hyps]
        out += [I.eq(I.var(f"d{j}", I.width(d)), d) for j, d in enumerate(dots)]
        return out + _differ(I, dots, pairs, every)     # identical terms fold to false

    names = " ".join(hyps[i].id for i in sorted({x for pr in pairs for x in pr}))
    return build_formula(build, description=f"tcsmt: separate {names} ({tag}, k={k}, "
                                            f"{'every' if every else 'some'} pair; "
                                            f"domain {domain.describe()})")


def free_products_formula(hyps: list[Hypothesis], k: int, domain: Domain,
                          pairs: list[Pair] | None = None, every: bool = False) -> Formula:
    """The same question with every product a free word (an over-approximation:
    its UNSAT is a proof, its SAT is no witness)."""
    p = hyps[0].params
    pairs = pairs or all_pairs(len(hyps))

    def build(I):
        (a, b, c, sa, sb, mask), out = inputs_in_domain(I, p, k, domain)
        dots = [datapath.dot(I, h.params, a, b, c, sa=sa, sb=sb, mask=mask) for h in hyps]
        return out + _differ(I, dots, pairs, every)

    f, _ = abstraction.free_products(build, description=f"tcsmt: separate {len(pairs)} pair(s), "
                                                         f"k={k}, domain {domain.describe()}")
    return f


READABLE = ((1, 2), (2, 2), (2, 4), (3, 4))
"""(non-zero products, significant bits) of the readable restrictions."""


def formulations(hyps: list[Hypothesis], k: int, domain: Domain, pairs: list[Pair] | None = None,
                 every: bool = False, readable: bool = False,
                 restrictions: bool = True) -> list[tuple[str, Formula]]:
    """Restricted formulas first (they only find inputs), the full one last.
    ``readable`` adds restrictions to few significant bits. The restrictions
    are left out for a proof (``restrictions=False``) and when the full
    formula folds to false."""
    full = separation_formula(hyps, k, domain, pairs, every)
    if full.trivially_unsat or not restrictions:
        return [(FULL, full)]
    forms = []
    if readable:
        for m, bits in READABLE:
            if m < k:
                tag = f"support-{m}/bits-{bits}"
                forms.append((tag, separation_formula(hyps, k, domain, pairs, every,
                                                      support_positions(k, m), bits, tag)))
    for m in (1, 2):
        if m < k:
            tag = f"support-{m}"
            forms.append((tag, separation_formula(hyps, k, domain, pairs, every,
                                                  support_positions(k, m), None, tag)))
    return forms + [(FULL, full)]


def default_jobs(forms: list[tuple[str, Formula]], names: list[str],
                 budget: float = RESTRICTION_BUDGET) -> list[Job]:
    """Every solver on the first formula, then on the next; restrictions
    with a CPU budget, the full formula without."""
    return [Job(f, s, tag, None if tag == FULL else budget) for tag, f in forms for s in names]


# ---------------------------------------------------------------------------
# Witnesses
# ---------------------------------------------------------------------------

def decode(values: dict[str, int], k: int, p: ModelParams | None = None) -> Vector:
    """Input bit patterns from a satisfying assignment (absent inputs are +0;
    absent scales of a block-scaled model ``p`` are 1; a sparse model's
    mask bits, absent, 0)."""
    sa: tuple[int, ...] = ()
    sb: tuple[int, ...] = ()
    mask: tuple[int, ...] = ()
    if p is not None and p.sparsity != "dense":
        mask = tuple(values.get(f"m{i}", 0) for i in range(k))
    fs = p.fscale if p is not None else None
    if p is not None and fs is not None:
        one = fs.bias << fs.frac_bits       # the encoding of 1
        n = p.scale_count(k)
        sa = tuple(values.get(f"sa{j}", one) for j in range(n))
        sb = tuple(values.get(f"sb{j}", one) for j in range(n))
    return Vector(tuple(values.get(f"a{i}", 0) for i in range(k)),
                  tuple(values.get(f"b{i}", 0) for i in range(k)), values.get("c", 0), sa, sb, mask)


def replayed_witness(values: dict[str, int], hyps: list[Hypothesis], k: int, domain: Domain,
                     pairs: list[Pair] | None = None, every: bool = False) -> Vector:
    """The witness, after checking on the concrete model that it lies in the
    domain, that each output equals the solver's, and that some pair
    (``every``: every pair) of ``pairs`` differs."""
    p = hyps[0].params
    vec = decode(values, k, p)
    if not domain.contains(p.fin, p.fc, list(vec.a), list(vec.b), vec.c, p.fb) or \
            not all(x.b for x in scale_constraints(INT, p, domain, _words(vec.sa, p), _words(vec.sb, p))) \
            or not all(x.b for x in mask_constraints(INT, p, _bits(vec.mask))):
        raise WitnessError(f"the solver's witness {vec} is outside the domain {domain.describe()}")
    outs = outputs(vec, hyps)
    for j, h in enumerate(hyps):
        if f"d{j}" in values and values[f"d{j}"] != outs[h.id]:
            raise WitnessError(f"witness {vec}: the solver says {h.id} gives {values[f'd{j}']:#x}, "
                               f"the concrete model gives {outs[h.id]:#x}")
    pairs = pairs or all_pairs(len(hyps))
    split = [outs[hyps[i].id] != outs[hyps[j].id] for i, j in pairs]
    if not (all(split) if every else any(split)):
        what = "leaves some of the pairs" if every else "separates none of the pairs"
        raise WitnessError(f"witness {vec} {what} {pairs} on the concrete model")
    return vec


def _words(xs: tuple[int, ...], p: ModelParams):
    return [IntWord(x, p.scaling()[0].bits) for x in xs] if xs else None


def _bits(xs: tuple[int, ...]):
    return [IntWord(x, 1) for x in xs] if xs else None


# ---------------------------------------------------------------------------
# Outcomes
# ---------------------------------------------------------------------------

@dataclass
class Outcome:
    """What a search found: the verdict, the replayed witness vectors (one
    for a separation; x and y for monotonicity), every solver run, and the
    formulas: ``full`` is the whole question (what --emit-smt2 writes),
    ``answered`` the one whose answer is reported (tag ``tag``)."""
    verdict: Verdict
    full: Formula
    runs: list[Run] = field(default_factory=list)
    vectors: list[Vector] = field(default_factory=list)
    tag: str = ""
    answered: Formula | None = None
    reason: str = ""
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    source: str = ""          # a witness found without a solver: where ("pool")

    @property
    def vector(self) -> Vector | None:
        return self.vectors[0] if self.vectors else None

    @property
    def winner(self) -> Run | None:
        """The run whose answer is reported."""
        want = Status.SAT if self.verdict == Verdict.SAT else Status.UNSAT
        return next((r for r in self.runs if r.status == want and r.tag == self.tag), None)

    @property
    def proved_by(self) -> list[str]:
        if self.verdict != Verdict.UNSAT:
            return []
        return [r.solver for r in self.runs if r.status == Status.UNSAT and r.tag in PROOF_TAGS]

    @property
    def found_by(self) -> str:
        """"solver (formula)" of a witness (or its ``source``), else ""."""
        if self.source and self.verdict == Verdict.SAT:
            return self.source
        w = self.winner
        return f"{w.solver} ({w.tag})" if w is not None and self.verdict == Verdict.SAT else ""


def is_witness(run: Run) -> bool:
    return run.status == Status.SAT and run.tag not in NO_WITNESS_TAGS


def is_proof(run: Run) -> bool:
    return run.status == Status.UNSAT and run.tag in PROOF_TAGS


def ends_race(run: Run) -> bool:
    """A witness on a real formula, or a proof, ends the race."""
    return is_witness(run) or is_proof(run)


def check_agreement(runs: list[Run]) -> None:
    """A witness (on any formulation: each restricts the full question)
    beside a proof: one solver is wrong."""
    sat = [r for r in runs if is_witness(r)]
    unsat = [r for r in runs if is_proof(r)]
    if sat and unsat:
        raise WitnessError("solvers disagree: " + ", ".join(
            f"{r.solver} {r.status} ({r.tag})" for r in sat + unsat))


def settle(runs: list[Run], forms: list[tuple[str, Formula]],
           replay: Callable[[Run], list[Vector]]) -> Outcome:
    """The outcome of a race: the first witness, replayed by ``replay``
    (which raises WitnessError when it does not hold); else a proof; else
    unknown with the full formula's reasons."""
    check_agreement(runs)
    by_tag = dict(forms)
    full = by_tag[FULL]
    sat = [r for r in runs if is_witness(r)]
    if sat:
        return Outcome(Verdict.SAT, full, runs, replay(sat[0]), sat[0].tag, by_tag.get(sat[0].tag))
    proof = next((r for r in runs if is_proof(r)), None)
    if proof is not None:
        return Outcome(Verdict.UNSAT, full, runs, [], proof.tag, by_tag.get(proof.tag, full))
    reasons = sorted({f"{r.solver}: {r.reason}" for r in runs if r.tag == FULL and r.reason})
    return Outcome(Verdict.UNKNOWN, full, runs, reason="; ".join(reasons) or "no answer")


def race(jobs: list[Job], forms: list[tuple[str, Formula]], timeout: float,
         replay: Callable[[Run], list[Vector]], cross_check: bool = False,
         names: list[str] | None = None, parallel: int | None = None) -> Outcome:
    """Run the jobs until a witness or a proof; settle; with ``cross_check``,
    have a second solver prove an UNSAT answer (on the formula that was
    proved) before it is reported."""
    t0 = time.monotonic()
    votes = {tag: 2 if cross_check and len(set(names or [])) > 1 else 1 for tag in PROOF_TAGS}
    runs = service.race(jobs, timeout, stop=ends_race, unsat_votes=votes, parallel=parallel)
    out = settle(runs, forms, replay)
    if out.verdict == Verdict.UNSAT and cross_check and len(set(out.proved_by)) < 2:
        left = timeout - (time.monotonic() - t0)
        assert out.answered is not None         # settle names the formula an unsat answer proved
        out.runs += service.confirm_unsat(out.answered, out.proved_by, left, out.tag)
        check_agreement(out.runs)
        if len(set(out.proved_by)) < 2:
            out.notes.append("cross-check: no second solver proved it within the time limit")
    out.seconds = time.monotonic() - t0
    return out


def separation_replay(hyps: list[Hypothesis], k: int, domain: Domain,
                      pairs: list[Pair] | None = None, every: bool = False):
    """The replay of a separation witness (for ``settle``)."""
    return lambda run: [replayed_witness(run.values, hyps, k, domain, pairs, every)]
