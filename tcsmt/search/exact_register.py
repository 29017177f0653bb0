"""A proof, in lemmas, that the exact register (tcsmt/datapath/exact.py)
rounds as the exact sum does: the argument of that module's docstring,
by induction over the terms it takes, each step one small formula.

The exact sum is stated in a few lines (tcsmt.search.wide_sum: every term
shifted to units of 2^low in one register wide enough for any sum, no
sorting or splitting); ``spec`` picks low and the width for a model.

One formula for the whole statement (tests/test_exact_sum.py) asks the
solver to see that sums taken in decreasing order, each partial sum
shifted by the next exponent gap, equal the plain sum of the shifted terms:
no solver answers that in ten minutes for four terms. The lemmas, each
unsat (a list of formulas, each to be unsat):

  glue   the model's d is round_fixed of exact_sum of its terms;
  norm   each term (c's, and a product's: every product is the same
         function of its a_i, b_i) normalised has 2^q times its wide value
         (units of 2^(low - q) and 2^low), at most 2^B (term c, term ab);
         a wide partial sum of j < n such terms and the next one neither
         wraps nor leaves j 2^B, and 2^q distributes over it (sum): so
         the normalised terms sum to 2^q times the wide sum S;
  swap   a compare-and-swap step of the sort gives back its two terms,
         in one order or the other (each step of the network is one, on
         two adjacent terms, the others kept: exact.sort_steps), so the
         sorted terms are the terms permuted and keep their sum (addition
         commutes);
  order  the sorted terms are in shape (a zero term has M = 0 and comes
         after every non-zero one; a non-zero one has M's top bit set and
         its exponent in [elo, ehi], at most the one before it);
  start  the empty register and P = 0 meet the invariant Inv_0;
  shift fact  four facts of sc(X, a) = X 2^a in P's width, for every
         (W+2)-bit X, Y and shifts a, b in [0, amax]: its size and sign
         (size); a >= b and X 2^(a-b) <= Y give sc(X, a) <= sc(Y, b) (le;
         ge the same with >=); sc(X, a) + sc(Y, a) = sc(X + Y, a) when
         X + Y does not wrap (sum);
  step   for any j < n, any state in one case of Inv_j (below), any
         partial sum P, any term t in shape taken in order: when
         take(state, t) lands in a case, it meets that case of Inv_{j+1}
         with P + t (nine lemmas: three cases from, three to). The steps
         in FREE_STEPS are asked with each sc a free word, bound by
         instances of the shift facts (``FreeShifts``): the real shifts
         meet every instance, so such a step unsat is a proof of it;
  final  a state meeting Inv_n rounds as P does (any flags); asked whole,
         or, where a solver has no answer whole, in cases, one per phase
         and value of the exponent that places the result (``final_cases``);
  value  P = 2^q S (or a NaN or infinity) rounds as S does.

Together: d = round(exact_sum) (glue) = round(result of state n) rounds as
P_n, the sum of the sorted terms (start, step 0..n-1 with order, final),
P_n = 2^q S (swap, norm), which rounds as the wide sum S (value).

Inv_j (P the sum of the j terms taken, D = P - H 2^K once split; every
power of two a shift sc of a word of at most W + 2 bits):
  not split: P = R 2^(e_cur - q), e_cur = e_last;
  split, not done: P = H 2^K + R 2^(e_cur - q), e_cur = e_last,
    2^(of+2) <= |H| <= 2^(of+3), e_last + b + 3 <= K, and D's bound
    |D| <= 2^(K-1) + j 2^(K-b-2) stated on R, in R's units (no wide word);
  done: D != 0 with D's sign d_neg, d_nz, the same bounds on H and K,
    -(2^(b+1) + j) 2^(K-b-2) <= D <= (2^(b+1) + j) 2^(K-b-2), and
    |D| >= (2^(of+b+4) - j) 2^(e_last+1), so no later term turns D.
(of the output's fraction bits, b = bits_for(n - 1), e_last the exponent
of the last non-zero term taken: later terms are below 2^(e_last + 1).)
"""

from __future__ import annotations

from dataclasses import dataclass

