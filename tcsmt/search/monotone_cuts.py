"""Monotonicity proved stage by stage, cut at the model's own roundings.

The datapath rounds into a format's encoding in one function,
``round_fixed`` (tcsmt.datapath.rounding, marked ``@stage``); a model that
rounds every addition (normalisation = every_add) reads each rounded sum
back as an encoding of the accumulator format. Running ``datapath.dot``
through ``Cutting`` (an interpretation that hands a stage's call to its
``memo``, as every ``@stage`` function does) keeps the datapath as
written, but gives back for the n-th call of ``round_fixed`` a fresh
encoding ``cut{n}`` of that call's format. So the model is, read from its
own run, a sequence of segments: segment n computes cut n's encoding from
the inputs (a, b, c, the scales) and the earlier cuts; the last segment
computes the output. Nothing of the datapath is written here.

The argument. Order the encodings of a format by their key (-magnitude for
a sign bit set, +magnitude otherwise: ``monotonic.float_le``), a total
preorder. Give each cut a domain that holds every value it takes: its
encodings that are not NaN, or only the finite ones when a part (below)
proves that its segment, over the domains of what it reads, never gives
infinity or NaN. If every segment is monotone in each thing it reads,
each one alone, over the product of those domains, then the whole is
monotone: raise x to y one input step at a time (tcsmt.search.monotone_steps);
by induction over the segments in order, every cut's value at y is >= its
value at x, since a segment's arguments can be raised one at a time, each
intermediate point lying in the product of domains. And "monotone in one
argument" is again proved one step at a time: the input steps of
monotone_steps, and for a cut the steps of c's kind over its domain
(``monotone_steps.value_step``, which over the non-NaN encodings also
walks past the largest finite value to infinity).

The parts: per cut, its domain (one formula or two, unsat by two
solvers); per segment and per thing it reads, per step, one formula
asking for a step that lowers the segment's value, unsat by two solvers.
A step that leaves the segment's term unchanged (the same node of the
hash-consed graph: the segment does not read what moved) needs no
solver. A sat part proves nothing about the whole (the cut values it
chose may be unreachable) unless its inputs, replayed on the concrete
model, are a counterexample, which is then the answer.

Case splits. A step part whose segment ends in the sum of two terms (an
IEEE addition of a model that rounds every addition) can be split by the
exponent gap of those two terms at the inputs before the step
(``gap_cases``: gaps of ``reach`` or more either way, and each gap
between, which partition the integers); the step holds when every case is
unsat (``case_parts``). Each case fixes the alignment shift, where the
whole part leaves the solver every shift at once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from tcsmt import datapath
from tcsmt.datapath import bv, register, rounding
from tcsmt.enums import Verdict
from tcsmt.errors import BadOption, WitnessError
from tcsmt.model.formats import Format
from tcsmt.model.params import ModelParams
from tcsmt.search import monotone_steps as ms
from tcsmt.search import separation as sep
from tcsmt.search.domain import Domain
from tcsmt.search.monotonic import float_le, float_lt, in_domain
from tcsmt.search.vectors import Vector
from tcsmt.smt import abstraction, service
from tcsmt.smt.smtlib import build_formula
from tcsmt.smt.terms import SmtInterp

METHOD = "cut at the model's roundings"
GAPS = 27
"""A step left unknown is split by the exponent gap of its two terms: each
gap below 27 either way, and two cases beyond (past them the smaller term
of an FP32 addition lies below its sticky bit)."""
PART_TIMEOUT = 300.0
TOTAL_PARTS = 60
"""``tcsmt find monotonicity`` gives each part at least PART_TIMEOUT
seconds and the whole proof TOTAL_PARTS times its timeout."""
ROUND = rounding.round_fixed.__wrapped__
SUM = register.block_sum.__wrapped__
FINITE, NOT_NAN = "finite", "not NaN"


@dataclass(frozen=True)
class Cut:
    """A rounding: its format and the segment's term (the encoding it computes)."""
    fmt: Format
    term: object
    shift: object = None       # the exponent gap of the two terms its segment adds last, if two


