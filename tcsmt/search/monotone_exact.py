"""Monotonicity, in parts, of a model whose block sum is exact
(align_rounding = "exact": the terms summed exactly, then one rounding).

The argument, for x <= y in the domain (tcsmt.search.monotonic: a, b
non-negative and finite, c finite, x <= y elementwise):

  register  d = round(S, flags): the model's output is the final rounding
            of the terms' exact sum S (``wide_sum.wide_total``, units
            of 2^low) with the sum's flags, for every input (the lemmas of
            tcsmt.search.exact_register, an induction over the terms the
            register takes);
  flags     inputs in the domain give no NaN and no infinite term;
  term c    c_x <= c_y, both finite: c's term value at x <= at y;
  term a    0 <= a <= a', 0 <= b, all finite: the product term's value
            at (a, b) <= at (a', b) (every product term is this one
            function of its a_i and b_i);
  term b    0 <= a, 0 <= b <= b', all finite: at (a, b) <= at (a, b');
            so (a, b) <= (a', b) <= (a', b'), any two pairs in order;
            both with free multipliers that keep u v <= u' v for u <= u'
            (tcsmt.smt.abstraction.SteppedProducts), which every real
            product obeys;
            (every term's value is at most 2^B: the register's norm lemmas)
  sum       for j < n terms: X <= Y, |X|, |Y| <= j 2^B, t <= t',
            |t|, |t'| <= 2^B give X + t <= Y + t' and both sums at most
            (j + 1) 2^B in magnitude (no wrap in the wide register);
  round     S <= S', |S|, |S'| <= n 2^B, no NaN or infinity, any zero
            flags: round(S) <= round(S') in the order of float_le.

By induction over the terms (sum, with term c, term a and term b), S(x) <= S(y);
round then gives d(x) <= d(y), so no x <= y has d(x) > d(y). Each part is
a formula to be unsat, answered by two solvers in turn; a part not proved
leaves the whole unknown (a sat part is no counterexample of the model).
find and regen ask every part, then, when one is not proved, the whole
formula's search; when that has no answer either, the result file keeps
every part's verdict, so it says which lemmas stand and which do not.

At CDNA1's size (four fp16 products, an fp32 c: a wide sum of 370 bits)
the register's norm, swap, order, start, glue and value lemmas and the
flags, term c, term a, term b, sum and round parts are answered in 0 to
24 CPU-s each by bitwuzla (term a and term b 0.4 s each; one part that
moved both factors, two 11-bit multipliers compared, had no answer in 300
CPU-s); the register's step lemmas (none -> none first) and its final
lemma are not, in 60 to 300 CPU-s by bitwuzla or 150 by boolector: they
shift words of the wide sum's width by free exponents. The final lemma is
proved in cases (``_final``: one per phase and value of the exponent that
places the result, each case a few CPU-s); the steps in er.FREE_STEPS
with the shifts free and instances of the generic shift facts (LONG_PARTS:
up to a few minutes each); the steps that end with D dominating (none,
split or done -> done) stay open: they need linear reasoning on wide
words that neither solver does in minutes.
"""

from __future__ import annotations

from tcsmt import datapath
from tcsmt.datapath import bv
from tcsmt.enums import Verdict
from tcsmt.errors import BadOption
from tcsmt.model.params import ModelParams
from tcsmt.search import exact_register as er
from tcsmt.search import wide_sum as ws
from tcsmt.search.monotone_cuts import Part, Proof, ask
from tcsmt.search.monotonic import float_le, in_domain
from tcsmt.smt import abstraction
from tcsmt.smt.smtlib import build_formula

METHOD = "exact sum"


def applies(p: ModelParams, k: int) -> bool:
    """The model sums its k products and c exactly in one block."""
    return (p.align_rounding == "exact" and k <= p.block_size and p.scale_format is None
            and not p.fin.is_integer and not p.fc.is_integer)


def _le(I, x, y):
    return I.not_(I.slt(y, x))


def _value(I, s: er.Setting, t):
    return ws.term_value(I, t, s.low, s.width, s.ew)


def part_flags(s: er.Setting):
    """No input of the domain gives a NaN or an infinite term."""
    def build(I):
        a, b, c, terms = er.inputs(I, s)
        nan, inf = ws.sum_flags(I, terms)[:2]
        return in_domain(I, s.p, a, b, c) + [I.or_(nan, inf)]
    return build_formula(build, description="exact sum monotone: flags")