from tcsmt import datapath
from tcsmt.datapath import bv
from tcsmt.datapath.exact import (
    Norm,
    State,
    cut,
    dominates,
    normalise,
    register_bits,
    result,
    sort_steps,
    start,
    take,
)
from tcsmt.datapath.terms import Fixed
from tcsmt.model.params import ModelParams
from tcsmt.search.wide_sum import abs_le, term_value, wide_sum
from tcsmt.smt.smtlib import build_formula


@dataclass(frozen=True)
class Setting:
    p: ModelParams     # the model
    k: int
    ew: int
    q: int             # fraction bits of a normalised term
    W: int             # the register's width
    b: int
    of: int            # the output's fraction bits
    low: int           # the wide sum's unit, 2^low
    width: int         # the wide sum's width
    elo: int           # the exponents of non-zero terms' leading ones
    ehi: int

    @property
    def n(self) -> int:
        return self.k + 1

    @property
    def U(self) -> int:          # P's unit: 2^(low - q)
        return self.low - self.q

    @property
    def Wd(self) -> int:         # P's width (signed)
        return self.width + self.q + 2

    @property
    def SW(self) -> int:         # the width of a word a shift takes
        return self.W + 2

    @property
    def amax(self) -> int:       # the largest shift a generic fact covers
        return self.Wd - self.SW - 3


def setting(p, k: int, low: int, width: int) -> Setting:
    q = max(p.fc.frac_bits, 2 * p.fin.frac_bits + 1)
    of = p.fout.frac_bits
    elo = min(p.fc.emin - p.fc.frac_bits, 2 * (p.fin.emin - p.fin.frac_bits))
    return Setting(p, k, datapath.exp_width(p), q, register_bits(q, of, k + 1), bv.bits_for(k), of,
                   low, width, elo, p.fc.emax + 4)


def spec(p, k: int) -> Setting:
    """The setting of a model at k: the wide sum's unit 2^low, the last bit
    of the smallest product or c, and a width that holds any sum of up to
    2^COUNT terms below 2^(ehi + 1) with its sign, and the register's
    head at its highest point (|H| up to 2^(of + 3), K up to ehi + W)."""
    low = min(2 * (p.fin.emin - p.fin.frac_bits), p.fc.emin - p.fc.frac_bits)
    s = setting(p, k, low, 0)
    return setting(p, k, low, s.ehi + 1 - low + s.W + s.of + COUNT + 6 + SHIFT_ROOM)


SHIFT_ROOM = 40
"""Bits the wide sum gets beyond what any sum needs, so that every shift the
invariant takes (H by K - U, up to ehi + W - U) is at most ``amax``: a
generic shift fact covers it."""


def model_lemmas(s: Setting) -> list:
    """Every lemma for the model's own setting (``spec``)."""
    ew = s.ew
    return lemmas(s, lambda I, t: wide_sum(I, t, s.low, s.width, ew))


def inputs(I, s: Setting):
    p, ew = s.p, s.ew
    a = [I.var(f"a{i}", p.fin.bits) for i in range(s.k)]
    b = [I.var(f"b{i}", p.fb.bits) for i in range(s.k)]
    c = I.var("c", p.fc.bits)
    ta = [datapath.unpack(I, p.fin, x, ew, False) for x in a]
    tb = [datapath.unpack(I, p.fb, y, ew, False) for y in b]
    terms = [datapath.unpack(I, p.fc, c, ew, False)]
    terms += [datapath.multiply(I, x, y, p, ew) for x, y in zip(ta, tb)]
    return a, b, c, terms


def _c(I, s: Setting, v: int):
    return bv.sconst(I, v, s.ew)


def _le(I, x, y):
    return I.not_(I.slt(y, x))


class Shift:
    """sc(X, a) = X 2^a in P's width: X a signed word of at most SW bits,
    a an exponent word (the shift ``value``, ``reg_value`` and ``inv`` take)."""

    def __init__(self, I, s: Setting):
        self.I, self.s = I, s

    def word(self, X):
        assert self.I.width(X) <= self.s.SW
        return bv.resize_s(self.I, X, self.s.SW)

    def __call__(self, X, a):
        I = self.I
        return bv.shl_by(I, bv.resize_s(I, self.word(X), self.s.Wd), a)