class Cutting:
    """An interpretation that runs the datapath as written (every operation
    is the wrapped interpretation's) and hands back, for the n-th call of
    round_fixed, the variable ``cut{n}`` of its format, or when n is
    ``moved`` that variable after ``move``."""

    def __init__(self, I, moved: int | None = None, move: str = "") -> None:
        self._I, self.memo, self.moved, self.move = I, self, moved, move
        self.cuts: list[Cut] = []
        self.cond: list = []
        self._sum: list = []       # the terms of the last block_sum since the last cut

    def __getattr__(self, name: str):
        return getattr(self._I, name)

    def call(self, fn, params, I, args, kw):
        out = fn(I, *args, **kw)
        if fn is SUM:
            self._sum = list(kw["terms"] if "terms" in kw else args[1])
        if fn is not ROUND:
            return out
        fmt = kw["fmt"] if "fmt" in kw else args[1]
        n = len(self.cuts)
        terms, self._sum = self._sum, []
        shift = self._I.sub(terms[0].exp, terms[1].exp) if len(terms) == 2 else None
        self.cuts.append(Cut(fmt, out, shift))
        v = self._I.var(cut_name(n), fmt.bits)
        if n != self.moved:
            return v
        up, cond = ms.value_step(self._I, fmt, v, "c-" + self.move)
        self.cond += cond + [float_le(self._I, fmt, v, up)]   # no wrap past the largest
        return up


def cut_name(n: int) -> str:
    return f"cut{n}"


CUT_MOVES = ("up", "zero")


@dataclass
class Part:
    what: str                  # "domain cut{n}" or "segment {j} step {move}"
    verdict: str               # unsat, unread (no solver needed), sat, unknown
    proved_by: list[str] = field(default_factory=list)
    cpu: dict[str, float] = field(default_factory=dict)   # CPU seconds of answering runs
    seconds: dict[str, float] = field(default_factory=dict)   # wall seconds of every run
    values: dict[str, int] = field(default_factory=dict, repr=False)   # a sat part's model
    sha256: str = ""           # of the formula's SMT-LIB text
    answered_by: str = ""      # the solver whose answer a part that is not unsat has

    def doc(self) -> dict:
        return {"part": self.what, "verdict": self.verdict, "proved_by": self.proved_by,
                "cpu_seconds": {s: round(t, 2) for s, t in self.cpu.items()},
                "seconds": {s: round(t, 2) for s, t in self.seconds.items()}}


