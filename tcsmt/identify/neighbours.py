"""Models one parameter away from a model: the moves of the search for a
unit's explanation (tcsmt.identify.explain).

A move changes one parameter that changes the arithmetic, or one parameter
with what it needs (c placed late needs late_frac_bits; back to global
placement drops the late-only values). ``moves(p, k)`` lists every move
away from p that gives a valid model, over the values a unit may hold:

  block_size          1 .. k (the instruction's products)
  align_bits          0 .. p's + 4 (at least 0 .. 6)
  carry_bits          unbounded, 0 .. one more than a block of p's size needs
  min_exponent        none, the 25 exponents from the lowest a term can have
                      (a floor below every term never acts), p's own +- 8
  align_rounding, normalisation, add_order, product_alignment,
  final_rounding, c_rounding, term_order, chaining, subnormals, overflow,
  zero_sign, product_overflow, product_rounding: every choice
  final_frac_bits     none, 13 .. 1 fewer than out_format's (no fewer than 1)
  acc_format          float32, e8m13
  c_placement         global, after, late with late_frac_bits 23 .. 34
  nan_bits            none, and the NaN patterns the unit was seen to return
  late placement:     late_frac_bits +- 4, product_groups 1, 2, 4,
                      late_sum_exponent, late_c_window none or +- 4
  block scales:       group_size (divisors of the scale block), scale_nan,
                      scale_zero, c_group_window, scale_window_bits +- 4

What the observations fix (the formats of a, b, c, d and of the scales, and
the scale block) never moves. ``differs`` and ``distance`` compare two
models on every parameter that changes the arithmetic.
"""

from __future__ import annotations

from tcsmt.errors import UserError
from tcsmt.model import choices as ch
from tcsmt.model.formats import ROUNDING_MODES
from tcsmt.model.params import ModelParams

META = ("name", "arch", "devices", "instruction", "description", "default")
"""Fields that name a model, not its arithmetic."""

LATE_ONLY = {"late_frac_bits": None, "product_groups": 1, "late_sum_exponent": "value",
             "late_c_window": None}
"""What only late c placement reads, at the values that leave it out."""


def arithmetic(p: ModelParams) -> dict:
    """Every parameter of p that is not a name."""
    d = p.as_dict()
    for key in META:
        d.pop(key)
    return d


def differs(p: ModelParams, q: ModelParams) -> dict:
    """q's values where they differ from p's."""
    a, b = arithmetic(p), arithmetic(q)
    return {k: v for k, v in b.items() if a[k] != v}


def distance(p: ModelParams, q: ModelParams) -> int:
    """How many parameters that change the arithmetic differ."""
    return len(differs(p, q))


def first_floor(p: ModelParams) -> int:
    """The lowest floor of the alignment point that can drop a bit of some
    term: a term's last bit is at least 2^lsb (lsb: the lowest of c's and
    of a subnormal product's), and a floor f keeps F bits below it, down to
    2^(f - F); a floor at or below lsb + F drops none, and one below every
    term's exponent is never the alignment point."""
    lsb = min(p.fin.emin - p.fin.frac_bits + p.fb.emin - p.fb.frac_bits, p.fc.emin - p.fc.frac_bits)
    low = min(p.fin.emin + p.fb.emin, p.fc.emin)
    if p.fscale is not None:
        scale = 2 * (p.fscale.emin - p.fscale.frac_bits)
        lsb, low = lsb + scale, low + scale
    return max(low, lsb + p.F + 1)


def _around(v: int | None, span: int, lo: int = 0) -> list:
    return [] if v is None else [x for x in range(v - span, v + span + 1) if x >= lo]