class FreeShifts(Shift):
    """Each sc(X, a) a free word of P's width, bound only by instances of
    the generic shift facts (``lemma_fact``: each proved once for the
    setting, for every X and a), the facts that equal arguments give equal
    values and that 0 shifts to 0. A formula unsat with them is unsat with
    the real shifts, which meet every fact."""

    def __init__(self, I, s: Setting):
        super().__init__(I, s)
        self.apps: list[tuple] = []
        self.extra: list = []

    def app(self, X, a) -> tuple:
        v = self.I.var(f"sc{len(self.apps)}", self.s.Wd)
        self.apps.append((self.word(X), a, v))
        return self.apps[-1]

    def __call__(self, X, a):
        return self.app(X, a)[2]

    def sum(self, x: tuple, y: tuple) -> tuple:
        """sc(X, a) + sc(Y, a) = sc(X + Y, a) where X + Y does not wrap."""
        I, s = self.I, self.s
        (X, a, vx), (Y, b, vy) = x, y
        S = I.add(X, Y)
        z = self.app(S, a)
        pre = _fact_range(I, s, a) + [I.eq(a, b), _no_wrap(I, s, X, Y)]
        self.extra.append(I.or_(I.not_(I.and_(*pre)), I.eq(I.add(vx, vy), z[2])))
        return z

    def order(self, x: tuple, y: tuple) -> None:
        """The le and ge facts between two applications, both ways round."""
        I, s = self.I, self.s
        for (X, a, v), (Y, b, w) in ((x, y), (y, x)):
            pre, Xs, Yw = _order_terms(I, s, X, Y, a, b)
            self.extra.append(I.or_(I.not_(I.and_(*pre, _le(I, Xs, Yw))), _le(I, v, w)))
            self.extra.append(I.or_(I.not_(I.and_(*pre, _le(I, Yw, Xs))), _le(I, w, v)))

    def facts(self) -> list:
        I, s = self.I, self.s
        out = list(self.extra)
        for i, (X, a, v) in enumerate(self.apps):
            out.append(I.or_(I.not_(bv.is_zero(I, X)), bv.is_zero(I, v)))
            out.append(I.or_(I.not_(I.and_(*_fact_range(I, s, a))), _size_ok(I, s, X, v)))
            for Y, b, w in self.apps[i + 1:]:
                out.append(I.or_(I.not_(I.and_(I.eq(X, Y), I.eq(a, b))), I.eq(v, w)))
        return out


def _fact_range(I, s: Setting, a) -> list:
    return [_le(I, _c(I, s, 0), a), _le(I, a, _c(I, s, s.amax))]


def _size_ok(I, s: Setting, X, v):
    """|v| <= 2^(Wd-4), v has X's sign, and v != 0 when X != 0."""
    lim = I.const(1 << (s.Wd - 4), s.Wd)
    return I.and_(_le(I, v, lim), _le(I, I.neg(lim), v), I.not_(bv.xor_b(I, bv.msb(I, v), bv.msb(I, X))),
                  I.or_(bv.is_zero(I, X), I.not_(bv.is_zero(I, v))))


def _no_wrap(I, s: Setting, X, Y):
    """X + Y (SW-bit words) does not wrap."""
    ext = lambda w: bv.resize_s(I, w, s.SW + 1)              # noqa: E731
    return I.eq(ext(I.add(X, Y)), I.add(ext(X), ext(Y)))


def _order_terms(I, s: Setting, X, Y, a, b):
    """For a >= b: the premises and X 2^min(a - b, SW), Y, in 2 SW + 2 bits."""
    d = I.sub(a, b)
    dc = I.ite(I.slt(d, _c(I, s, s.SW)), d, _c(I, s, s.SW))
    wide = 2 * s.SW + 2
    pre = _fact_range(I, s, a) + _fact_range(I, s, b) + [_le(I, b, a)]
    return pre, bv.shl_by(I, bv.resize_s(I, X, wide), dc), bv.resize_s(I, Y, wide)


FACTS = ("size", "le", "ge", "sum")


