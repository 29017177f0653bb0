"""Input domains of a query: which a, b and c the solver may choose.

A domain is written once over the bit-vector vocabulary, so the same
``constraints`` give the solver its assertions (SMT interpretation) and check
a witness in Python (Python-int interpretation, ``contains``). The field
names follow ``tcsmt.properties.registry.Domain`` (k aside, which is the query's).

  finite            no infinity, no NaN among a, b and c (the default)
  subnormal_inputs  subnormal a, b and c allowed (the default)
  signs             "any", or "positive": every a_i, b_i and c has sign bit 0
  exp_range         (lo, hi): every non-zero a_i and b_i has an unbiased
                    exponent in lo..hi (a subnormal counts as emin)
  c_exp_range       the same for a non-zero c
  c                 "any", "zero" (+0 or -0), "positive" (> 0), "negative" (< 0)
  nonzero_min, nonzero_max   how many products have both factors non-zero
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from tcsmt import datapath
from tcsmt.datapath import bv
from tcsmt.errors import BadOption, UserError
from tcsmt.interp.ints import INT, IntWord
from tcsmt.model.formats import Format

SIGNS = ("any", "positive")
C_KINDS = ("any", "zero", "positive", "negative")


@dataclass(frozen=True)
class Domain:
    finite: bool = True
    subnormal_inputs: bool = True
    signs: str = "any"
    exp_range: tuple[int, int] | None = None
    c_exp_range: tuple[int, int] | None = None
    c: str = "any"
    nonzero_min: int = 0
    nonzero_max: int | None = None

    def describe(self) -> dict:
        """The domain as plain data (for result files)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    def constraints(self, I, fin: Format, fc: Format, a: list, b: list, c,
                    fb: Format | None = None) -> list:
        """Bools that hold exactly for inputs in the domain (b in ``fb``,
        by default fin)."""
        ta = [_term(I, fin, x) for x in a]
        tb = [_term(I, fb or fin, y) for y in b]
        tc = _term(I, fc, c)
        every = ta + tb + [tc]
        out = []
        if self.finite:
            out += [I.not_(I.or_(t.nan, t.inf)) for t in every]
        if not self.subnormal_inputs:
            out += [I.not_(_subnormal(I, t)) for t in every]
        if self.signs == "positive":
            out += [I.not_(t.sign) for t in every]
        if self.exp_range:
            out += [_exp_in(I, t, self.exp_range) for t in ta + tb]
        if self.c_exp_range:
            out.append(_exp_in(I, tc, self.c_exp_range))
        out += _c_kind(I, tc, self.c)
        if self.nonzero_min > 0 or self.nonzero_max is not None:
            nz = [I.and_(_nonzero(I, x), _nonzero(I, y)) for x, y in zip(ta, tb)]
            out += _count_in(I, nz, self.nonzero_min, self.nonzero_max)
        return out

    def contains(self, fin: Format, fc: Format, a: list[int], b: list[int], c: int,
                 fb: Format | None = None, I=None) -> bool:
        """Whether concrete inputs (bit patterns) lie in the domain. ``I``: a
        Python-int interpretation (default the plain one; for many rows
        tcsmt.interp.memo.RowsInterp, which unpacks each narrow word once)."""
        words = lambda xs, f: [IntWord(x, f.bits) for x in xs]  # noqa: E731
        cs = self.constraints(I or INT, fin, fc, words(a, fin), words(b, fb or fin), IntWord(c, fc.bits), fb)
        return all(x.b for x in cs)


EXP_WIDTH = 16     # signed width for exponents in domain constraints: any format fits


def _term(I, fmt: Format, bits) -> datapath.Term:
    return datapath.unpack(I, fmt, bits, EXP_WIDTH, False)


def _nonzero(I, t: datapath.Term):
    return I.not_(bv.is_zero(I, t.sig))


def _subnormal(I, t: datapath.Term):
    """Non-zero without its hidden bit."""
    top = I.width(t.sig) - 1
    return I.and_(_nonzero(I, t), I.not_(bv.bit(I, t.sig, top)))


def _c_kind(I, t: datapath.Term, kind: str) -> list:
    if kind == "zero":
        return [I.not_(_nonzero(I, t))]
    if kind == "positive":
        return [_nonzero(I, t), I.not_(t.sign)]
    if kind == "negative":
        return [_nonzero(I, t), t.sign]
    return []


def _exp_in(I, t: datapath.Term, rng: tuple[int, int]):
    lim = 1 << (EXP_WIDTH - 2)
    lo, hi = max(rng[0], -lim), min(rng[1], lim)
    inside = I.and_(I.sle(bv.sconst(I, lo, EXP_WIDTH), t.exp), I.sle(t.exp, bv.sconst(I, hi, EXP_WIDTH)))
    return I.or_(I.not_(_nonzero(I, t)), inside)


def _count_in(I, bools: list, lo: int, hi: int | None) -> list:
    """lo <= (number of true Bools) <= hi."""
    n = len(bools)
    w = bv.bits_for(n + 1)
    count = I.const(0, w)
    for x in bools:
        count = I.add(count, bv.from_bool(I, x, w))
    lo, hi = min(max(lo, 0), n + 1), n if hi is None else min(max(hi, 0), n)
    return [I.ule(I.const(lo, w), count), I.ule(count, I.const(hi, w))]


# ---------------------------------------------------------------------------
# Parsing the CLI's words
# ---------------------------------------------------------------------------

def parse_range(text: str | None, what: str, lo_default: int, hi_default: int) -> tuple[int, int] | None:
    """"LO:HI", "LO:", ":HI" or "N" (exactly N) -> (lo, hi)."""
    if text is None:
        return None
    t = text.strip()
    try:
        if ":" in t:
            lo_s, _, hi_s = t.partition(":")
            lo = int(lo_s) if lo_s.strip() else lo_default
            hi = int(hi_s) if hi_s.strip() else hi_default
        else:
            lo = hi = int(t)
    except ValueError:
        raise UserError(f"{what} {text!r}: expected LO:HI, LO:, :HI or N (integers)") from None
    if lo > hi:
        raise UserError(f"{what} {text!r}: the lower end is above the upper end")
    if not (min(lo_default, 0) <= lo and hi <= hi_default):
        raise BadOption(f"{what} {text!r}: every end must lie between {min(lo_default, 0)} and "
                        f"{hi_default} (no format's exponents or terms reach further)")
    return lo, hi


def make_domain(allow_specials: bool = False, no_subnormals: bool = False, signs: str = "any",
                exp_range: str | None = None, c_exp_range: str | None = None,
                c: str = "any", nonzero: str | None = None) -> Domain:
    """A Domain from the CLI's option values (strings), with one-line errors."""
    if signs not in SIGNS:
        raise UserError(f"--signs {signs!r}: expected one of {', '.join(SIGNS)}")
    if c not in C_KINDS:
        raise UserError(f"--c-sign {c!r}: expected one of {', '.join(C_KINDS)}")
    big = 1 << 14
    nz = parse_range(nonzero, "--nonzero", 0, big)
    return Domain(finite=not allow_specials, subnormal_inputs=not no_subnormals, signs=signs,
                  exp_range=parse_range(exp_range, "--exp-range", -big, big),
                  c_exp_range=parse_range(c_exp_range, "--c-exp-range", -big, big), c=c,
                  nonzero_min=nz[0] if nz else 0, nonzero_max=nz[1] if nz and nz[1] < big else None)