def values(p: ModelParams, k: int, nan_bits=()) -> dict[str, list]:
    """The values each parameter may take in a move away from p (see the
    module docstring)."""
    enough = (4 * p.block_size + 1).bit_length() - 2      # carries that hold a block
    low = first_floor(p)
    out: dict[str, list] = {
        "block_size": list(range(1, max(k, p.block_size) + 1)),
        "align_bits": list(range(0, max(p.align_bits + 5, 7))),
        "carry_bits": [None, *range(0, enough + 2)],
        "align_rounding": list(ch.ALIGN_ROUNDINGS),
        "normalisation": list(ch.NORMALISATIONS),
        "add_order": list(ch.ADD_ORDERS),
        "product_alignment": list(ch.PRODUCT_ALIGNMENTS),
        "min_exponent": [None, *_around(p.min_exponent, 8, low),
                         *range(low, max(low + 25, p.fc.emin + 9))],
        "final_rounding": list(ROUNDING_MODES),
        "final_frac_bits": [None, *range(max(1, min(13, p.fout.frac_bits - 1)), p.fout.frac_bits)],
        "acc_format": ["float32", "e8m13"],
        "c_rounding": list(ROUNDING_MODES),
        "term_order": list(ch.TERM_ORDERS),
        "chaining": list(ch.CHAININGS),
        "subnormals": list(ch.SUBNORMALS),
        "overflow": list(ch.FLOAT_OVERFLOWS),
        "zero_sign": list(ch.ZERO_SIGNS),
        "product_overflow": list(ch.PRODUCT_OVERFLOWS),
        "product_rounding": list(ch.PRODUCT_ROUNDINGS),
        "nan_bits": [None, *(x for x in nan_bits if int(x, 16) != p.fout.nan_bits())],
    }
    if p.c_placement == "late":
        out["late_frac_bits"] = _around(p.late_frac_bits, 4, p.fout.frac_bits)
        out["product_groups"] = [1, 2, 4]
        out["late_sum_exponent"] = list(ch.LATE_SUM_EXPONENTS)
        out["late_c_window"] = [None, *(_around(p.late_c_window, 4, 1) or range(20, 33))]
    if p.fscale is not None:
        block = p.scaling()[1]
        out["group_size"] = [g for g in (1, 2, 4, 8, 16, 32, 64) if block % g == 0]
        out["scale_nan"] = list(ch.SCALE_NANS)
        out["scale_zero"] = list(ch.SCALE_ZEROS)
        out["c_group_window"] = [False, True]
        out["scale_window_bits"] = [None, *_around(p.scale_window_bits, 4, 1)]
    return out


def placements(p: ModelParams) -> list[dict]:
    """Moves of c's placement, each with what the new placement needs."""
    out: list[dict] = []
    if p.c_placement != "late":
        out += [{"c_placement": "late", "late_frac_bits": lf}
                for lf in range(max(p.fout.frac_bits, 23), 35)]
    for where in ("global", "after"):
        if p.c_placement != where:
            out.append({"c_placement": where, **LATE_ONLY})
    return out


def moves(p: ModelParams, k: int, nan_bits=()) -> list[dict]:
    """Every move away from p (a dict of changes), those that give an
    invalid model included (``apply`` drops them)."""
    out = [{key: v} for key, vals in values(p, k, nan_bits).items() for v in dict.fromkeys(vals)
           if getattr(p, key) != v]
    return out + placements(p)


def label(p: ModelParams, change: dict) -> str:
    """p's name with the change: hopper-fp16-fp32[carry_bits=2]."""
    return f"{p.name}[{','.join(f'{k}={word(k, v)}' for k, v in change.items())}]"


def word(key: str, v) -> str:
    if v is None:
        return "unbounded" if key == "carry_bits" else "none"
    return str(v)


def apply(p: ModelParams, change: dict) -> ModelParams | None:
    """p with the change (named by it), or None when that is not a valid
    model or the same arithmetic."""
    try:
        q = p.replace(**change)
    except UserError:
        return None
    diff = differs(p, q)
    return q.replace(name=label(p, diff)) if diff else None


def neighbours(p: ModelParams, k: int, nan_bits=()) -> list[tuple[dict, ModelParams]]:
    """(move, model) for every valid move away from p."""
    out = []
    for change in moves(p, k, nan_bits):
        q = apply(p, change)
        if q is not None:
            out.append((differs(p, q), q))
    return out