def lemma_fact(s: Setting, name: str):
    """A generic shift fact, for every SW-bit X, Y and shifts in [0, amax]:
    size (``_size_ok``), le (a >= b, X 2^(a-b) <= Y: sc(X, a) <= sc(Y, b)),
    ge (the same with >=), sum (sc(X, a) + sc(Y, a) = sc(X + Y, a), X + Y
    not wrapping)."""
    def build(I):
        sc = Shift(I, s)
        X, Y, a, b = I.var("X", s.SW), I.var("Y", s.SW), I.var("a", s.ew), I.var("b", s.ew)
        if name == "size":
            return _fact_range(I, s, a) + [I.not_(_size_ok(I, s, X, sc(X, a)))]
        if name == "sum":
            ok = _no_wrap(I, s, X, Y)
            return _fact_range(I, s, a) + [ok, I.not_(I.eq(I.add(sc(X, a), sc(Y, a)), sc(I.add(X, Y), a)))]
        pre, Xs, Yw = _order_terms(I, s, X, Y, a, b)
        if name == "le":
            return pre + [_le(I, Xs, Yw), I.slt(sc(Y, b), sc(X, a))]
        return pre + [_le(I, Yw, Xs), I.slt(sc(X, a), sc(Y, b))]
    return build_formula(build, description=f"exact register: shift fact, {name}")


def value(I, s: Setting, t: Norm, sc: Shift | None = None):
    """A normalised term in units of 2^(low - q)."""
    return I.ite(t.zero, I.const(0, s.Wd), (sc or Shift(I, s))(*term_shift(I, s, t)))


def term_shift(I, s: Setting, t: Norm) -> tuple:
    """(X, a): a non-zero term's value is sc(X, a)."""
    return bv.neg_if(I, t.neg, bv.resize_u(I, t.M, s.SW)), I.sub(t.e, _c(I, s, s.low))


def total(I, s: Setting, ns: list[Norm]):
    out = I.const(0, s.Wd)
    for t in ns:
        out = I.add(out, value(I, s, t))
    return out


def reg_value(I, s: Setting, R, e, sc: Shift | None = None):
    return (sc or Shift(I, s))(R, I.sub(e, _c(I, s, s.low)))


def shape(I, s: Setting, t: Norm) -> list:
    live = [bv.msb(I, t.M), _le(I, _c(I, s, s.elo), t.e), _le(I, t.e, _c(I, s, s.ehi))]
    return [I.ite(t.zero, bv.is_zero(I, t.M), I.and_(*live))]


def _count(I, s: Setting, j):
    """j (an int, or a word of COUNT bits) as an exponent-width word."""
    return _c(I, s, j) if isinstance(j, int) else bv.resize_u(I, j, s.ew)


COUNT = 4
"""Bits of the free count j of terms taken in a step lemma."""


PHASES = ("none", "split", "done")


def _r_bound(I, s: Setting, R, gap, j):
    """|R| <= 2^(gap+q-1) + j 2^(gap+q-b-2) (gap = K - e_cur >= b + 3),
    in W + 8 bits, true once the bound passes 2^(W-1): the split case's
    bound on D = R 2^(e_cur - low), in R's units."""
    RW = s.W + 8
    sh = I.add(gap, _c(I, s, s.q - 1))
    vacuous = _le(I, _c(I, s, s.W - 1), sh)
    jw = bv.resize_u(I, _count(I, s, j), RW)
    bound = I.add(bv.shl_by(I, I.const(1, RW), sh), bv.shl_by(I, jw, I.sub(sh, _c(I, s, s.b + 1))))
    _, mag = bv.abs_s(I, bv.resize_s(I, R, RW))
    return I.or_(vacuous, I.not_(I.ult(bound, mag)))


def _head(I, s: Setting, st: State, sc: Shift):
    return sc(st.H, I.sub(st.K, _c(I, s, s.U)))


