"""The exact sum of a block's terms (align_rounding = "exact"), in words of
bounded width, for one rounding of the exact value (AMD CDNA1).

The exact sum of fp16 products and an fp32 c spans about 280 bits, yet
rounding it needs only the bits near its leading one and the sign of the
rest. The terms are taken in decreasing order of their leading ones, and
one register of W bits holds the exact partial sum, in units of the
current term's last bit, as long as it fits:

* A term whose bits would push the partial sum P out of the register
  meets a P that dominates every term still to come: |P| >= 2^(W-2) units
  of 2^(e-q) (e the term's leading-one exponent, q the fraction bits of a
  normalised term), while the n terms left sum to less than n 2^(e+1).
  Then P is cut (rounded half up) at K = msb(P) - out_frac - 2 into a head
  H, a multiple of 2^K that is kept aside, and a low part in
  [-2^(K-1), 2^(K-1)) that stays in the register. The sum S = H + D with
  D = low part + the rest, |D| < 2^K; every rounding boundary and midpoint
  of S lies on a multiple of 2^(K+1) (S keeps msb(P) - 1 as its leading
  one at least), so H + sign(D) 2^(K-1) rounds exactly as S does.
* The register then sums D exactly, term after term, until D dominates
  the rest in its turn (at once, when the low part lies far above the
  next term); then only its sign and whether it is non-zero are needed,
  and both are final.

So W = q + out_frac + ceil(log2 n) + 6 bits suffice; the register has
one more (56 bits for four fp16 products and an fp32 c), where one for
the whole exact sum would need hundreds. tests/test_exact_sum.py checks the result against exact
rational arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tcsmt.datapath import bv
from tcsmt.datapath.register import sum_flags
from tcsmt.datapath.terms import Fixed, Term, is_dead, lead_exp


def register_bits(q: int, out_frac: int, n: int) -> int:
    """W: the register width that makes the sum of n terms (q fraction bits
    each, normalised) exact for an output with out_frac fraction bits."""
    return q + out_frac + bv.bits_for(max(n - 1, 1)) + 7


@dataclass(frozen=True)
class Norm:
    """A term normalised: value (-1)^neg * M * 2^(e - q), M's top bit set
    (M = 0 and e lowest for a zero term)."""
    neg: object
    e: object
    M: object
    zero: object


def normalise(I, t: Term, q: int, ew: int) -> Norm:
    """A term with its leading one at bit q of a (q+1)-bit word."""
    sig = bv.resize_u(I, t.sig, q + 1)
    zero = is_dead(I, t)
    lowest = bv.sconst(I, -(1 << (ew - 2)), ew)
    e = I.ite(zero, lowest, lead_exp(I, replace(t, sig=sig), ew))
    M = I.shl(sig, bv.resize_u(I, bv.clz(I, sig), q + 1))
    return Norm(t.sign, e, I.ite(zero, I.const(0, q + 1), M), zero)


def sort_down(I, ns: list[Norm]) -> list[Norm]:
    """The terms in decreasing order of their leading-one exponents, by a
    network of compare-and-swap steps (zero terms last)."""
    return sort_steps(I, ns)[-1]


def sort_steps(I, ns: list[Norm]) -> list[list[Norm]]:
    """The terms before the network and after each compare-and-swap step
    of sort_down (a proof follows the sum through them)."""
    ns = list(ns)
    out = [list(ns)]
    for i in range(len(ns)):
        for j in range(len(ns) - 1 - i):
            x, y = ns[j], ns[j + 1]
            swap = I.slt(x.e, y.e)
            ns[j], ns[j + 1] = _pick(I, swap, y, x), _pick(I, swap, x, y)
            out.append(list(ns))
    return out


def _pick(I, c, x: Norm, y: Norm) -> Norm:
    return Norm(I.ite(c, x.neg, y.neg), I.ite(c, x.e, y.e), I.ite(c, x.M, y.M),
                I.ite(c, x.zero, y.zero))


@dataclass(frozen=True)
class State:
    R: object        # signed W-bit register, units of 2^(e_cur - q)
    e_cur: object    # leading-one exponent of the last term taken
    split: object    # Bool: the head H is set aside, R holds the low part D
    H: object        # signed W-bit head, units of 2^K
    K: object        # exponent of H's unit
    done: object     # Bool: D dominates the rest: its sign is final
    d_neg: object    # the sign of D, once done
    d_nz: object     # whether D is non-zero, once done


def dominates(I, R, delta, W: int, ew: int):
    """Whether |R| << delta reaches 2^(W-2): R would leave the register."""
    _, mag = bv.abs_s(I, R)
    room = I.sub(I.const(W - 2, ew), delta)            # W-2-delta, signed
    none_left = I.slt(room, I.const(1, ew))
    return I.and_(I.not_(bv.is_zero(I, mag)),
                  I.or_(none_left, I.not_(bv.is_zero(I, bv.lshr_by(I, mag, room)))))


def cut(I, R, e_cur, q: int, out_frac: int, W: int, ew: int):
    """(H, K, low part) of P = R 2^(e_cur-q): H a multiple of 2^K (in units
    of 2^K), K = msb(P) - out_frac - 2, low = P - H (in R's units)."""
    Rw = bv.resize_s(I, R, W + 1)
    _, mag = bv.abs_s(I, Rw)
    top = I.sub(I.const(W, ew), bv.resize_u(I, bv.clz(I, mag), ew))   # index of P's leading one in R
    s = I.sub(top, I.const(out_frac + 2, ew))           # K - (e_cur - q)
    K = I.add(I.sub(e_cur, I.const(q, ew)), s)
    pos = I.slt(I.const(0, ew), s)
    s_pos = I.ite(pos, s, I.const(0, ew))
    s_neg = I.ite(pos, I.const(0, ew), I.neg(s))
    half = I.ite(pos, bv.shl_by(I, I.const(1, W + 1), I.sub(s_pos, I.const(1, ew))),
                 I.const(0, W + 1))
    up = bv.resize_u(I, s_pos, W + 1)
    H = I.ashr(I.add(Rw, half), up)
    low = I.sub(Rw, I.shl(H, up))
    H = I.ite(pos, H, bv.shl_by(I, Rw, s_neg))
    return bv.resize_s(I, H, W), K, bv.resize_s(I, I.ite(pos, low, I.const(0, W + 1)), W)


def take(I, st: State, t: Norm, q: int, out_frac: int, W: int, ew: int) -> State:
    """The state after one more term (in decreasing order)."""
    delta = I.sub(st.e_cur, t.e)
    live = I.and_(I.not_(t.zero), I.not_(st.done))
    split_now = I.and_(live, I.not_(st.split), dominates(I, st.R, delta, W, ew))
    H, K, low = cut(I, st.R, st.e_cur, q, out_frac, W, ew)
    R = I.ite(split_now, low, st.R)
    # D (the low part, or what the register summed since) dominates in its turn
    done_now = I.and_(live, I.or_(st.split, split_now), dominates(I, R, delta, W, ew))
    d_neg, d_nz = bv.msb(I, R), I.not_(bv.is_zero(I, R))
    step = I.and_(live, I.not_(done_now))
    M = bv.resize_u(I, t.M, W)
    added = I.add(bv.shl_by(I, R, delta), bv.neg_if(I, t.neg, M))
    return State(I.ite(step, added, R), I.ite(step, t.e, st.e_cur),
                 I.or_(st.split, split_now), I.ite(split_now, H, st.H), I.ite(split_now, K, st.K),
                 I.or_(st.done, done_now), I.ite(done_now, d_neg, st.d_neg),
                 I.ite(done_now, d_nz, st.d_nz))


def start(I, e_first, W: int, ew: int) -> State:
    """The state before the first term: an empty register at the first
    (largest) term's exponent."""
    false, zero_w = I.bool_const(False), I.const(0, W)
    return State(zero_w, e_first, false, zero_w, I.const(0, ew), false, false, false)


def result(I, st: State, q: int, W: int, ew: int):
    """(signed (W+1)-bit total, scale) after the last term: the register,
    or once split the head H with D's sign in the bit below it."""
    d_neg = I.ite(st.done, st.d_neg, bv.msb(I, st.R))
    d_nz = I.ite(st.done, st.d_nz, I.not_(bv.is_zero(I, st.R)))
    H2 = I.shl(bv.resize_s(I, st.H, W + 1), I.const(1, W + 1))
    tail = I.ite(d_nz, I.ite(d_neg, bv.ones(I, W + 1), I.const(1, W + 1)), I.const(0, W + 1))
    head = I.add(H2, tail)
    total = I.ite(st.split, head, bv.resize_s(I, st.R, W + 1))
    scale = I.ite(st.split, I.sub(st.K, I.const(1, ew)), I.sub(st.e_cur, I.const(q, ew)))
    return total, scale


def exact_sum(I, terms: list[Term], out_frac: int, ew: int, trace=None) -> Fixed:
    """The exact sum of the terms as a Fixed that rounds (to out_frac
    fraction bits, any mode) exactly as the exact sum does."""
    q = max(I.width(t.sig) for t in terms) - 1
    W = register_bits(q, out_frac, len(terms))
    ns = sort_down(I, [normalise(I, t, q, ew) for t in terms])
    st = start(I, ns[0].e, W, ew)
    for t in ns:
        st = take(I, st, t, q, out_frac, W, ew)
    total, scale = result(I, st, q, W, ew)
    neg, mag = bv.abs_s(I, total)
    flags = sum_flags(I, terms)
    if trace is not None:
        trace.append(("exact sum", total, "signed"))
    return Fixed(neg, mag, scale, *flags)
