"""The block's register: terms aligned to the largest exponent, truncated
or rounded to F fraction bits, and summed with a number of carry bits."""

from __future__ import annotations

from typing import Literal

from tcsmt.datapath import bv
from tcsmt.datapath.stage import stage
from tcsmt.datapath.terms import Fixed, Term, align_exp, is_dead, term_int_bits
from tcsmt.model.params import ModelParams

UNBOUNDED_SPARE = 2


def guard_bits(F: int, frac: int, mode: str) -> int:
    """Extra register bits below F for IEEE alignment rounding: enough that
    the largest term is never cut (its ``frac`` bits fit) plus guard, round
    and sticky. None for truncation and floor."""
    if mode in ("truncate", "floor", "ones"):
        return 0
    return max(0, frac - F) + 3


def alignment_point(I, terms: list[Term], ew: int, floor: int | None):
    """The largest alignment exponent among the live terms, raised to
    ``floor`` if given. Zero terms do not take part (see is_dead)."""
    lowest = bv.sconst(I, -(1 << (ew - 2)), ew)
    e_max = lowest
    for t in terms:
        e = I.ite(is_dead(I, t), lowest, align_exp(I, t, ew))
        e_max = bv.smax(I, e_max, e)
    if floor is not None:
        e_max = bv.smax(I, e_max, bv.sconst(I, floor, ew))
    return e_max


def align(I, t: Term, e_max, keep: int, rl: int, rw: int, mode: str, ew: int,
          frame=None, tiny_floor=None):
    """Term -> signed rw-bit word in units of 2**(e_max - rl).

    The term keeps ``keep`` fraction bits below ``e_max`` (keep <= rl); the
    bits below are dropped toward zero ("truncate"), or OR-ed into the last
    kept bit as a sticky bit (IEEE modes), or rounded toward minus infinity
    ("floor"; with ``tiny_floor`` given, a term of which nothing is kept
    takes the unit below zero only where that Bool holds), or dropped
    toward zero with one unit more where the term's sign differs from the
    Bool ``frame`` ("ones", zero terms too). Invariant: |result| <
    2**(int bits + rl).
    """
    d0 = t.frac + 1 if t.lead else 0           # how far exp may exceed e_max
    l0 = keep - t.frac + d0                    # static left shift
    lpos, lneg = max(0, l0), max(0, -l0)
    if I.width(t.sig) + lpos > NARROW_WORD:
        mag, lost = _shift_two_way(I, t, e_max, lpos, d0 + lneg, rw, ew)
    else:
        x = I.concat(t.sig, I.const(0, lpos)) if lpos else t.sig
        # dynamic right shift: (e_max - exp) + d0 + lneg, >= 0 for non-zero terms
        amount = I.add(I.sub(e_max, t.exp), I.const(d0 + lneg, ew))
        mag = bv.resize_u(I, bv.lshr_by(I, x, amount), rw)
        lost = bv.shifted_out(I, x, amount) if mode not in ("truncate", "ones") else None
    one = I.const(1, rw)
    if mode == "ones":
        opposed = I.not_(I.eq(bv.from_bool(I, t.sign), bv.from_bool(I, frame)))
        mag = I.ite(opposed, I.add(mag, one), mag)
    elif mode == "floor":
        down = I.and_(lost, t.sign)
        if tiny_floor is not None:
            down = I.and_(down, I.or_(tiny_floor, I.not_(bv.is_zero(I, mag))))
        mag = I.ite(down, I.add(mag, one), mag)
    elif mode != "truncate":
        mag = I.ite(lost, I.bvor(mag, one), mag)
    if rl > keep:
        mag = I.shl(mag, I.const(rl - keep, rw))
    return bv.neg_if(I, t.sign, mag)


NARROW_WORD = 64
"""The widest word ``align`` builds for its one-shift form (a significand
padded with the static left shift, shifted right once: 98 bits for an
fp32 x fp32 product aligned by its leading one); wider ones take the
two-way form, whose words are the register's or the significand's width
(the batch interpreter's words are 64 bits)."""