def inv(I, s: Setting, st: State, P, e_last, j, phase: str | None = None, sc: Shift | None = None):
    """Inv_j as one Bool (only the given phase's case when ``phase``); its
    shifts of wide words by ``sc`` (the real shifts by default)."""
    sc = sc or Shift(I, s)
    W, of, b = s.W, s.of, s.b
    U = _c(I, s, s.U)
    _, hmag = bv.abs_s(I, st.H)
    h_ok = I.and_(_le(I, I.const(1 << (of + 2), W), hmag), _le(I, hmag, I.const(1 << (of + 3), W)))
    k_ok = I.and_(_le(I, I.add(e_last, _c(I, s, b + 3)), st.K), _le(I, st.K, _c(I, s, s.ehi + W)))
    e_ok = I.and_(_le(I, _c(I, s, s.elo), e_last), _le(I, e_last, _c(I, s, s.ehi)))
    cases = {}
    if phase in (None, "none"):
        cases["none"] = I.and_(I.not_(st.split), I.not_(st.done),
                               I.eq(P, reg_value(I, s, st.R, st.e_cur, sc)),
                               I.eq(st.e_cur, e_last), I.or_(bv.is_zero(I, st.R), e_ok))
    if phase in (None, "split"):
        cases["split"] = I.and_(st.split, I.not_(st.done),
                                I.eq(P, I.add(_head(I, s, st, sc), reg_value(I, s, st.R, st.e_cur, sc))),
                                I.eq(st.e_cur, e_last), e_ok, h_ok, k_ok,
                                _r_bound(I, s, st.R, I.sub(st.K, st.e_cur), j))
    if phase in (None, "done"):
        D = I.sub(P, _head(I, s, st, sc))
        jw = bv.resize_u(I, _count(I, s, j), s.SW)
        d_hi = sc(I.add(I.const(1 << (b + 1), s.SW), jw), I.sub(st.K, I.add(U, _c(I, s, b + 2))))
        d_lo = sc(I.sub(I.const(1 << (of + b + 4), s.SW), jw), I.sub(I.add(e_last, _c(I, s, 1)), U))
        sign = I.ite(st.d_neg, _le(I, D, I.neg(d_lo)), _le(I, d_lo, D))
        cases["done"] = I.and_(st.split, st.done, I.not_(bv.is_zero(I, D)),
                               I.not_(bv.xor_b(I, bv.msb(I, D), st.d_neg)), st.d_nz, e_ok,
                               _le(I, e_last, st.e_cur), h_ok, k_ok, _le(I, D, d_hi),
                               _le(I, I.neg(d_hi), D), sign)
    return cases[phase] if phase else I.or_(*cases.values())


def free_state(I, s: Setting) -> State:
    return State(I.var("R", s.W), I.var("e_cur", s.ew), I.var("split", 0), I.var("H", s.W),
                 I.var("K", s.ew), I.var("done", 0), I.var("d_neg", 0), I.var("d_nz", 0))


def free_norm(I, s: Setting, name: str = "t") -> Norm:
    return Norm(I.var(f"{name}_neg", 0), I.var(f"{name}_e", s.ew), I.var(f"{name}_M", s.q + 1),
                I.var(f"{name}_zero", 0))


def _flags(I):
    return [I.var(n, 0) for n in ("nan", "inf", "inf_sign", "neg_zeros", "pos_zeros")]


def round_sum(I, s: Setting, x: Fixed):
    """The model's final rounding of a sum."""
    p = s.p
    return datapath.round_fixed(I, x, p.fout, p.final_rounding, s.ew, p.overflow, p.zero_sign, False)


def _round(I, s: Setting, total_word, scale, flags):
    neg, mag = bv.abs_s(I, total_word)
    return round_sum(I, s, Fixed(neg, mag, scale, *flags))


# ---------------------------------------------------------------------------
# The lemmas, each a formula to be unsat
# ---------------------------------------------------------------------------

def lemma_glue(s: Setting, wide):
    """d = round_fixed(exact_sum(terms)), the register and its result as
    exact.py builds them."""
    p = s.p

    def build(I):
        a, b, c, terms = inputs(I, s)
        got = datapath.dot(I, p, a, b, c)
        ns = _sorted(I, s, terms)
        st = _run(I, s, ns)
        tot, scale = result(I, st, s.q, s.W, s.ew)
        flags = _term_flags(I, terms, wide)
        return [I.not_(I.eq(got, _round(I, s, tot, scale, flags)))]
    return build_formula(build, description="exact register: glue")


