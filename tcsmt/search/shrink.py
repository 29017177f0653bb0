"""Readable witnesses: a solver's vector made simpler on the concrete model.

Solver models look random: every input non-zero, every significand full of
bits. ``shrink`` simplifies a vector the way the shrinking of
property-based testing does, greedily, one input at a time: drop a product
(a = b = +0), set c to +0, make a value positive, then keep fewer
significant bits (the fraction truncated to 0, 1, 2, ... bits, so a value
becomes a power of two or 1 + 2^-k where it can). A change is kept only
when the vector still lies in the domain and the concrete model, run under
every hypothesis, still separates every pair it must; so the result is as
good a witness as the solver's, checked the same way.
"""

from __future__ import annotations

from dataclasses import replace

from tcsmt.model.formats import Format
from tcsmt.search.domain import Domain
from tcsmt.search.vectors import Hypothesis, Vector, outputs

MAX_EVALUATIONS = 600          # concrete runs of the hypotheses, at most


def significant_bits(fmt: Format, bits: int) -> int:
    """Fraction bits down to the lowest one (0 for a power of two)."""
    frac = bits & ((1 << fmt.frac_bits) - 1)
    if frac == 0:
        return 0
    return fmt.frac_bits - ((frac & -frac).bit_length() - 1)


def truncated(fmt: Format, bits: int, keep: int) -> int:
    """bits with the fraction cut to its top ``keep`` bits."""
    drop = fmt.frac_bits - keep
    return bits & ~((1 << drop) - 1) if drop > 0 else bits


def simpler(fmt: Format, bits: int) -> list[int]:
    """Candidate replacements for one value, simplest first."""
    if fmt.is_integer:
        return simpler_int(fmt, bits)
    out = []
    sign = 1 << (fmt.bits - 1)
    if bits & sign and fmt.classify(bits & ~sign) not in ("nan",):
        out.append(bits & ~sign)
    have = significant_bits(fmt, bits)
    out += [truncated(fmt, bits, keep) for keep in range(have)]
    return [x for x in out if x != bits]


def simpler_int(fmt, bits: int) -> list[int]:
    """An integer's replacements: its magnitude (for a negative one that
    has a positive twin), then the magnitude cut to its top 1, 2, ...
    significant bits, the sign kept."""
    v = fmt.int_value(bits)
    out = [-v] if v < 0 and -v <= fmt.highest else []
    n = abs(v).bit_length()
    for keep in range(1, n):
        cut = abs(v) >> (n - keep) << (n - keep)
        out.append(-cut if v < 0 else cut)
    return [fmt.encode(x) for x in out if x != v and fmt.lowest <= x <= fmt.highest]


def shrink(vec: Vector, hyps: list[Hypothesis], pairs: list[tuple[int, int]],
           domain: Domain, budget: int = MAX_EVALUATIONS) -> Vector:
    """A simpler vector that still separates every pair in ``pairs``."""
    p = hyps[0].params
    used = sorted({i for pr in pairs for i in pr})
    sub = [hyps[i] for i in used]
    where = {i: n for n, i in enumerate(used)}
    need = [(where[i], where[j]) for i, j in pairs]
    state = {"left": budget}

    def good(v: Vector) -> bool:
        if state["left"] <= 0:
            return False
        if not domain.contains(p.fin, p.fc, list(v.a), list(v.b), v.c, p.fb):
            return False
        state["left"] -= 1
        outs = outputs(v, sub)
        return all(outs[sub[i].id] != outs[sub[j].id] for i, j in need)

    cur = vec
    k = len(vec.a)
    zero_in, zero_c = 0, 0
    changed = True
    while changed and state["left"] > 0:
        changed = False
        for i in range(k):                        # drop products
            if cur.a[i] or cur.b[i]:
                a, b = list(cur.a), list(cur.b)
                a[i], b[i] = zero_in, zero_in
                cand = replace(cur, a=tuple(a), b=tuple(b))
                if good(cand):
                    cur, changed = cand, True
        if cur.c != zero_c:
            cand = replace(cur, c=zero_c)
            if good(cand):
                cur, changed = cand, True
        slots: list[tuple[str, int]] = [(ab, i) for ab in ("a", "b") for i in range(k)] + [("c", 0)]
        for slot in slots:
            fmt = {"a": p.fin, "b": p.fb, "c": p.fc}[slot[0]]
            value = cur.c if slot[0] == "c" else getattr(cur, slot[0])[slot[1]]
            for x in simpler(fmt, value):
                cand = _replace(cur, slot, x)
                if good(cand):
                    cur, changed = cand, True
                    break
    return cur


def _replace(v: Vector, slot: tuple[str, int], x: int) -> Vector:
    if slot[0] == "c":
        return replace(v, c=x)
    vals = list(v.a if slot[0] == "a" else v.b)
    vals[slot[1]] = x
    return replace(v, a=tuple(vals)) if slot[0] == "a" else replace(v, b=tuple(vals))
