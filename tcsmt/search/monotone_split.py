"""Monotonicity of a one-block register, proved one step at a time, each
step split by how its alignment points move and cut at the block's sum.

tcsmt.search.monotone_steps reduces monotonicity to steps: one input moved
to its next encoding (a_i, b_i, c, and c's zero), f(step(z)) >= f(z) for
every z in the domain. The whole step formula is still too hard where the
terms are truncated at an alignment point that the step may move (rdna4,
the block-scaled Blackwell units: no answer in 300 s), so each step is cut
in two at the block's sum and split by the alignment points.

A model applies when its dot product at k is one block of the block
register: block normalisation, c placed globally or late, k <= block_size,
no scale windows or sparsity, an alignment that is not exact,
floating-point formats. Such a block aligns its terms at alignment points
(tcsmt.datapath.register.block_sum: one for each pair of products with
pair_sums, one for the block; with c late, one for the products and one
for their sum and c) and adds them into one signed register word,
the block's sum T, in units of 2^(E - rl) for its alignment point E (rl is
fixed by the terms' shapes: the same at x and at y); the rest of the
datapath rounds it.

For a step from x to y, the formula runs the datapath as written on both
through ``Splitting``, an interpretation that is handed every call of
block_sum (the ``@stage`` mechanism) and:
  - gives each alignment point of y whose word differs from x's (the calls
    in order: both runs take one path) a case, a relation of
    d = E_y - E_x: "same" (y's call then aligns at x's very word, so the
    two runs share their shifts), "+1", "-1", "up" (d >= 2) or "down"
    (d <= -2). The five partition the integers. The cases are a tree
    (``case_lists``): a list of cases that leaves a later point differing
    without one is split five ways there, so the leaves cover every step;
  - names the block's sum (the dot's last block_sum, which only the
    rounding reads) at x and at y, or puts free words in their place.

Two parts per step and case, each to be UNSAT:
  sum   the case holds and T_y 2^d < T_x: the block's sum lost value;
  rest  the case holds, the sums are free words with T_y 2^d >= T_x, and
        f(y) < f(x): the rest of the datapath (the rounding, a zero's sign,
        the flags, which read the real terms) lowered the output though
        the sum did not.
When both are UNSAT, every real step in that case has T_y 2^d >= T_x (sum),
so its real sums are among those the rest part allows, and f(y) >= f(x).

A leaf whose last point moves up two places or more ("up": the moved
input's term came alive or grew past a power of two, and every other term
is cut at a last place 2^d times coarser) has a sum part that is hard as a
whole (nvfp4's a63: no answer in 300 s). Where that part gets no answer in
DIRECT_TRY seconds, parts stand for it (``sum_parts``), in units of y's
last place, with s = min(d, rw) and x >> s the arithmetic shift (rounded
toward minus infinity) of x's words:
  term i       the aligned term at x and at y, X_i and Y_i, lie within L,
               and (X_i >> s) - Y_i <= e_i: e_i = 0 for a term that did
               not move (the same node in both runs), -n for the moved one
               (it gains n units of the new last place: the bound in
               docs/case-studies.md); a term kept to 2^g units of the
               register (fewer bits than the register keeps) may lose
               2^g - 1, and the moved one gains that much more;
  link j       with S, S' the sums of terms 0..j-1 at x and y: bounds (the
               sums stay within (j + 1) L and do not wrap), floor ((S + X)
               >> s <= (S >> s) + (X >> s) + 1) and budget (the two gaps
               within c_(j-1) and e_j give c_j = c_(j-1) + e_j + 1);
  gaps         C <= A + B + 1 gives C - (P + Q) <= (A - P) + (B - Q) + 1,
               in two parts (monotone: C - (P + Q) <= A + B + 1 - (P + Q);
               identity: that is (A - P) + (B - Q) + 1);
  order        (T >> s) - T' <= c_(n-1) = -1 gives T' 2^d >= T.
The terms are read from the formula as it is built (the trace of its last
block_sum), and the raw sum is checked, node for node, to be those terms
added in order. By induction over the additions (term 0, then link j,
gaps and term j for each j), every real step in the case has
(T_x >> s) - T_y <= c_(n-1), so T_y 2^d >= T_x (order): the sum part has
no solution. The term parts read the datapath; the others are words alone
(0 to 2 s each for Bitwuzla on nvfp4). A leaf whose last point is the
same at x and y gets the same parts with s = 0 and no unit lost per
addition (every e_i and c_j 0): nvfp4's c step at the same point, whose
sum part Boolector does not answer in 300 CPU-s whole (c is the first term
of every addition), takes 0.0 to 0.7 s a part.

A leaf where an earlier call's point moves up two places or more (CDNA3's
products' sum, then the sum with c) is cut at that call j instead
(``stage_of``) where its sum part gets no answer whole in DIRECT_TRY:
"sum, call j" denies ``stage_statement``: y's sum at call j exceeds x's
by more than m units of y's last place (m = ``stage_margin``, the most
the later sum loses at that point), proved whole or in call j's Chain's
parts with the moved term's gain raised by m (the Chain's last budget is
the statement, so it has no order part); "sum, past call j" makes call
j's sums free words that far apart and denies the last call's order,
whole or in the last call's Chain's parts. Both are to be UNSAT, for any
m; a fault in call j's sum is the first stage's to find (a late-c model
with F = 3: "sum, call 0" SAT, "sum, past call 0" UNSAT). CDNA3's a7 and
b7 with the products' point up (the product comes alive above the
others; no answer from Bitwuzla in 530 s whole): 31 parts at call 0 of
0.0 to 1.0 s each, and the sum with c past it in 4.5 to 31 s, or in 8
parts where its point moves up too.

The products are free (tcsmt.smt.abstraction.SteppedProducts: facts every
real product obeys, with what a step of one factor does to it), so an UNSAT
is a proof for the real multipliers too. A SAT part proves nothing (its
products or sums may be unreachable) and leaves the whole unknown.

Symmetry (a model with exact groups of products, ``symmetries``): a
group's products are summed exactly, so permuting them leaves f unchanged;
and the register adds its terms exactly, so permuting the groups (each with
its scales) does too. Each permutation is a part, so a step of any a_i or
b_i becomes one of a_{k-1} or b_{k-1}: pi takes product i to k - 1 and
f(step_i z) = f(pi step_i z) = f(step_{k-1} pi z), with pi z in the domain.
Three kinds of part, each swapping two neighbours:
  - products i and i + 1 of the last group: f(pi z) != f(z) for z in the
    domain, to be UNSAT (the real multipliers);
  - terms j and j + 1 of the register (the groups): the rest of the
    datapath from the block_sum on, given free terms (every field free)
    and the same terms with those two swapped, gives different bits: to be
    UNSAT. Then the rest is the same for every order of the groups;
  - scale blocks s and s + 1 (products and scales), or groups j and j + 1
    of the last scale block: no solver is needed ("unread") when the
    permuted inputs give the register the very terms (the same nodes) of
    the unpermuted ones in another order, which is checked as the formula
    is built (a check that fails leaves the part unknown). With the
    register's symmetry, f(pi z) = f(z).
Walking a product's scale block to the last, then its group, then its
place, takes it to k - 1. Products that are not grouped (group_size 1, no
pairs, one sum of the products) are walked to k - 1 by neighbour swaps of
the first kind alone, each the whole datapath on z and pi z (CDNA3 at
k = 8: 7 parts, 16 to 27 s each for Bitwuzla). Only a_{k-1}'s, b_{k-1}'s
and c's steps are then split into cases: for the FP4 units at k = 64, 20
or 21 symmetry parts and 4 steps instead of 130. The last product is the one to step: its group is
the last term the register adds, and its product the last the group adds,
so the two runs share every partial sum before it (the sum part of
product 0's step, whose runs differ in the first operand of 16 and then 5
additions, has no answer in 120 s from Bitwuzla or Boolector; product
63's takes 2 and 39 s).
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, fields, replace

from tcsmt import datapath
from tcsmt.datapath import bv, register
from tcsmt.enums import Verdict
from tcsmt.errors import BadOption
from tcsmt.model.params import ModelParams
from tcsmt.search import monotone_steps as ms
from tcsmt.search import separation as sep
from tcsmt.search.domain import Domain
from tcsmt.search.monotone_cuts import Part, Proof, ask
from tcsmt.search.monotonic import constraints, in_domain
from tcsmt.search.wide_sum import abs_le
from tcsmt.smt import abstraction
from tcsmt.smt.smtlib import build_formula
from tcsmt.smt.terms import SmtInterp

METHOD = "steps split at the alignment points"
CASES = ("same", "+1", "-1", "up", "down")
LEMMAS = ("sum", "rest")
TOTAL_PARTS = 60
"""``tcsmt find monotonicity`` gives the whole proof this many times its
timeout, and each part at least PART_TIMEOUT seconds (a few parts, where
both points move two places or more, take Bitwuzla about a minute)."""
PART_TIMEOUT = 300.0
SUM = register.block_sum.__wrapped__
_SIGNATURE = inspect.signature(SUM)


def applies(p: ModelParams, k: int) -> bool:
    """The dot product at k is one block of the block register."""
    return (p.normalisation == "block" and p.c_placement in ("global", "late") and k <= p.block_size
            and p.scale_window_bits is None and p.sparsity == "dense" and p.align_rounding != "exact"
            and not any(f.is_integer for f in (p.fin, p.fb, p.fc, p.fout))
            and p.fc.specials != "fnuz")


class _OnSum:
    """An interpretation that runs the datapath as written (every operation
    is the wrapped one's) and hands every call of block_sum, its arguments
    bound, to ``on_sum``."""

    def __init__(self, I) -> None:
        self._I, self.memo = I, self

    def __getattr__(self, name: str):
        return getattr(self._I, name)

    def call(self, fn, params, I, args, kw):
        if fn is not SUM:
            return fn(I, *args, **kw)
        bound = _SIGNATURE.bind(I, *args, **kw)
        bound.apply_defaults()
        return self.on_sum(fn, I, bound)

    def on_sum(self, fn, I, bound):
        raise NotImplementedError


class Splitting(_OnSum):
    """An interpretation that runs the datapath as written (every operation
    is the wrapped one's) and is handed every block_sum. In the "x" run it
    records each call's alignment point and sum; in the "y" run it pairs
    call j with x's call j, applies the case of each point that differs
    (``cases``, in the order of the differing points) and records the
    conditions; the sum of call ``cut`` (when given) is a free word T_x or
    T_y."""

    def __init__(self, I, cases: tuple[str, ...] = (), cut: int | None = None) -> None:
        super().__init__(I)
        self.cases, self.cut = cases, cut
        self.run = "x"     # or "y": the run under way
        self.points: dict[str, list] = {"x": [], "y": []}
        self.sums: dict[str, list] = {"x": [], "y": []}
        self.terms: dict[str, list] = {"x": [], "y": []}     # each call's terms
        self.traces: dict[str, list] = {"x": [], "y": []}    # and its trace (aligned terms, raw sum)
        self.keeps: dict[str, list] = {"x": [], "y": []}     # each call's (rl, the terms' kept bits)
        self.differing: list[int] = []     # the calls whose points differ
        self.short = False                 # a point differed beyond ``cases``
        self.cond: list = []

    def on_sum(self, fn, I, bound):
        a = bound.arguments
        e = a["point"] if a["point"] is not None else \
            register.alignment_point(I, a["terms"], a["ew"], a["floor"])
        j = len(self.points[self.run])
        if self.run == "y":
            ex = self.points["x"][j]
            if e.id != ex.id:
                n = len(self.differing)
                self.differing.append(j)
                if n < len(self.cases):
                    self.cond += relation(self._I, self.cases[n], e, ex)
                    if self.cases[n] == "same":
                        e = ex
                else:
                    self.short = True      # this point needs a case of its own
        self.points[self.run].append(e)
        self.terms[self.run].append(list(a["terms"]))
        trace: list = []
        self.traces[self.run].append(trace)
        theirs = a["trace"]
        a["point"], a["trace"] = e, trace
        out = fn(*bound.args, **bound.kwargs)
        total = next(w for name, w, _ in trace if name == "raw sum")
        rl = next(w for name, w, _ in trace if name == "register")[0]
        self.keeps[self.run].append((rl, list(a["keeps"] or [rl] * len(a["terms"]))))
        if theirs is not None:
            theirs.extend(trace)
        if j == self.cut:
            total = self._I.var(f"T{self.run}", self._I.width(total))
            neg, mag = bv.abs_s(self._I, total)
            out = replace(out, sign=neg, mag=mag)
        self.sums[self.run].append(total)
        return out


def relation(I, case: str, ey, ex) -> list:
    """The case's condition on d = ey - ex (alignment points: signed words
    of one width, far from its limits, so the difference does not wrap)."""
    w = I.width(ex)
    d = I.sub(ey, ex)
    if case == "same":
        return [I.eq(ey, ex)]
    if case in ("+1", "-1"):
        return [I.eq(d, bv.sconst(I, int(case), w))]
    if case == "up":
        return [I.sle(bv.sconst(I, 2, w), d)]
    if case == "down":
        return [I.sle(d, bv.sconst(I, -2, w))]
    raise ValueError(f"no case {case!r}")


def not_less(I, tx, ty, ex, ey):
    """T_y 2^(ey - ex) >= T_x, both signed words of one width w: the shift
    is capped at w + 1, past which the sign of T_y alone decides, in a word
    of 2w + 2 bits where nothing wraps."""
    if ey is ex:     # one point (the "same" case): d = 0, the words compare as they are
        return I.not_(I.slt(ty, tx))
    w = I.width(tx)
    ww = 2 * w + 2
    ew = I.width(ex)
    d = I.sub(ey, ex)
    cap = bv.sconst(I, w + 1, ew)
    up = bv.smin(I, bv.smax(I, d, bv.sconst(I, 0, ew)), cap)
    down = bv.smin(I, bv.smax(I, I.sub(bv.sconst(I, 0, ew), d), bv.sconst(I, 0, ew)), cap)
    wide = lambda x: bv.resize_s(I, x, ww)          # noqa: E731
    shift = lambda s: bv.resize_u(I, s, ww)          # noqa: E731   (0 <= s <= w + 1)
    left = I.shl(wide(ty), shift(up))
    right = I.shl(wide(tx), shift(down))
    return I.not_(I.slt(left, right))


DIRECT_TRY = 60.0
"""CPU seconds the sum part of a leaf whose last point moves up two places
or more, or stays the same, is given whole before it is proved in parts
(``sum_parts``)."""


@dataclass(frozen=True)
class Chain:
    """The register of a call whose point moves up two places or more (or,
    with ``moved`` false, stays the same), as its sum part in parts reads
    it: n terms added in order into words of rw bits, points of ew bits,
    and the terms that differ at x and y (the moved input's; every other
    term is the same node in both runs)."""
    n: int
    rw: int
    ew: int
    changed: tuple[int, ...]
    moved: bool = True     # the point moved up two places or more; False: the same point
    margin: int = 0        # the moved terms gain this many units more (a stage's: stage_margin)
    grains: tuple[int, ...] = ()   # term i is kept to 2^grains[i] units of the register (none: 1)

    @property
    def lost(self) -> int:
        """The units an addition may lose: one when the point moved (a floor
        of a sum exceeds the sum of the floors by at most one), none at the
        same point (s = 0)."""
        return 1 if self.moved else 0

    @property
    def bound(self) -> int:
        """L: every aligned term is at most L in magnitude, so n of them
        and their differences stay far from the word's limits."""
        return 1 << (self.rw - 3 - bv.bits_for(self.n))

    @property
    def wide(self) -> int:
        """The width the gaps are stated in: differences and sums of a few
        rw-bit words never wrap in it."""
        return self.rw + 4

    def grain(self, i: int) -> int:
        return self.grains[i] if self.grains else 0

    def slack(self, i: int) -> int:
        """e_i: (X_i >> s) - Y_i <= e_i. Where the point moved, a term that
        did not move may lose up to its grain less one (2^g - 1: it is kept
        to 2^g units, at y's coarser place as at x's), and one that did
        gains n + margin units and every such loss; at the same point
        every e_i is 0."""
        if not self.moved:
            return 0
        if i not in self.changed:
            return (1 << self.grain(i)) - 1
        return -(self.n + self.margin
                 + sum((1 << self.grain(t)) - 1 for t in range(self.n) if t not in self.changed))

    def budget(self, j: int) -> int:
        """c_j: (S_j >> s) - S_j' <= c_j for the partial sums of terms 0..j
        (each addition may lose one unit more)."""
        return sum(self.slack(i) for i in range(j + 1)) + j * self.lost


def _key(t) -> tuple:
    return tuple(getattr(getattr(t, f.name), "id", getattr(t, f.name)) for f in fields(t))


def _aligned(run: Splitting, j: int) -> tuple[list, list]:
    xs, ys = ([w for name, w, _ in run.traces[r][j] if name.startswith("aligned term ")] for r in ("x", "y"))
    return xs, ys


def chain(run: Splitting, j: int, moved: bool = True, margin: int = 0) -> Chain | None:
    """The Chain of call ``j`` of a built step formula, or None where its
    raw sum is not the aligned terms added in order, in both runs (checked
    node for node as the formula is built)."""
    I = run._I
    xs, ys = _aligned(run, j)
    for r, ws in (("x", xs), ("y", ys)):
        raw = [w for name, w, _ in run.traces[r][j] if name == "raw sum"]
        if not ws or len(raw) != 1:
            return None
        total = ws[0]
        for w in ws[1:]:
            total = I.add(total, w)
        if total.id != raw[0].id:
            return None
    tx, ty = run.terms["x"][j], run.terms["y"][j]
    if len(tx) != len(ty) or len(tx) != len(xs):
        return None
    changed = tuple(i for i, (u, v) in enumerate(zip(tx, ty)) if _key(u) != _key(v))
    rl, keeps = run.keeps["y"][j]
    grains = tuple(max(0, rl - q) for q in keeps)
    return Chain(len(xs), I.width(xs[0]), I.width(run.points["x"][j]), changed, moved, margin,
                 grains if any(grains) else ())


def _case(run: Splitting, cases: tuple[str, ...], j: int) -> str | None:
    """The case of call j's point (None where it is not a differing one)."""
    if j not in run.differing or len(cases) != len(run.differing):
        return None
    return cases[run.differing.index(j)]


def chain_of(p: ModelParams, k: int, move: str, cases: tuple[str, ...],
             at: int | None = None) -> Chain | None:
    """The Chain of call ``at`` of a leaf, whose order is then proved in
    parts: the last call (``at`` not given) where its point differs from
    x's with case "up" or "same"; a stage (``stage_of``) where its point
    moves up two places or more, with its ``stage_margin``. None for every
    other call."""
    run = shape(p, k, move, cases)
    j = len(run.points["x"]) - 1 if at is None else at
    case = _case(run, cases, j)
    if case not in (("up", "same") if at is None else ("up",)):
        return None
    return chain(run, j, case == "up", 0 if at is None else stage_margin(run, j))


def stage_of(p: ModelParams, k: int, move: str, cases: tuple[str, ...]) -> int | None:
    """The call a leaf's sum part is cut at when it is proved in two stages
    (``sub_lemmas``): the last differing call before the last, where its
    point moves up two places or more; None for a leaf with no such call."""
    run = shape(p, k, move, cases)
    last = len(run.points["x"]) - 1
    early = [j for j in run.differing if j < last]
    if not early or _case(run, cases, early[-1]) != "up":
        return None
    return early[-1]


def sum_parts(ch: Chain, head: str = "sum") -> list[str]:
    """The parts that stand for the order of a Chain's call, in order
    (``head`` names it: "sum" or "sum, past call j" the last call's,
    "sum, call j" a stage's, whose statement is the chain's last budget
    itself, so it has no order part)."""
    out = [f"{head}, term {i}" for i in range(ch.n)]
    for j in range(1, ch.n):
        out += [f"{head}, link {j}, bounds", f"{head}, link {j}, floor", f"{head}, link {j}, budget"]
    return out + [f"{head}, gaps, monotone", f"{head}, gaps, identity"] + \
        ([] if ch.margin else [f"{head}, order"])


def read_lemma(lemma: str) -> tuple[str, int | None, int | None, str]:
    """A lemma's name read: ("sum" or "rest", the stage call whose statement
    it is about (None: the last call's order), the stage call cut before
    it with its statement assumed (None: none), the Chain part or "")."""
    head, *more = lemma.split(", ")
    at = cut = None
    if more and more[0].startswith("call "):
        at = int(more.pop(0).split()[-1])
    elif more and more[0].startswith("past call "):
        cut = int(more.pop(0).split()[-1])
    return head, at, cut, ", ".join(more)


def sub_lemmas(p: ModelParams, k: int, move: str, cases: tuple[str, ...], lemma: str) -> list[str]:
    """The parts that stand for ``lemma`` of a leaf when it gets no answer
    whole in DIRECT_TRY (none: it has no parts):
      sum                 cut at call j (``stage_of``): "sum, call j" (call
                          j's ``stage_statement``) and "sum, past call j"
                          (call j's sums free words that meet it, the last
                          call's order denied); with no such call, the
                          last call's Chain's parts (``sum_parts``);
      sum, call j         call j's Chain's parts, where it has one;
      sum, past call j    the last call's Chain's parts, where it has one,
                          with call j cut as above."""
    head, at, cut, piece = read_lemma(lemma)
    if head != "sum" or piece:
        return []
    if at is None and cut is None:
        j = stage_of(p, k, move, cases)
        if j is not None:
            return [f"sum, call {j}", f"sum, past call {j}"]
    ch = chain_of(p, k, move, cases, at)
    return [] if ch is None else sum_parts(ch, lemma)


def shift(I, ex, ey, rw: int):
    """s = d = ey - ex as an rw-bit word, capped at rw (0 where d < 0)."""
    d = I.sub(ey, ex)
    ew = I.width(d)
    cap = min(rw, (1 << (ew - 1)) - 1)
    return bv.resize_u(I, bv.smin(I, bv.smax(I, d, bv.sconst(I, 0, ew)), bv.sconst(I, cap, ew)), rw)


def _within(I, x, limit: int):
    """|x| <= limit, x a signed word, limit a constant."""
    return abs_le(I, x, I.const(limit, I.width(x)))


def _sh(I, ch: Chain, x, s):
    """x >> s (arithmetic: rounded toward minus infinity), widened."""
    return bv.resize_s(I, I.ashr(x, s), ch.wide)


def _gap(I, ch: Chain, x, y, s):
    """(x >> s) - y in the wide words: how far x, cut to y's last place,
    lies above y."""
    return I.sub(_sh(I, ch, x, s), bv.resize_s(I, y, ch.wide))


def _le_c(I, ch: Chain, g, c: int):
    return I.sle(g, bv.sconst(I, c, ch.wide))


def stage_margin(run: Splitting, j: int) -> int:
    """The units of call j's last place at y that a later call may lose
    where its point is call j's (the sum with c at the products' point):
    each of its terms, kept to q bits below the point where call j keeps
    r, loses less than 2^(r - q) of them, and less than one where q >= r."""
    r = run.keeps["y"][j][0]
    return max([sum(1 << max(0, r - q) for q in keeps) for _, keeps in run.keeps["y"][j + 1:]], default=1)


def stage_statement(I, run: Splitting, j: int):
    """What a stage at call j (``stage_of``) proves and the calls after it
    assume: its sums T, T' lie within n L, and (T >> s) - T' <= -1 - m,
    m = ``stage_margin``: call j's Chain's last budget, so y's sum exceeds
    x's by more than m units of y's last place, more than a later sum at
    the same point loses."""
    ch = chain(run, j, True, stage_margin(run, j))
    if ch is None:
        raise ValueError(f"call {j}'s raw sum is not its aligned terms added in order")
    tx, ty = run.sums["x"][j], run.sums["y"][j]
    s = shift(I, run.points["x"][j], run.points["y"][j], ch.rw)
    return I.and_(_within(I, tx, ch.n * ch.bound), _within(I, ty, ch.n * ch.bound),
                  _le_c(I, ch, _gap(I, ch, tx, ty, s), ch.budget(ch.n - 1)))


def term_lemma(I, run: Splitting, j: int, i: int, margin: int = 0):
    """Term i of call j (a built step formula's): at most L in magnitude at
    x and at y, and (X_i >> s) - Y_i <= e_i."""
    ch = chain(run, j, run.points["y"][j] is not run.points["x"][j], margin)
    if ch is None:
        raise ValueError(f"call {j}'s raw sum is not its aligned terms added in order")
    xs, ys = _aligned(run, j)
    s = shift(I, run.points["x"][j], run.points["y"][j], ch.rw)
    return I.and_(_within(I, xs[i], ch.bound), _within(I, ys[i], ch.bound),
                  _le_c(I, ch, _gap(I, ch, xs[i], ys[i], s), ch.slack(i)))


def piece_formula(ch: Chain, piece: str, description: str):
    """A part of free words (``sum_parts`` past the terms), to be UNSAT:

    link j, bounds  |S| <= j L, |X| <= L give |S + X| <= (j + 1) L, and
                    S + X widened is S widened plus X widened;
    link j, floor   with those bounds and any shift 0 <= s <= rw,
                    (S + X) >> s <= (S >> s) + (X >> s) + 1;
    link j, budget  G1 <= c_(j-1), G2 <= e_j give G1 + G2 + 1 <= c_j;
    gaps, monotone  C <= A + B + 1 gives C - (P + Q) <= A + B + 1 - (P + Q);
    gaps, identity  A + B + 1 - (P + Q) = (A - P) + (B - Q) + 1
                    (A, B, C, P, Q rw-bit words, widened);
    order           sums T, T' within n L, points with d = ey - ex >= 2
                    ("up") and (T >> s) - T' <= c_(n-1) give T' 2^d >= T
                    (``not_less``, what the sum part denies).
    At the same point (``Chain.moved`` false) s = 0, every 1 above is 0
    (an addition loses nothing) and the order compares T' with T.
    """
    def build(I):
        w, L, ww = ch.rw, ch.bound, ch.wide
        wide = lambda x: bv.resize_s(I, x, ww)      # noqa: E731
        if piece == "order":
            tx, ty = I.var("Tx", w), I.var("Ty", w)
            ex = I.var("ex", ch.ew)
            ey = I.var("ey", ch.ew) if ch.moved else ex
            s = shift(I, ex, ey, w)
            hyp = relation(I, "up", ey, ex) if ch.moved else []
            hyp += [_within(I, tx, ch.n * L), _within(I, ty, ch.n * L),
                    _le_c(I, ch, _gap(I, ch, tx, ty, s), ch.budget(ch.n - 1))]
            return hyp + [I.not_(not_less(I, tx, ty, ex, ey))]
        if piece.startswith("gaps"):
            A, B, C, P, Q = (wide(I.var(n, w)) for n in ("A", "B", "C", "P", "Q"))
            one = bv.sconst(I, ch.lost, ww)
            top, pq = I.add(I.add(A, B), one), I.add(P, Q)
            if piece == "gaps, monotone":
                return [I.sle(C, top), I.not_(I.sle(I.sub(C, pq), I.sub(top, pq)))]
            return [I.not_(I.eq(I.sub(top, pq), I.add(I.add(I.sub(A, P), I.sub(B, Q)), one)))]
        j = int(piece.split(",")[0].split()[-1])
        if piece.endswith("budget"):
            G1, G2 = (bv.resize_s(I, I.var(n, w + 1), ww) for n in ("G1", "G2"))
            hyp = [_le_c(I, ch, G1, ch.budget(j - 1)), _le_c(I, ch, G2, ch.slack(j))]
            return hyp + [I.not_(_le_c(I, ch, I.add(I.add(G1, G2), bv.sconst(I, ch.lost, ww)), ch.budget(j)))]
        S, X, s = I.var("S", w), I.var("X", w), I.var("s", w)
        hyp = [_within(I, S, j * L), _within(I, X, L)]
        if piece.endswith("bounds"):
            total = I.add(S, X)
            ok = I.and_(_within(I, total, (j + 1) * L), I.eq(wide(total), I.add(wide(S), wide(X))))
            return hyp + [I.not_(ok)]
        ok = I.sle(_sh(I, ch, I.add(S, X), s), I.add(I.add(_sh(I, ch, S, s), _sh(I, ch, X, s)),
                                                      bv.sconst(I, ch.lost, ww)))
        shifts = I.ule(s, I.const(w, w)) if ch.moved else I.eq(s, I.const(0, w))
        return hyp + [shifts, I.not_(ok)]
    return build_formula(build, description=description)


def _build(p: ModelParams, k: int, move: str, cases: tuple[str, ...], lemma: str | None,
           last: int, seen: list):
    """The step formula's builder; it leaves its Splitting in ``seen``."""
    head, at, cut, piece = read_lemma(lemma or "")
    j = last if at is None else at
    def build(I):
        run = Splitting(I, cases, cut=last if head == "rest" else cut)
        seen.append(run)
        a, b, c = sep.declare_inputs(I, p, k)
        ya, yb, yc, out = ms.step(I, p, a, b, c, move)
        sa, sb = sep.declare_scales(I, p, k)
        out += sep.scale_constraints(I, p, Domain(), sa, sb)
        run.run = "x"
        dx = datapath.dot(run, p, a, b, c, sa=sa, sb=sb)
        run.run = "y"
        dy = datapath.dot(run, p, ya, yb, yc, sa=sa, sb=sb)
        out += run.cond
        if lemma is None:
            return out
        base = constraints(I, p, k, (a, b, c), (ya, yb, yc), dx, dy, lower=head == "rest")
        order = lambda i: not_less(I, run.sums["x"][i], run.sums["y"][i],   # noqa: E731
                                   run.points["x"][i], run.points["y"][i])
        if head == "rest":
            return out + base + [order(j)]
        assume = [] if cut is None else [stage_statement(I, run, cut)]
        if piece.startswith("term "):
            margin = 0 if at is None else stage_margin(run, at)
            return out + base + assume + [I.not_(term_lemma(I, run, j, int(piece.split()[-1]), margin))]
        if at is not None:
            return out + base + [I.not_(stage_statement(I, run, at))]
        return out + base + assume + [I.not_(order(j))]
    return build


def shape(p: ModelParams, k: int, move: str, cases: tuple[str, ...] = ()) -> Splitting:
    """The Splitting of the step formula's skeleton (no lemma), built once
    without a solver: its calls, the points that differ, and whether
    ``cases`` leaves one of them without a case."""
    seen: list[Splitting] = []
    _build(p, k, move, cases, None, -1, seen)(SmtInterp())
    return seen[0]


def case_lists(p: ModelParams, k: int, move: str) -> list[tuple[str, ...]]:
    """The leaves of the case tree of ``move``: lists of cases, one per
    differing point, that together cover every step."""
    out: list[tuple[str, ...]] = []
    todo: list[tuple[str, ...]] = [()]
    while todo:
        cases = todo.pop(0)
        if shape(p, k, move, cases).short:
            todo += [cases + (c,) for c in CASES]
        else:
            out.append(cases)
    return out


def formula(p: ModelParams, k: int, move: str, cases: tuple[str, ...], lemma: str):
    """The part: ``lemma`` ("sum" or "rest", or one of ``sum_parts``) of
    step ``move`` in ``cases`` (a leaf of ``case_lists``)."""
    seen: list[Splitting] = []
    name = f"tcsmt monotonicity {p.name} k={k}: " + part_name(move, cases, lemma)
    _, at, _, piece = read_lemma(lemma)
    if piece.startswith(("link ", "gaps")) or piece == "order":
        ch = chain_of(p, k, move, cases, at)
        if ch is None:
            raise ValueError(f"{cases} of {move}: its sum part is not one to prove in parts")
        return piece_formula(ch, piece, name)
    last = len(shape(p, k, move, cases).points["x"]) - 1
    f, _ = abstraction.free_products(_build(p, k, move, cases, lemma, last, seen), name,
                                     abstraction.SteppedProducts())
    if seen[0].short:
        raise ValueError(f"{cases} is not a leaf of the case tree of {move}")
    return f


def part_name(move: str, cases: tuple[str, ...], lemma: str) -> str:
    return f"step {move}, points {'/'.join(cases) or 'shared'}, {lemma}"


def symmetries(p: ModelParams, k: int) -> list[tuple]:
    """The symmetry parts (see the module doc), each (kind, name, ...):
    ("products", name, pi), ("register", name, j) or ("terms", name, pi,
    sigma), where the permuted inputs are a'[t] = a[pi[t]] (b alike),
    sa'[s] = sa[sigma[s]], and j counts the register's group terms (c is
    its term 0). Empty unless the block's products are summed in exact
    groups (group_size > 1) that lie in one block, the block register adds
    c and the groups and nothing after it reads the groups (zero_sign is
    not "keep_c"). Where the products are not grouped (group_size 1) and
    nothing pairs or interleaves them, every neighbour swap of the
    products is a "products" part instead (its formula, the whole datapath
    on z and pi z, needs no condition on how the products are summed)."""
    g = p.group_size
    if g <= 1:
        if k < 2 or p.pair_sums or p.product_groups != 1 or p.chaining == "separate" or p.fout.is_integer:
            return []
        ident = list(range(k))
        return [("products", f"symmetry: products {i} and {i + 1} swapped",
                 ident[:i] + [i + 1, i] + ident[i + 2:]) for i in range(k - 1)]
    if (k % g or k > p.block_size or p.c_group_size not in (None, g) or p.pair_sums
            or p.zero_sign == "keep_c" or p.chaining == "separate" or p.fout.is_integer):
        return []
    sb = p.scaling()[1] if p.scale_format is not None else k
    if sb % g or k % sb:
        return []
    n = k // sb

    def swap(xs: list[int], i: int, j: int, size: int) -> list[int]:
        ys = list(xs)
        ys[i:i + size], ys[j:j + size] = xs[j:j + size], xs[i:i + size]
        return ys
    ident, blocks = list(range(k)), list(range(n))
    out: list[tuple] = [("register", f"symmetry: register terms {j + 1} and {j + 2} swapped", j)
                        for j in range(k // g - 1)]
    for s in range(n - 1):
        out.append(("terms", f"symmetry: scale blocks {s} and {s + 1} swapped",
                    swap(ident, s * sb, (s + 1) * sb, sb), swap(blocks, s, s + 1, 1)))
    for j in range((n - 1) * sb // g, k // g - 1):
        out.append(("terms", f"symmetry: groups {j} and {j + 1} swapped", swap(ident, j * g, (j + 1) * g, g),
                    blocks))
    out += [("products", f"symmetry: products {i} and {i + 1} swapped", swap(ident, i, i + 1, 1))
            for i in range(k - g, k - 1)]
    return out


class _Terms(_OnSum):
    """An interpretation handed every block_sum: records each call's terms
    and, with ``free`` (a dict shared by two runs), gives the call free
    terms instead, every field free, the first call's (c) kept, the ones
    at places ``swap`` (j, j + 1 of the groups) exchanged."""

    def __init__(self, I, free: dict | None = None, swap: int | None = None) -> None:
        super().__init__(I)
        self.free, self.swap = free, swap
        self.terms: list[list] = []

    def on_sum(self, fn, I, bound):
        terms = list(bound.arguments["terms"])
        self.terms.append(terms)
        if self.free is not None:
            V = self._I
            for n, t in enumerate(terms[1:], 1):
                if n not in self.free:
                    self.free[n] = replace(t, sig=V.var(f"sig{n}", V.width(t.sig)),
                                           exp=V.var(f"exp{n}", V.width(t.exp)),
                                           sign=V.var(f"sign{n}", 0), nan=V.var(f"nan{n}", 0),
                                           inf=V.var(f"inf{n}", 0), live=V.var(f"live{n}", 0))
                terms[n] = self.free[n]
            if self.swap is not None:
                i = self.swap + 1
                terms[i], terms[i + 1] = terms[i + 1], terms[i]
            bound.arguments["terms"] = terms
        return fn(*bound.args, **bound.kwargs)


def _permuted(I, p: ModelParams, k: int, perm: list[int], blocks: list[int], run=None):
    """The inputs, z and pi z, and the two outputs, in the formula's
    interpretation (``run``: an interpretation wrapping I, or I)."""
    run = run or I
    a, b, c = sep.declare_inputs(I, p, k)
    sa, sb = sep.declare_scales(I, p, k)
    out = sep.scale_constraints(I, p, Domain(), sa, sb) + in_domain(I, p, a, b, c)
    d = datapath.dot(run, p, a, b, c, sa=sa, sb=sb)
    moved = (lambda xs: None if xs is None else [xs[s] for s in blocks])   # noqa: E731
    e = datapath.dot(run, p, [a[t] for t in perm], [b[t] for t in perm], c, sa=moved(sa), sb=moved(sb))
    return out, d, e


def same_terms(p: ModelParams, k: int, perm: list[int], blocks: list[int]) -> bool:
    """Whether pi z gives the register the very terms of z, its groups
    permuted as pi moves them (node for node, c the same), built once
    without a solver."""
    I = SmtInterp()
    run = _Terms(I)
    _permuted(I, p, k, perm, blocks, run)
    if len(run.terms) != 2 or not run.terms[0] or not run.terms[1]:
        return False
    (tz, *rest_z), (tp, *rest_p) = run.terms
    if tz is not tp and tz != tp:
        return False
    g = p.group_size
    fields = ("sign", "exp", "sig", "nan", "inf", "live")
    key = lambda t: tuple(getattr(getattr(t, f), "id", None) for f in fields)   # noqa: E731
    return len(rest_z) == len(rest_p) == k // g and \
        all(key(rest_p[t]) == key(rest_z[perm[t * g] // g]) for t in range(k // g))


def symmetry_formula(p: ModelParams, k: int, part: tuple):
    """A symmetry part's formula (``part`` from ``symmetries``, kind
    "products" or "register"): the two outputs differ."""
    kind, name = part[:2]

    def build(I):
        if kind == "products":
            out, d, e = _permuted(I, p, k, part[2], list(range(p.scale_count(k))))
            return out + [I.not_(I.eq(d, e))]
        free: dict = {}
        a, b, c = sep.declare_inputs(I, p, k)
        sa, sb = sep.declare_scales(I, p, k)
        d = datapath.dot(_Terms(I, free), p, a, b, c, sa=sa, sb=sb)
        e = datapath.dot(_Terms(I, free, part[2]), p, a, b, c, sa=sa, sb=sb)
        return [I.not_(I.eq(d, e))]
    return build_formula(build, description=f"tcsmt monotonicity {p.name} k={k}: {name}")


def step_moves(p: ModelParams, k: int) -> list[str]:
    """The steps a proof splits into cases: every input's, or, where
    ``symmetries`` gives permutations, a_{k-1}'s, b_{k-1}'s and c's."""
    if symmetries(p, k):
        return [f"a{k - 1}", f"b{k - 1}", "c-up", "c-zero"]
    return ms.moves(k)


def plan(p: ModelParams, k: int) -> list[tuple]:
    """Every part, in order: a symmetry part (``symmetries``) or ("step",
    move, cases, lemma)."""
    out: list[tuple] = list(symmetries(p, k))
    return out + [("step", move, cases, lemma) for move in step_moves(p, k)
                  for cases in case_lists(p, k, move) for lemma in LEMMAS]


def part_names(p: ModelParams, k: int, said: dict | None = None) -> list[str]:
    """Every part's name, in order, without asking a solver. A leaf's sum
    part proved in parts (``sum_parts``) is named by its parts where the
    file's verdicts ``said`` (part name to verdict) have them, since whether
    a proof needs them depends on its solvers' answers."""
    said = said or {}

    def names(move: str, cases: tuple[str, ...], lemma: str) -> list[str]:
        name = part_name(move, cases, lemma)
        subs = sub_lemmas(p, k, move, cases, lemma) if any(n.startswith(name + ", ") for n in said) else []
        return [n for sub in subs for n in names(move, cases, sub)] or [name]
    out: list[str] = []
    for x in plan(p, k):
        out += names(*x[1:]) if x[0] == "step" else [x[1]]
    return out


def prove(p: ModelParams, k: int, solvers: tuple[str, ...] = ("bitwuzla", "boolector"),
          budget: float = 600.0, log=None, total: float | None = None,
          moves: list[str] | None = None, progress=None) -> Proof:
    """Every part (of ``moves`` only, when given: a proof of those steps),
    each by every solver at once (monotone_cuts.ask: ``budget`` CPU
    seconds each);
    ends at the first part not proved, or once ``total`` seconds
    have passed (unknown). ``progress(name, done, total)`` hears of each
    part of the plan done (a sum part proved in parts counts once)."""
    start = time.monotonic()
    if not applies(p, k):
        raise BadOption(f"{p.name}: monotonicity by split steps needs one block of the block "
                        f"register (block normalisation, c placed globally, k <= block_size)")
    done: list[Part] = []
    todo = plan(p, k) if moves is None else \
        [("step", move, cases, lemma) for move in moves for cases in case_lists(p, k, move)
         for lemma in LEMMAS]

    def settle(move: str, cases: tuple[str, ...], lemma: str) -> list[Part]:
        """The part, whole; where it has parts (``sub_lemmas``) and gets no
        answer whole in DIRECT_TRY, its parts, which stand for it when all
        are proved. Where one of them is not, the whole part is asked again
        with the full budget; unproved, the parts are kept, the whole part
        last."""
        subs = sub_lemmas(p, k, move, cases, lemma)
        f = formula(p, k, move, cases, lemma)
        name = part_name(move, cases, lemma)
        part = ask(f, name, solvers, min(budget, DIRECT_TRY) if subs else budget, log, at_once=True)
        if part.verdict == "unsat" or not subs:
            return [part]
        pieces: list[Part] = []
        for sub in subs:
            pieces += settle(move, cases, sub)
            if pieces[-1].verdict != "unsat":
                again = ask(f, name, solvers, budget, log, at_once=True) if budget > DIRECT_TRY else part
                return [again] if again.verdict == "unsat" else pieces + [again]
        return pieces

    for n, x in enumerate(todo):
        what = part_name(*x[1:]) if x[0] == "step" else x[1]
        if progress is not None:          # counted in the plan's parts (a sum part in parts is one)
            progress(what, n, len(todo))
        if x[0] == "terms":
            done.append(Part(what, "unread" if same_terms(p, k, *x[2:]) else "unknown"))
        elif x[0] == "step":
            done += settle(*x[1:])
        else:
            done.append(ask(symmetry_formula(p, k, x), what, solvers, budget, log, at_once=True))
        part = done[-1]
        late = total is not None and time.monotonic() - start > total
        if part.verdict not in ("unsat", "unread") or late:
            return Proof(Verdict.UNKNOWN, done, [])
    if progress is not None:
        progress("", len(todo), len(todo))
    return Proof(Verdict.UNSAT, done, [])