def _term_flags(I, terms, wide):
    f = wide(I, terms)
    return [f.nan, f.inf, f.inf_sign, f.neg_zeros, f.pos_zeros]


def _sorted(I, s: Setting, terms):
    return sort_steps(I, [normalise(I, t, s.q, s.ew) for t in terms])[-1]


def _run(I, s: Setting, ns):
    st = start(I, ns[0].e, s.W, s.ew)
    for t in ns:
        st = take(I, st, t, s.q, s.of, s.W, s.ew)
    return st


def bound(s: Setting) -> int:
    """B: every term's value is at most 2^B units of 2^low."""
    return s.ehi + 1 - s.low


def times(I, s: Setting, j):
    """j 2^B as a width-bit word (j an int or a COUNT-bit word)."""
    jw = I.const(j, s.width) if isinstance(j, int) else bv.resize_u(I, j, s.width)
    return I.shl(jw, I.const(bound(s), s.width))


def _norm_term(s: Setting, what: str, make):
    """One term (``make(I)``, from free inputs): normalised, its value is
    2^q times its wide value, which is at most 2^B."""
    def build(I):
        t = make(I)
        v = term_value(I, t, s.low, s.width, s.ew)
        wide = I.shl(bv.resize_s(I, v, s.Wd), I.const(s.q, s.Wd))
        same = I.eq(value(I, s, normalise(I, t, s.q, s.ew)), wide)
        return [I.not_(I.and_(same, abs_le(I, v, times(I, s, 1))))]
    return build_formula(build, description=f"exact register: norm, {what}")


def lemma_norm_c(s: Setting):
    p = s.p
    return _norm_term(s, "term c", lambda I: datapath.unpack(I, p.fc, I.var("c", p.fc.bits), s.ew, False))


def lemma_norm_ab(s: Setting):
    p = s.p

    def make(I):
        ta = datapath.unpack(I, p.fin, I.var("a", p.fin.bits), s.ew, False)
        tb = datapath.unpack(I, p.fb, I.var("b", p.fb.bits), s.ew, False)
        return datapath.multiply(I, ta, tb, p, s.ew)
    return _norm_term(s, "term ab", make)


def lemma_norm_sum(s: Setting):
    """A partial wide sum X of j < n terms and the next term t: X + t does
    not wrap (sign-extended to P's width it is the sum of the extended
    words) and stays within (j + 1) 2^B, and 2^q distributes over the sum."""
    def build(I):
        X, t, j = I.var("X", s.width), I.var("t", s.width), I.var("j", COUNT)
        hyp = [I.ult(j, I.const(s.n, COUNT)), abs_le(I, X, times(I, s, j)), abs_le(I, t, times(I, s, 1))]
        ext = lambda x: bv.resize_s(I, x, s.Wd)          # noqa: E731
        q = I.const(s.q, s.Wd)
        ok = [I.eq(ext(I.add(X, t)), I.add(ext(X), ext(t))),
              abs_le(I, I.add(X, t), times(I, s, I.add(j, I.const(1, COUNT)))),
              I.eq(I.shl(I.add(ext(X), ext(t)), q), I.add(I.shl(ext(X), q), I.shl(ext(t), q)))]
        return hyp + [I.not_(I.and_(*ok))]
    return build_formula(build, description="exact register: norm, sum")


def lemma_swap(s: Setting):
    """One compare-and-swap step of the sort (sort_steps of any two terms)
    gives its two terms back, kept or swapped, every field with its term;
    every step of the network is one such step on two adjacent terms, the
    others kept."""
    def build(I):
        x, y = free_norm(I, s, "x"), free_norm(I, s, "y")
        (_, after) = sort_steps(I, [x, y])
        kept = I.and_(_same(I, after[0], x), _same(I, after[1], y))
        swapped = I.and_(_same(I, after[0], y), _same(I, after[1], x))
        return [I.not_(I.or_(kept, swapped))]
    return build_formula(build, description="exact register: swap")


def _same(I, u: Norm, v: Norm):
    return I.and_(I.eq(u.e, v.e), I.eq(u.M, v.M), I.not_(bv.xor_b(I, u.neg, v.neg)),
                  I.not_(bv.xor_b(I, u.zero, v.zero)))