def _shift_two_way(I, t: Term, e_max, lpos: int, bias: int, rw: int, ew: int):
    """(sig << lpos) >> ((e_max - exp) + bias), low rw bits, and whether a
    one bit was shifted out, without the padded word: the significand
    shifted right by the difference when it is positive, else left."""
    w = max(I.width(t.sig), rw)
    x = bv.resize_u(I, t.sig, w)
    sh = I.sub(I.add(I.sub(e_max, t.exp), I.const(bias, ew)), I.const(lpos, ew))
    right = I.slt(I.const(0, ew), sh)
    y = I.ite(right, bv.lshr_by(I, x, sh), bv.shl_by(I, x, I.neg(sh)))
    lost = I.and_(right, bv.shifted_out(I, x, sh))
    return bv.resize_u(I, y, rw), lost


def specials(I, terms: list[Term]):
    """(nan, inf, sign of the infinity) of a sum of terms."""
    pos_inf = bv.any_(I, [I.and_(t.inf, I.not_(t.sign)) for t in terms])
    neg_inf = bv.any_(I, [I.and_(t.inf, t.sign) for t in terms])
    nan = I.or_(bv.any_(I, [t.nan for t in terms]), I.and_(pos_inf, neg_inf))
    return nan, I.or_(pos_inf, neg_inf), neg_inf


def sum_flags(I, terms: list[Term]) -> tuple:
    """(nan, inf, inf_sign, neg_zeros, pos_zeros) of a sum of terms: its
    specials, and whether every term was -0 (every term +0), which give a
    zero sum its sign."""
    nan, inf, inf_sign = specials(I, terms)
    neg_zeros = bv.all_(I, [I.and_(t.sign, bv.is_zero(I, t.sig)) for t in terms])
    pos_zeros = bv.all_(I, [I.and_(I.not_(t.sign), bv.is_zero(I, t.sig)) for t in terms])
    return nan, inf, inf_sign, neg_zeros, pos_zeros


@stage(params=0)
def block_sum(I, p: ModelParams, terms: list[Term], ew: int, F: int, mode: str,
              floor: int | None, keeps: list[int] | None = None, trace=None,
              carry: Literal["model"] | int | None = "model", point=None, frame=None,
              c_tiny: int | None = None) -> Fixed:
    """Align every term to the largest exponent (or to ``point``, a word no
    live term's exponent exceeds), keep F fraction bits (plus guard bits in
    IEEE modes), add them in a register with ``carry`` integer bits above
    the largest term (p.carry_bits by default; None: enough never to
    overflow), and return the signed sum. ``frame``: the sign the "ones"
    mode counts against; ``c_tiny``: in "floor" mode the first term (c)
    takes the unit below zero when nothing of it is kept only if the last
    kept place is at most 2**c_tiny."""
    g = max(guard_bits(F, t.frac, mode) for t in terms)
    keeps = keeps or [F + g] * len(terms)
    rl = max(keeps)
    ib = max(term_int_bits(I, t) for t in terms)
    bits = p.carry_bits if isinstance(carry, str) else carry
    if bits is None:
        # |sum| < len(terms) * 2**ib: bits_for(len(terms)) more bits hold it;
        # UNBOUNDED_SPARE more make "unbounded" differ from every count a
        # query compares it with, so equality needs a real proof
        ri = ib + bv.bits_for(len(terms)) + UNBOUNDED_SPARE + (1 if mode in ("floor", "ones") else 0)
    else:
        ri = ib + bits
    rw = 1 + ri + rl
    e_max = alignment_point(I, terms, ew, floor) if point is None else point
    tiny = None
    if c_tiny is not None:
        tiny = I.sle(I.sub(e_max, I.const(rl, ew)), bv.sconst(I, c_tiny, ew))
    aligned = [align(I, t, e_max, k, rl, rw, mode, ew, frame, tiny if i == 0 else None)
               for i, (t, k) in enumerate(zip(terms, keeps))]
    total = aligned[0]
    for x in aligned[1:]:
        total = I.add(total, x)
    neg, mag = bv.abs_s(I, total)
    scale = I.sub(e_max, I.const(rl, ew))
    flags = sum_flags(I, terms)
    if trace is not None:
        trace.append(("alignment point", e_max, "signed"))
        for i, x in enumerate(aligned):
            trace.append((f"aligned term {i}", x, f"fixed:{rl}"))
        trace.append(("raw sum", total, f"fixed:{rl}"))
        trace.append(("register", (rl, ib, ri), "layout"))
    return Fixed(neg, mag, scale, *flags)
