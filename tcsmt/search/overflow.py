"""Whether a block's sum can leave a register of a few carry bits, and the
proof, whole or in parts.

The question (``overflow_formula``): some finite input makes the block's
raw sum (the unbounded accumulator's, which is exact) fall outside
[-2^top, 2^top), top = int bits + carry + fraction bits of the register.

The proof in parts, as one would argue by hand: the raw sum is the sum,
in the register's words, of the block's aligned terms x_0 .. x_{n-1} (c and
the products or groups). So it stays inside when

* each term is bounded: |x_i| <= A_i on every finite input (one lemma per
  term, ``term_formula``: its datapath alone, UNSAT of |x_i| > A_i), and
* any words within those bounds sum to something inside (``sum_formula``:
  the same additions, one step at a time, UNSAT of a step leaving its
  bound or the last sum leaving the register).

Every part is a formula a solver proves (each cross-checked by a second),
and none holds the whole sum of many multiplied, shifted products: on
NVFP4's 64 products in 4 scaled groups each part takes a second where the
whole question took Bitwuzla 15 s and Z3 and cvc5 more than 2 minutes.
The bounds A_i come from the largest inputs (each term's magnitude on
them, concrete) plus an equal share of the room left; a bound that does
not hold (its lemma is SAT) means the parts cannot prove this count, and
the whole question is asked instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tcsmt import datapath
from tcsmt.datapath import bv
from tcsmt.interp.ints import INT, IntWord
from tcsmt.model.overrides import apply_overrides
from tcsmt.model.params import ModelParams
from tcsmt.search import separation as sep
from tcsmt.search.domain import Domain
from tcsmt.smt.smtlib import Formula, build_formula


@dataclass(frozen=True)
class Register:
    """One block register's layout: fraction bits, int bits of the largest
    term, word width, and how many aligned terms it adds."""
    frac: int
    int_bits: int
    width: int
    terms: int

    def top(self, carry: int) -> int:
        """A register with ``carry`` carry bits holds [-2^top, 2^top)."""
        return self.int_bits + carry + self.frac


def registers(trace: list) -> list[tuple[Register, list, Any]]:
    """(layout, aligned terms, raw sum) of every register a datapath trace
    went through, in order."""
    out, terms = [], []
    for name, x, _ in trace:
        if name.startswith("aligned term"):
            terms.append(x)
        elif name == "raw sum":
            total = x
        elif name == "register":
            rl, ib, _ = x
            out.append((terms, rl, ib, total))
            terms = []
    return [(Register(rl, ib, _width(total), len(ts)), ts, total) for ts, rl, ib, total in out]


def _width(x) -> int:
    return x.w if isinstance(x, IntWord) else x.width       # an IntWord, or an SmtTerm


def _unbounded(p: ModelParams) -> ModelParams:
    return apply_overrides(p, ["carry_bits=unbounded"])


def _trace(I, p: ModelParams, k: int, domain: Domain):
    """The constraints on the free inputs and the unbounded datapath's trace."""
    a, b, c = sep.declare_inputs(I, p, k)
    sa, sb = sep.declare_scales(I, p, k)
    out = domain.constraints(I, p.fin, p.fc, a, b, c, p.fb)
    out += sep.scale_constraints(I, p, domain, sa, sb)
    trace: list = []
    datapath.dot(I, _unbounded(p), a, b, c, trace=trace, sa=sa, sb=sb)
    return out, trace


def outside(I, total, top: int):
    """The signed word ``total`` lies outside [-2^top, 2^top) (always false
    when the word is too narrow to)."""
    w = I.width(total)
    if top >= w - 1:
        return I.bool_const(False)
    hi = I.const(1 << top, w)
    return I.not_(I.and_(I.sle(I.neg(hi), total), I.slt(total, hi)))


def overflow_formula(p: ModelParams, k: int, carry: int, domain: Domain) -> Formula:
    """Satisfiable when some input's block sum does not fit a register with
    ``carry`` carry bits (the sum taken from the unbounded accumulator)."""
    def build(I):
        out, trace = _trace(I, p, k, domain)
        overflows = [outside(I, total, reg.top(carry)) for reg, _, total in registers(trace)]
        return out + [I.or_(*overflows) if overflows else I.bool_const(False)]

    return build_formula(build, description=f"tcsmt prove carry-bits {p.name}: a block sum "
                                            f"outside a {carry}-carry-bit register (k={k})")


def magnitude(I, x):
    """|x| of a signed word, one bit wider (|-2^(w-1)| fits)."""
    neg, mag = bv.abs_s(I, bv.resize_s(I, x, I.width(x) + 1))
    return mag


def term_formula(p: ModelParams, k: int, i: int, bound: int, domain: Domain) -> Formula:
    """Satisfiable when some input gives the block's aligned term i a
    magnitude above ``bound`` (the model's only register)."""
    def build(I):
        out, trace = _trace(I, p, k, domain)
        [(reg, terms, _)] = registers(trace)
        mag = magnitude(I, terms[i])
        return out + [I.ult(I.const(bound, I.width(mag)), mag)]

    return build_formula(build, description=f"tcsmt prove carry-bits {p.name}: aligned term {i} "
                                            f"of the block above {bound} (k={k})")