def lemma_order(s: Setting):
    def build(I):
        _, _, _, terms = inputs(I, s)
        ns = _sorted(I, s, terms)
        facts = [f for t in ns for f in shape(I, s, t)]
        for x, y in zip(ns, ns[1:]):
            facts.append(I.or_(y.zero, I.and_(I.not_(x.zero), _le(I, y.e, x.e))))
        return [I.not_(I.and_(*facts))]
    return build_formula(build, description="exact register: order")


def lemma_start(s: Setting):
    def build(I):
        e = I.var("e", s.ew)
        st = start(I, e, s.W, s.ew)
        return [I.not_(inv(I, s, st, I.const(0, s.Wd), e, 0))]
    return build_formula(build, description="exact register: start")


FREE_STEPS = (("none", "none"), ("none", "split"), ("split", "split"))
"""The step lemmas asked with the wide shifts free (``FreeShifts``): their
statements with the real shifts get no answer in 60 s at CDNA1's size."""


def lemma_step(s: Setting, phase: str, after: str, helpers: bool = True):
    """From a state in ``phase``'s case of Inv_j (any 0 <= j < n), the
    next term in shape and in order takes it to ``after``'s case of
    Inv_{j+1}. In FREE_STEPS, with the shifts free and the facts that tie
    them (``_helpers``; not with ``helpers`` false, to show they carry the
    proof)."""
    free = (phase, after) in FREE_STEPS

    def build(I):
        sc = FreeShifts(I, s) if free else Shift(I, s)
        st, t, P, e_last = free_state(I, s), free_norm(I, s), I.var("P", s.Wd), I.var("e_last", s.ew)
        j = I.var("j", COUNT)
        hyp = [I.ult(j, I.const(s.n, COUNT)), inv(I, s, st, P, e_last, j, phase, sc)] + shape(I, s, t)
        hyp.append(I.or_(t.zero, _le(I, t.e, e_last)))
        st2 = take(I, st, t, s.q, s.of, s.W, s.ew)
        e2 = I.ite(t.zero, e_last, t.e)
        lands = {"none": I.not_(st2.split), "split": I.and_(st2.split, I.not_(st2.done)),
                 "done": st2.done}[after]
        j2 = I.add(j, I.const(1, COUNT))
        goal = I.not_(inv(I, s, st2, I.add(P, value(I, s, t, sc)), e2, j2, after, sc))
        if isinstance(sc, FreeShifts):
            if helpers:
                _helpers(I, s, sc, st, t, phase, after)
            hyp += sc.facts()
        return hyp + [lands, goal]
    return build_formula(build, description=f"exact register: step, {phase} -> {after}")


def _helpers(I, s: Setting, sc: FreeShifts, st: State, t: Norm, phase: str, after: str) -> None:
    """The applications and fact instances a free step needs: the term's
    value sc(T) and the register after it, B = sc(R1 2^delta at t's unit),
    with B + T one application (sum) and B ordered against the register's
    value before the step (R at e_cur, or, split now, its low part, with
    the cut's head ordered against R - low)."""
    at = I.sub(t.e, _c(I, s, s.low))
    ecl = I.sub(st.e_cur, _c(I, s, s.low))
    delta = I.sub(st.e_cur, t.e)
    live = I.and_(I.not_(t.zero), I.not_(st.done))
    split_now = I.and_(live, I.not_(st.split), dominates(I, st.R, delta, s.W, s.ew))
    Hc, Kc, low = cut(I, st.R, st.e_cur, s.q, s.of, s.W, s.ew)
    T = sc.app(*term_shift(I, s, t))
    before = sc.app(st.R, ecl)
    if phase == "none" and after != "none":
        ext = lambda w: bv.resize_s(I, w, s.SW)              # noqa: E731
        lo = sc.app(low, ecl)
        rest = sc.app(I.sub(ext(st.R), ext(low)), ecl)
        sc.sum(rest, lo)
        sc.order(rest, sc.app(Hc, I.sub(Kc, _c(I, s, s.U))))
        before = lo
    B = sc.app(bv.shl_by(I, I.ite(split_now, low, st.R), delta), at)
    sc.order(before, B)
    sc.sum(B, T)