def part_c(s: er.Setting):
    p = s.p

    def build(I):
        cx, cy = I.var("cx", p.fc.bits), I.var("cy", p.fc.bits)
        tx, ty = (datapath.unpack(I, p.fc, c, s.ew, False) for c in (cx, cy))
        ok = _le(I, _value(I, s, tx), _value(I, s, ty))
        dom = [I.not_(I.or_(t.nan, t.inf)) for t in (tx, ty)]
        return dom + [float_le(I, p.fc, cx, cy), I.not_(ok)]
    return build_formula(build, description="exact sum monotone: term c")


def part_factor(s: er.Setting, which: str, hook: abstraction.FreeProducts | None = None):
    """A product term grows with one factor, the other shared: term(a, b)
    <= term(a2, b) for a <= a2 ("term a"), or term(a, b) <= term(a, b2)
    for b <= b2 ("term b"), all non-negative and finite. The multipliers
    are free words bound by what every real product obeys (``hook``;
    SteppedProducts by default, whose facts include that u <= u2 gives
    u v <= u2 v for a shared factor v), so an UNSAT answer is a proof for
    the real multipliers."""
    p = s.p

    def build(I):
        fa, fb = p.fin, p.fb
        a, b = I.var("a", fa.bits), I.var("b", fb.bits)
        a2 = I.var("a2", fa.bits) if which == "a" else a
        b2 = I.var("b2", fb.bits) if which == "b" else b
        xs, ys = (a, b), (a2, b2)
        tx, ty = ([datapath.unpack(I, f, v, s.ew, False) for f, v in zip((fa, fb), vs)] for vs in (xs, ys))
        px, py = datapath.multiply(I, *tx, p, s.ew), datapath.multiply(I, *ty, p, s.ew)
        ok = _le(I, _value(I, s, px), _value(I, s, py))
        dom = [I.not_(I.or_(t.nan, t.inf)) for t in tx + ty] + [I.not_(bv.msb(I, v)) for v in xs + ys]
        moved = float_le(I, fa, a, a2) if which == "a" else float_le(I, fb, b, b2)
        return dom + [moved, I.not_(ok)]
    f, _ = abstraction.free_products(build, f"exact sum monotone: term {which}",
                                     hook if hook is not None else abstraction.SteppedProducts())
    return f


def part_sum(s: er.Setting):
    def build(I):
        X, Y, t, t2 = (I.var(n, s.width) for n in ("X", "Y", "t", "t2"))
        j = I.var("j", er.COUNT)
        one, before = er.times(I, s, 1), er.times(I, s, j)
        after = er.times(I, s, I.add(j, I.const(1, er.COUNT)))
        hyp = [I.ult(j, I.const(s.n, er.COUNT)), _le(I, X, Y), _le(I, t, t2),
               ws.abs_le(I, X, before), ws.abs_le(I, Y, before), ws.abs_le(I, t, one),
               ws.abs_le(I, t2, one)]
        S, S2 = I.add(X, t), I.add(Y, t2)
        ok = I.and_(_le(I, S, S2), ws.abs_le(I, S, after), ws.abs_le(I, S2, after))
        return hyp + [I.not_(ok)]
    return build_formula(build, description="exact sum monotone: sum")


def part_round(s: er.Setting):
    p = s.p

    def build(I):
        S, S2 = I.var("S", s.width), I.var("S2", s.width)
        fx, fy = ([I.var(f"{n}{side}", 0) for n in ("neg_zeros", "pos_zeros")] for side in "xy")
        false = I.bool_const(False)
        rx = er.round_sum(I, s, ws.fixed_of(I, S, s.low, s.ew, [false, false, false, *fx]))
        ry = er.round_sum(I, s, ws.fixed_of(I, S2, s.low, s.ew, [false, false, false, *fy]))
        lim = er.times(I, s, s.n)
        return [_le(I, S, S2), ws.abs_le(I, S, lim), ws.abs_le(I, S2, lim),
                I.not_(float_le(I, p.fout, rx, ry))]
    return build_formula(build, description="exact sum monotone: round")


MONOTONE = ("flags", "term c", f"term a [{abstraction.SteppedProducts.label}]",
            f"term b [{abstraction.SteppedProducts.label}]", "sum", "round")