def sum_formula(reg: Register, bounds: list[int], carry: int, name: str) -> Formula:
    """Satisfiable when adding words x_i with |x_i| <= bounds[i], one
    after another as the register does, can leave a ``carry``-carry-bit
    register: by induction over the terms, one step at a time. Step i
    adds a word s with |s| <= S_{i-1} (the sum so far, S_0 = bounds[0])
    and x_i, and fails if |s + x_i| > S_i = S_{i-1} + bounds[i] in the
    register's word (a wrap fails too); the last sum fails if it leaves
    [-2^top, 2^top). Every step has its own free words: each is a small
    question (a whole chain of additions is a hard one for the solvers)."""
    def build(I):
        w = reg.width
        fails, so_far = [], bounds[0]
        for i, a in enumerate(bounds[1:], 1):
            s, x = I.var(f"s{i}", w), I.var(f"x{i}", w)
            fails.append(I.and_(*_within(I, s, so_far, w), *_within(I, x, a, w),
                                I.not_(I.and_(*_within(I, I.add(s, x), so_far + a, w)))))
            so_far += a
        t = I.var("total", w)
        fails.append(I.and_(*_within(I, t, so_far, w), outside(I, t, reg.top(carry))))
        return [I.or_(*fails)]

    return build_formula(build, description=f"tcsmt prove carry-bits {name}: {reg.terms} terms within "
                                            f"their bounds outside a {carry}-carry-bit register")


def _within(I, x, bound: int, w: int) -> list:
    """-bound <= x <= bound for a signed w-bit word (bound < 2^(w-1))."""
    lim = I.const(bound, w)
    return [I.sle(I.neg(lim), x), I.sle(x, lim)]


# ---------------------------------------------------------------------------
# Concrete: the register, and each term's magnitude on the largest inputs
# ---------------------------------------------------------------------------

def largest_inputs(p: ModelParams, k: int) -> list[tuple]:
    """(a, b, c, sa, sb) bit patterns: every product as large as the
    formats allow (c = +0), and c as large as it can be (products +0);
    the scales their largest."""
    big_a, big_b, big_c = (f.max_finite_bits(0) for f in (p.fin, p.fb, p.fc))
    s = [p.scaling()[0].max_finite_bits(0)] * p.scale_count(k) if p.scale_format else None
    return [([big_a] * k, [big_b] * k, 0, s, s), ([0] * k, [0] * k, big_c, s, s)]


def concrete_registers(p: ModelParams, k: int, vec: tuple) -> list[tuple[Register, list[int], int]]:
    """(layout, aligned terms, raw sum) as signed ints on one input."""
    a, b, c, sa, sb = vec
    w = lambda v, f: IntWord(v, f.bits)  # noqa: E731
    trace: list = []
    datapath.dot(INT, _unbounded(p), [w(x, p.fin) for x in a], [w(y, p.fb) for y in b], w(c, p.fc),
                 trace=trace, sa=sa and [w(x, p.fscale) for x in sa], sb=sb and [w(y, p.fscale) for y in sb])
    return [(reg, [_signed(t) for t in ts], _signed(total)) for reg, ts, total in registers(trace)]


def _signed(x: IntWord) -> int:
    return x.v - (1 << x.w) if x.v >> (x.w - 1) else x.v


@dataclass
class Estimate:
    """What the largest inputs say: the one register (None: several, the
    parts do not apply), each term's largest magnitude on them, and the
    fewest carry bits with which none of them overflows."""
    register: Register | None
    largest: list[int]
    fewest_seen: int
    overflowing: tuple | None        # an input overflowing fewest_seen - 1 carry bits

    def bounds(self, carry: int) -> list[int] | None:
        """Bounds A_i: each term's largest magnitude seen plus an equal
        share of the room a ``carry``-carry-bit register leaves (None when
        no room is left). When the largest inputs leave some terms at zero
        (they do not exercise them: sf-tensor's c-dominant groups of 16
        products are zero unless c is non-zero and at least every
        product), nothing estimates those terms' size and a tight bound is
        what makes their parts hard (NVFP4 sf-tensor's c-dominant group:
        Bitwuzla 2.7 CPU s at 2^48.6, 1.6 s at 2^50, 0.4 s at 2^51): the
        terms seen get 2^n - 1 with 2^n at least 2^SLACK_BITS times their
        largest (a check of their high bits, which the solvers settle in
        a fraction of a second), and the unseen ones share the rest,
        when that leaves them more than the equal share."""
        if self.register is None:
            return None
        limit = (1 << self.register.top(carry)) - 1
        room = limit - sum(self.largest)
        if room < 0:
            return None
        equal = [m + room // len(self.largest) for m in self.largest]
        unseen = [i for i, m in enumerate(self.largest) if m == 0]
        if not unseen:
            return equal
        seen = [(1 << (m.bit_length() + SLACK_BITS)) - 1 if m else 0 for m in self.largest]
        rest = (limit - sum(seen)) // len(unseen)
        if rest <= equal[unseen[0]]:
            return equal
        return [b if m else rest for b, m in zip(seen, self.largest)]


SLACK_BITS = 4
"""Where some terms are unseen: the terms seen are bounded by 2^n - 1, 2^n at
least 2^SLACK_BITS times the largest magnitude seen."""


def _out(reg: Register, total: int, carry: int) -> bool:
    return not -(1 << reg.top(carry)) <= total < 1 << reg.top(carry)


def estimate(p: ModelParams, k: int, max_carry: int) -> Estimate:
    """Each term's magnitude on the largest inputs, and the fewest carry
    bits with which none of their registers overflows."""
    vecs = largest_inputs(p, k)
    regs = [concrete_registers(p, k, v) for v in vecs]
    fewest, over = max_carry, None
    for carry in range(max_carry + 1):
        bad = next((v for v, rs in zip(vecs, regs) if any(_out(reg, total, carry) for reg, _, total in rs)),
                   None)
        if bad is None:
            fewest = carry
            break
        over = bad
    if len(regs[0]) != 1:
        return Estimate(None, [], fewest, over)
    reg = regs[0][0][0]
    largest = [max(abs(rs[0][1][i]) for rs in regs) for i in range(reg.terms)]
    return Estimate(reg, largest, fewest, over)