def steps(s: Setting) -> list:
    return [lemma_step(s, ph, to) for ph in PHASES for to in PHASES]


def lemma_final(s: Setting, case: tuple | None = None):
    """A state meeting Inv_n rounds as P does; with ``case`` (one of
    ``final_cases``), only the states of that case."""
    def build(I):
        st, P, e_last, flags = free_state(I, s), I.var("P", s.Wd), I.var("e_last", s.ew), _flags(I)
        tot, scale = result(I, st, s.q, s.W, s.ew)
        want = _round(I, s, P, _c(I, s, s.U), flags)
        hyp = [inv(I, s, st, P, e_last, s.n, case[0] if case else None)]
        if case:
            phase, name, lo, hi, at = case
            x = st.e_cur if name == "e_cur" else st.K
            inside = I.and_(_le(I, _c(I, s, lo), x), _le(I, x, _c(I, s, hi)))
            hyp.append(I.eq(x, _c(I, s, at)) if at is not None else I.not_(inside))
        return hyp + [I.not_(I.eq(_round(I, s, tot, scale, flags), want))]
    what = "final" if case is None else final_case_name(case)
    return build_formula(build, description=f"exact register: {what}")


FINAL = "exact register: final"


def final_cases(s: Setting) -> list[tuple]:
    """The final lemma split into cases, for a solver that gets no answer
    on it whole (a shift of the wide P by a free exponent): each phase of
    Inv_n, and in it each value of the exponent that places the result
    (e_cur when not split, K once split) over the range Inv_n allows, then
    the values outside it (not split: R = 0; split: none, as K >= e_last
    + b + 3 >= elo + b + 3 and K <= ehi + W). The phases cover Inv_n and a
    phase's cases cover every value of the word, so the lemma holds when
    every case does. Each case: (phase, exponent's name, lo, hi, the value
    or None for outside [lo, hi])."""
    out: list[tuple] = []
    for phase, name, lo, hi in (("none", "e_cur", s.elo, s.ehi),
                                ("split", "K", s.elo + s.b + 3, s.ehi + s.W),
                                ("done", "K", s.elo + s.b + 3, s.ehi + s.W)):
        out += [(phase, name, lo, hi, v) for v in range(lo, hi + 1)] + [(phase, name, lo, hi, None)]
    return out


def final_case_name(case: tuple) -> str:
    phase, name, lo, hi, at = case
    where = f"= {at}" if at is not None else f"outside [{lo}, {hi}]"
    return f"final, {phase}, {name} {where}"


def lemma_value(s: Setting):
    def build(I):
        P, S, flags = I.var("P", s.Wd), I.var("S", s.width), _flags(I)
        same = I.eq(P, I.shl(bv.resize_s(I, S, s.Wd), I.const(s.q, s.Wd)))
        hyp = I.or_(flags[0], flags[1], same)
        got = _round(I, s, P, _c(I, s, s.U), flags)
        return [hyp, I.not_(I.eq(got, _round(I, s, S, _c(I, s, s.low), flags)))]
    return build_formula(build, description="exact register: value")


def lemma_names() -> list[str]:
    """The lemmas' descriptions, in the order of ``lemmas``, without building them."""
    shared_ = ["norm, term c", "norm, term ab", "norm, sum", "swap", "order", "start"]
    shared_ += [f"shift fact, {n}" for n in FACTS]
    shared_ += [f"step, {ph} -> {to}" for ph in PHASES for to in PHASES]
    return [f"exact register: {n}" for n in shared_ + ["glue", "final", "value"]]


def lemmas(s: Setting, wide) -> list:
    return shared(s) + rounding(s, wide)


def shared(s: Setting) -> list:
    """The lemmas that do not read the rounding mode (the same formulas
    for every mode)."""
    return [lemma_norm_c(s), lemma_norm_ab(s), lemma_norm_sum(s), lemma_swap(s), lemma_order(s),
            lemma_start(s), *[lemma_fact(s, n) for n in FACTS], *steps(s)]


def rounding(s: Setting, wide) -> list:
    """The lemmas that read the model's rounding mode."""
    return [lemma_glue(s, wide), lemma_final(s), lemma_value(s)]