LONG_PARTS = {f"exact register: shift fact, {n}" for n in ("le", "ge", "sum")} | \
    {f"exact register: step, {a} -> {b}" for a, b in er.FREE_STEPS}
"""Parts that take a solver more than a minute at CDNA1's size (le and ge
about 65 CPU-s, none -> split about 100 to 160)."""

LONG_BUDGET = 400.0
"""CPU seconds each solver gets on a long part at least."""

WHOLE_TRY = 60.0
"""CPU seconds the register's final lemma is asked whole before its cases."""


def _final_names(p: ModelParams | None, k: int, said: dict | None) -> list[str]:
    """The final lemma's part: whole, or, where the file's verdicts
    ``said`` have its cases (``er.final_cases``), the cases, then the
    whole lemma when the file keeps it (a case not proved)."""
    if p is None or not said or not any(n.startswith(er.FINAL + ", ") for n in said):
        return [er.FINAL]
    cases = [f"exact register: {er.final_case_name(c)}" for c in er.final_cases(er.spec(p, k))]
    return cases + ([er.FINAL] if er.FINAL in said else [])


def part_names(p: ModelParams | None = None, k: int = 0, said: dict | None = None) -> list[str]:
    """Every part's description, in order, without building the formulas:
    the same for every model and k, but for the final lemma's cases, named
    where the file's verdicts ``said`` have them (whether a proof needs
    them depends on its solvers' answers)."""
    names = [m for n in er.lemma_names() for m in (_final_names(p, k, said) if n == er.FINAL else [n])]
    return names + [f"exact sum monotone: {n}" for n in MONOTONE]


def parts(p: ModelParams, k: int) -> list:
    """Every part's formula, each to be unsat: the register's lemmas, then
    the monotone ones."""
    s = er.spec(p, k)
    if s.n >= 1 << er.COUNT or s.width <= er.bound(s) + er.COUNT + 1:
        raise BadOption(f"{p.name}: k = {k} is too large for the exact sum's parts")
    return er.model_lemmas(s) + [part_flags(s), part_c(s), part_factor(s, "a"), part_factor(s, "b"),
                                 part_sum(s), part_round(s)]


def prove(p: ModelParams, k: int, solvers: tuple[str, str] = ("bitwuzla", "boolector"),
          budget: float = 600.0, log=None, every_part: bool = False) -> Proof:
    """Every part, each by both solvers side by side (``budget`` CPU
    seconds each, LONG_BUDGET at least on LONG_PARTS); ends at the first
    part not proved (unknown), or with ``every_part`` asks the rest too,
    so the proof says which parts stand and which do not."""
    if not applies(p, k):
        raise BadOption(f"{p.name}: monotonicity by the exact sum needs align_rounding = exact, "
                        f"one block and no scales")
    done: list[Part] = []
    for f in parts(p, k):
        long = f.description in LONG_PARTS
        got = _final(er.spec(p, k), f, solvers, budget, log) if f.description == er.FINAL else \
            [ask(f, f.description, solvers, max(budget, LONG_BUDGET) if long else budget, log, at_once=True)]
        done += got
        if any(part.verdict != "unsat" for part in got) and not every_part:
            return Proof(Verdict.UNKNOWN, done, [])
    verdict = Verdict.UNSAT if all(x.verdict == "unsat" for x in done) else Verdict.UNKNOWN
    return Proof(verdict, done, [])


def _final(s: er.Setting, f, solvers: tuple[str, str], budget: float, log) -> list[Part]:
    """The register's final lemma (``f``): whole, in at most WHOLE_TRY
    seconds a solver; unproved, its cases (``er.final_cases``), each by
    both solvers side by side. The cases stand for the lemma when every
    one is proved; after the first that is not, the rest are not asked
    (unknown) and the whole lemma's part is kept, last."""
    whole = ask(f, f.description, solvers, min(budget, WHOLE_TRY), log)
    if whole.verdict == "unsat":
        return [whole]
    out: list[Part] = []
    for case in er.final_cases(s):
        name = f"exact register: {er.final_case_name(case)}"
        if out and out[-1].verdict != "unsat":
            out.append(Part(name, "unknown"))
        else:
            out.append(ask(er.lemma_final(s, case), name, solvers, budget, log, at_once=True))
    return out if all(x.verdict == "unsat" for x in out) else out + [whole]