@dataclass
class Proof:
    verdict: Verdict
    parts: list[Part]
    cuts: list[str]            # each cut's format and domain
    vectors: list[Vector] = field(default_factory=list)

    def cpu_seconds(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for part in self.parts:
            for s, t in part.cpu.items():
                out[s] = round(out.get(s, 0.0) + t, 2)
        return out


def cuts_of(p: ModelParams, k: int) -> list[Cut]:
    """The model's roundings at k, in the order it runs them."""
    I = Cutting(SmtInterp())
    a, b, c = sep.declare_inputs(I, p, k)
    sa, sb = sep.declare_scales(I, p, k)
    datapath.dot(I, p, a, b, c, sa=sa, sb=sb)
    return I.cuts


def moves(k: int, segment: int) -> list[str]:
    """What segment ``segment`` may read, as steps: the input steps, then
    each earlier cut's."""
    return ms.moves(k) + [f"{cut_name(n)}-{m}" for n in range(segment) for m in CUT_MOVES]


def _run(I, p: ModelParams, k: int, domains: list[str], move: str | None):
    """The inputs in the domain, the earlier cuts in theirs, one datapath
    run at the inputs (after ``move`` when given): (constraints, Cutting,
    the output)."""
    a, b, c = sep.declare_inputs(I, p, k)
    sa, sb = sep.declare_scales(I, p, k)
    out = in_domain(I, p, a, b, c) + sep.scale_constraints(I, p, Domain(), sa, sb)
    moved, how = None, ""
    if move is not None and move.startswith("cut"):
        name, how = move.split("-")
        moved = int(name[3:])
    elif move is not None:
        c0 = c
        a, b, c, cond = ms.step(I, p, a, b, c, move)
        out += cond + in_domain(I, p, a, b, c) + [float_le(I, p.fc, c0, c)]
    C = Cutting(I, moved, how)
    d = datapath.dot(C, p, a, b, c, sa=sa, sb=sb)
    for n, cut in enumerate(C.cuts[:len(domains)]):
        v = I.var(cut_name(n), cut.fmt.bits)
        out += _in(I, cut.fmt, v, domains[n])
        if n == moved:
            out += C.cond + _in(I, cut.fmt, ms.value_step(I, cut.fmt, v, "c-" + how)[0], domains[n])
    return out, C, d


def _in(I, fmt: Format, x, domain: str) -> list:
    t = datapath.unpack(I, fmt, x, 16, False)
    return [I.not_(t.nan)] + ([I.not_(t.inf)] if domain == FINITE else [])


def _value(p: ModelParams, C: Cutting, d, segment: int) -> Cut:
    if segment < len(C.cuts):
        return C.cuts[segment]
    return Cut(p.fout, d)


def domain_formula(p: ModelParams, k: int, domains: list[str], n: int, want: str):
    """Cut n's segment, over the earlier cuts' ``domains``, gives a value
    outside ``want``."""
    def build(I):
        out, C, d = _run(I, p, k, domains[:n], None)
        cut = _value(p, C, d, n)
        return out + [I.not_(I.and_(*_in(I, cut.fmt, cut.term, want)))]
    return build_formula(build, description=f"tcsmt monotonicity {p.name} k={k}: "
                         f"{cut_name(n)} not {want}")


def step_formula(p: ModelParams, k: int, domains: list[str], segment: int,
                 move: str, case: tuple[int | None, int | None] | None = None):
    """Segment ``segment``'s value lowered by ``move``; None when the step
    leaves the segment's value unchanged (it does not read what moved).
    ``case`` (lo, hi): only inputs before the step whose segment adds two
    terms with an exponent gap in [lo, hi] (None: no bound on that side)."""
    same = []

    def build(I):
        out, C, d = _run(I, p, k, domains[:segment], None)
        out2, C2, d2 = _run(I, p, k, domains[:segment], move)
        cut, after = _value(p, C, d, segment), _value(p, C2, d2, segment).term
        same.append(after == cut.term)
        return out + out2 + _case(I, p, cut, case) + [float_lt(I, cut.fmt, after, cut.term)]
    what = (f"tcsmt monotonicity {p.name} k={k}: segment {segment}, step {move}"
            + ("" if case is None else f", {case_name(case)}"))
    if move.startswith("cut"):
        f = build_formula(build, description=what)
    else:       # an input step: its products free, with what the step does to them
        f, _ = abstraction.free_products(build, what, abstraction.SteppedProducts())
    return None if same[0] else f


def _case(I, p: ModelParams, cut: Cut, case) -> list:
    if case is None:
        return []
    if cut.shift is None:
        raise BadOption("a case split needs a segment that adds two terms")
    ew = datapath.exp_width(p)
    lo, hi = case
    return ([] if lo is None else [I.sle(bv.sconst(I, lo, ew), cut.shift)]) + \
        ([] if hi is None else [I.sle(cut.shift, bv.sconst(I, hi, ew))])


def case_name(case: tuple[int | None, int | None]) -> str:
    lo, hi = case
    if lo is None:
        return f"gap <= {hi}"
    if hi is None:
        return f"gap >= {lo}"
    return f"gap = {lo}" if lo == hi else f"gap in [{lo}, {hi}]"


def gap_cases(reach: int) -> list[tuple[int | None, int | None]]:
    """A partition of the integers: gaps of ``reach`` or more either way
    (beyond them the smaller term lands below every bit the register keeps)
    and every gap between, one case each."""
    return [(None, -reach)] + [(g, g) for g in range(1 - reach, reach)] + [(reach, None)]


def applies(p: ModelParams, k: int) -> bool:
    """Every addition rounded (the cuts are the model's own roundings into
    a format with -0), no scale windows or sparsity."""
    return (p.normalisation == "every_add" and p.scale_window_bits is None and p.sparsity == "dense"
            and not any(f.is_integer or f.specials == "fnuz" for f in (p.fin, p.fb, p.fc, p.fout)))


def part_names(p: ModelParams, k: int, said: dict[str, str] | None = None) -> list[str]:
    """Every part's name, in order, without asking a solver: the domains
    and the gap splits are the ones a proof's file ``said`` (part name to
    verdict) has, since which a proof needs depends on its solvers'
    answers; the step parts are the segments' and the moves' the current
    code builds."""
    said = said or {}
    cuts = cuts_of(p, k)
    out: list[str] = []
    for n in range(len(cuts)):
        finite = f"domain {cut_name(n)}: {FINITE}"
        out.append(finite if finite in said else f"domain {cut_name(n)}: {NOT_NAN}")
    for j in range(len(cuts) + 1):
        for move in moves(k, j):
            what = f"segment {j}, step {move}"
            if any(name.startswith(what + ", gap") for name in said):
                out += [f"{what}, {case_name(case)}" for case in gap_cases(GAPS)]
            else:
                out.append(what)
    return out


def prove(p: ModelParams, k: int,
          solvers: tuple[str, str] = ("bitwuzla", "cvc5"), budget: float = 120.0,
          log=None, gaps: int | None = None, at_once: bool = False,
          total: float | None = None, progress=None) -> Proof:
    """Every part, each by both solvers in turn (one process at a time;
    side by side with ``at_once``).
    Ends at the first part not proved: unknown, or sat with a replayed
    witness when the part's inputs are a counterexample of the model.
    With ``gaps``, a step part left unknown whose segment adds two terms is
    split by their exponent gap (``gap_cases(gaps)``, ``case_parts``): the
    cases stand in the proof for the part (the unknown whole is kept only
    when a case is not proved). Unknown once ``total`` seconds have passed;
    ``progress(name, done, total)`` hears of each segment's step done."""
    start = time.monotonic()
    cuts = cuts_of(p, k)
    if any(c.fmt.specials == "fnuz" for c in cuts) or p.fc.specials == "fnuz":
        raise BadOption(f"{p.name}: monotonicity by parts needs formats with -0 (no fnuz)")
    parts: list[Part] = []
    domains: list[str] = []
    for n in range(len(cuts)):
        for want in (FINITE, NOT_NAN):
            part = ask(domain_formula(p, k, domains, n, want),
                       f"domain {cut_name(n)}: {want}", solvers, budget, log, at_once)
            if part.verdict == "unsat":
                parts.append(part)
                domains.append(want)
                break
            if want == NOT_NAN:
                parts.append(part)
        else:
            return Proof(Verdict.UNKNOWN, parts, _say(cuts, domains))
    steps = [(j, move) for j in range(len(cuts) + 1) for move in moves(k, j)]
    for done, (j, move) in enumerate(steps):
        if progress is not None:
            progress(f"segment {j}, step {move}", done, len(steps))
        if total is not None and time.monotonic() - start > total:
            return Proof(Verdict.UNKNOWN, parts, _say(cuts, domains))
        part, vectors = step_part(p, k, domains, j, move, solvers, budget, log, at_once)
        if part.verdict == "unknown" and gaps is not None and j < len(cuts) \
                and cuts[j].shift is not None:
            tried = [part]
            cases, vectors = case_parts(p, k, domains, j, move, gap_cases(gaps), solvers,
                                        budget, log, at_once)
            parts += cases
            if all(c.verdict == "unsat" for c in cases):
                continue
            verdict = Verdict.SAT if vectors else Verdict.UNKNOWN
            return Proof(verdict, parts + tried, _say(cuts, domains), vectors)
        parts.append(part)
        if part.verdict not in ("unsat", "unread"):
            verdict = Verdict.SAT if vectors else Verdict.UNKNOWN
            return Proof(verdict, parts, _say(cuts, domains), vectors)
    if progress is not None:
        progress("", len(steps), len(steps))
    return Proof(Verdict.UNSAT, parts, _say(cuts, domains))


def case_parts(p: ModelParams, k: int, domains: list[str], segment: int, move: str,
               cases: list[tuple[int | None, int | None]],
               solvers: tuple[str, ...] = ("bitwuzla", "cvc5"), budget: float = 120.0,
               log=None, at_once: bool = False) -> tuple[list[Part], list[Vector]]:
    """A step part split by the exponent gap of the two terms its segment
    adds (at the inputs before the step): one part per case, asked in turn
    until one is not unsat. When ``cases`` partition the integers (as
    ``gap_cases`` do) the step is proved when every case is unsat. Returns
    the parts and [x, y] when a case is sat and its inputs, replayed on the
    concrete model, are a counterexample."""
    out: list[Part] = []
    for case in cases:
        what = f"segment {segment}, step {move}, {case_name(case)}"
        f = step_formula(p, k, domains, segment, move, case)
        part = Part(what, "unread") if f is None else ask(f, what, solvers, budget, log, at_once)
        out.append(part)
        if part.verdict not in ("unsat", "unread"):
            sat = part.verdict == "sat" and not move.startswith("cut")
            return out, _replay(p, k, move, part) if sat else []
    return out, []


def step_part(p: ModelParams, k: int, domains: list[str], segment: int,
              move: str, solvers: tuple[str, ...] = ("bitwuzla", "cvc5"), budget: float = 120.0,
              log=None, at_once: bool = False) -> tuple[Part, list[Vector]]:
    """One step part: (the part, [x, y] when it is sat and its inputs,
    replayed on the concrete model, are a counterexample)."""
    what = f"segment {segment}, step {move}"
    f = step_formula(p, k, domains, segment, move)
    part = Part(what, "unread") if f is None else ask(f, what, solvers, budget, log, at_once)
    sat = part.verdict == "sat" and not move.startswith("cut")
    return part, _replay(p, k, move, part) if sat else []


def counterexample(whole: sep.Outcome, proof: Proof, seconds: float) -> sep.Outcome:
    """The outcome of a proof in parts that ended at a sat step part whose
    inputs, replayed on the concrete model, are a counterexample
    (``proof.vectors``, x and y): sat with that pair, the part's solver run
    added to the whole formula's runs (``whole``), so the result names who
    found it. A proof without a replayed pair is no counterexample."""
    if proof.verdict != Verdict.SAT or len(proof.vectors) != 2:
        raise ValueError("a counterexample needs a sat proof with a replayed pair")
    part = next(x for x in reversed(proof.parts) if x.verdict == "sat")
    run = service.Run(part.answered_by, service.Status.SAT, seconds=part.seconds.get(part.answered_by, 0.0),
                      tag=part.what)
    return sep.Outcome(Verdict.SAT, whole.full, whole.runs + [run], list(proof.vectors), part.what,
                       notes=whole.notes + [f"{METHOD}: part {part.what!r} is sat, and its inputs "
                                            f"replay on the model as x and y"],
                       seconds=seconds)


def _say(cuts: list[Cut], domains: list[str]) -> list[str]:
    return [f"{cut_name(n)}: {c.fmt.name}, "
            f"{domains[n] if n < len(domains) else '?'}" for n, c in enumerate(cuts)]


def ask(f, what: str, solvers: tuple[str, ...], budget: float, log, at_once: bool = False) -> Part:
    """A part: the formula asked of each solver in turn (or, ``at_once``,
    of all of them side by side, a process each), unsat only when every
    one answers unsat; otherwise the first other answer (a sat one first)
    is the part's."""
    part = Part(what, "unsat", sha256=f.sha256)

    def runs():
        if at_once:
            done = service.race([service.Job(f, s, what, budget) for s in solvers], budget + 30.0,
                                unsat_votes=len(solvers), parallel=len(solvers))
            # a sat answer first (it stopped the others), else the solvers' order
            yield from sorted(done, key=lambda r: (r.status != service.Status.SAT, solvers.index(r.solver)))
        else:
            for s in solvers:
                yield service.race([service.Job(f, s, what, budget)], budget + 30.0, parallel=1)[0]
    for run in runs():
        part.seconds[run.solver] = run.seconds
        if run.status in (service.Status.SAT, service.Status.UNSAT):
            part.cpu[run.solver] = run.cpu     # a run stopped at its budget reports none
        if log:
            log(f"{what}: {run.solver} {run.status} {run.cpu:.1f} CPU-s, {run.seconds:.1f} s")
        if run.status != service.Status.UNSAT:
            part.verdict = str(run.status)
            part.values = run.values
            part.answered_by = run.solver
            return part
        part.proved_by.append(run.solver)
    return part


def _replay(p: ModelParams, k: int, move: str, part: Part) -> list[Vector]:
    try:
        return ms.witness(p, k, move, part.values)
    except WitnessError:
        return []
