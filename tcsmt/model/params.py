"""The model's parameters: one record per architecture and format pair.

A model file in ``models/`` is TOML whose keys are exactly the field names of
``ModelParams``; every value carries a ``# source:`` comment. ``load_model``
checks a file completely and reports the first problem in one line naming
the file and the key.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path

from tcsmt.errors import ModelFileError, UserError
from tcsmt.fileio import read_text
from tcsmt.model.formats import ROUNDING_MODES, Format, get_format

ALIGN_ROUNDINGS = ("truncate", "rz", "rne", "ru", "rd", "exact")
NORMALISATIONS = ("block", "every_add")
ADD_ORDERS = ("sequential", "reverse", "pairwise", "largest_first")
PRODUCT_ALIGNMENTS = ("raw", "normalised")
CHAININGS = ("recursive", "separate")
C_PLACEMENTS = ("global", "late", "after")
SUBNORMALS = ("keep", "flush", "flush_inputs", "flush_outputs", "flush_every_step")
OVERFLOWS = ("inf", "ieee")
ZERO_SIGNS = ("positive", "all_positive", "ieee", "keep_c")
PRODUCT_OVERFLOWS = ("keep", "inf")
PRODUCT_ROUNDINGS = ("exact", "in_format", "out_format")
TERM_ORDERS = ("sequential", "pairs_mod4")
LATE_SUM_EXPONENTS = ("value", "products")
SCALE_NANS = ("nan", "value")
SCALE_ZEROS = ("dead", "aligned")


@dataclass(frozen=True)
class ModelParams:
    """Every choice the block-FMA datapath makes.

    Formats
      in_format, c_format, out_format: the formats of a (and of b), of c,
        and of d.
      b_format: the format of b when it differs from a's (AMD CDNA3 fp8 x bf8
        MFMA); None for in_format.
      acc_format: the format whose fraction width the accumulator extends
      (float32 for tensor cores, float64 for an fp64 FMA chain).

    Block scaling (MX, NVFP4)
      scale_format: the format of the scale factors of a and b (ue8m0,
        ue4m3), or None for a product without scales.
      scale_block: products along K that share one scale of a (per row of
        A) and one of b (per column of B). A scaled product is exact: the
        scales' significands multiply its significand and their exponents
        add to its exponent; a NaN scale makes the dot product NaN.
      group_size: products summed exactly before they enter the block as
        one term (1: every product is its own term). A group's value is a
        fixed-point sum whose exponent is that of the smallest possible
        product (emin of a plus emin of b) plus its scales' exponents; it
        takes part in the alignment whenever one of its products is
        non-zero, even if the sum is zero. The scales of a group are
        shared by its products (scale_block is a multiple of group_size).
      scale_nan: what a NaN scale (ue8m0 0xff, ue4m3 0x7f) does: "nan" (the
        dot product is NaN, as MMA-Sim reads it) or "value" (the encoding
        is read as the number its fields spell: 2^128 for ue8m0, 480 for
        ue4m3).
      scale_zero: what a term whose scale is zero (ue4m3 0x00) does: "dead"
        (it is zero and takes no part in the alignment, as MMA-Sim reads
        it) or "aligned" (its value is zero but it takes part in the
        alignment at its product's exponent plus its scales' exponents,
        as a group that cancels to zero does).

    Raw-exponent window (a second reading of B200's block-scaled e2m1
    arithmetic; tcsmt.datapath.window says it step by step)
      scale_window_bits: None (the block's window is set by its largest
        term, as everywhere else) or the bits the window keeps below the
        largest pair of scale exponents S: the quantum is then
        q = max(R - F, S - scale_window_bits, C - F), R the largest raw
        product exponent (inputs' plus scales' unbiased exponents), C the
        exponent of a non-zero c; every group and c truncated to 2^q, the
        integers added exactly.
      c_window_bits: with a non-zero c and C >= R, the quantum is
        2^(C - c_window_bits) instead (needed with scale_window_bits).
      c_group_size: the exact groups in that c-dominant case, when they
        differ from group_size (None: group_size).
      c_group_window: a group whose largest product is not above c is
        truncated to 2^max(q, C - c_window_bits) (false: to 2^q).
      group_floor: when the sum rounds to a subnormal, the groups whose
        scale pair is below S and whose truncated value is below
        2^group_floor are left out of it (None: no such floor).

    Inside one block
      block_size: products summed before one normalisation.
      align_bits: fraction bits kept below acc_format's last bit when terms
        are aligned, so terms keep F = acc_format.frac_bits + align_bits
        fraction bits below the alignment point.
      carry_bits: integer bits of the accumulator above the largest term's
        integer part, counted from the raw product (significand in [1, 4):
        2 integer bits), as VLPG counts them; None for an accumulator wide
        enough never to overflow. F21 counts above a 1-bit significand in
        [1, 2), so its "3 carry bits" is carry_bits = 2 here, while VLPG's
        "3 needed and sufficient for 5 terms" is carry_bits = 3 (tcsmt prove
        carry-bits gives 3 for Volta: 2 refuted by a witness, 3 proved).
      align_rounding: what happens to the bits shifted out: "truncate" (toward
        zero, no sticky bit) or an IEEE mode (rz, rne, ru, rd) applied to the
        sum with guard bits and a sticky bit; or "exact": none is lost, the
        block's terms are summed exactly and the sum is rounded once with
        final_rounding (AMD CDNA1, and the exact reference; align_bits and
        carry_bits do not apply).
      normalisation: "block" (once per block) or "every_add" (each addition
        rounded to the accumulator format, as a chain of IEEE additions).
      add_order: order of additions when normalisation is every_add.
      product_alignment: exponent a product is aligned by: "raw" (ea + eb,
        significand in [0, 4)) or "normalised" (its leading one).
      min_exponent: floor of the alignment exponent, or None.
      c_placement: "global" (c aligned with the products); "late" (the
        products are summed first, c is added to that unrounded sum, both
        rounded down, as AMD CDNA3); or "after" (the blocks sum the products
        from zero, chained as usual, and c is added to their rounded result
        at the end with one IEEE addition rounded with c_rounding).
      late_frac_bits: with late placement, the fraction bits the sum of the
        product sum and c is rounded down to before the final rounding.
      product_groups: with late placement, the products are summed in this
        many interleaved groups (product k in group k mod product_groups),
        each truncated to F fraction bits below its own largest exponent;
        the group sums are then added, each rounded down to F fraction bits
        below the largest group exponent (2 on AMD CDNA3 fp8: the even and
        the odd products). 1: one sum.
      late_sum_exponent: with late placement, where the product sum stands
        when c is aligned with it: "value" (at its alignment point, but a
        sum that cancels to zero takes no part) or "products" (at the
        largest exponent of its non-zero products even when it cancels to
        zero, as MMA-Sim's CDNA3 sums).
      late_c_window: with late placement, c counts as +0 when its exponent
        lies more than this many below the alignment point of the product
        sum and c (25 on AMD CDNA3 fp8); None: c always counts.
      c_rounding: rounding of the IEEE additions of c with "after"
        placement, and of block results with "separate" chaining.
      term_order: the order blocks take the products in: "sequential"
        (k = 1..K) or "pairs_mod4" (the terms with k mod 4 in {0, 1}
        first, then those in {2, 3}: Hopper's mma.sync fp8, run as two fp16
        instructions).

    Result
      final_rounding: rounding of the block result (rz, rne, ru, rd).
      final_frac_bits: fraction bits of the block result when narrower than
        out_format's (13 for the e8m13 results of fp8 on Ada and Hopper).
      chaining: how blocks of a longer dot product combine: "recursive" (each
        block's rounded result is the next block's c) or "separate" (every
        block is summed from zero and the rounded block results are added to
        c one after another, each addition rounded with c_rounding).
      subnormals: keep, flush (inputs and outputs), flush_inputs,
        flush_outputs, or flush_every_step (every zero or subnormal input
        reads as +0, and every product and every rounded sum below
        acc_format's normal range becomes a zero of its sign: AMD CDNA2).
      overflow: "inf" (any overflow gives infinity) or "ieee" (toward-zero
        modes give the largest finite number).
      zero_sign: "positive" (an exact zero sum is +0; a sum that rounds to
        zero keeps its sign), "all_positive" (every zero result is +0, as
        MMA-Sim adds +0.0 to d), "keep_c" (every zero result is +0, but a
        block without a non-zero product returns c as it is, -0 included)
        or "ieee".
      product_overflow: "keep" (products are exact beyond acc_format's
        range) or "inf" (a product beyond it is an infinity).
      product_rounding: "exact" (products kept exactly), or each product
        rounded to nearest even into "in_format" or "out_format" first.
      nan_bits: the NaN d holds, as a hex pattern in out_format, or None for
        out_format's positive NaN with every fraction bit set.
    """

    name: str
    arch: str
    in_format: str
    c_format: str
    out_format: str
    block_size: int
    align_bits: int
    carry_bits: int | None
    align_rounding: str
    normalisation: str
    product_alignment: str
    final_rounding: str
    chaining: str
    c_placement: str
    subnormals: str
    min_exponent: int | None
    acc_format: str = "float32"
    b_format: str | None = None
    product_groups: int = 1
    late_sum_exponent: str = "value"
    late_c_window: int | None = None
    add_order: str = "sequential"
    final_frac_bits: int | None = None
    late_frac_bits: int | None = None
    c_rounding: str = "rne"
    term_order: str = "sequential"
    overflow: str = "inf"
    zero_sign: str = "positive"
    product_overflow: str = "keep"
    product_rounding: str = "exact"
    nan_bits: str | None = None
    scale_format: str | None = None
    scale_block: int | None = None
    group_size: int = 1
    scale_nan: str = "nan"
    scale_zero: str = "dead"
    scale_window_bits: int | None = None
    c_window_bits: int | None = None
    c_group_size: int | None = None
    c_group_window: bool = False
    group_floor: int | None = None
    devices: tuple[str, ...] = ()
    instruction: str = ""
    description: str = ""
    default: bool = False
    source_file: str = field(default="", compare=False)

    # -- derived -------------------------------------------------------------

    @property
    def fin(self) -> Format:
        return get_format(self.in_format)

    @property
    def fb(self) -> Format:
        """The format of b (in_format unless b_format names another)."""
        return get_format(self.b_format or self.in_format)

    @property
    def fscale(self) -> Format | None:
        """The format of the scales (None without block scaling)."""
        return get_format(self.scale_format) if self.scale_format else None

    @property
    def fc(self) -> Format:
        return get_format(self.c_format)

    @property
    def fout(self) -> Format:
        return get_format(self.out_format)

    @property
    def facc(self) -> Format:
        return get_format(self.acc_format)

    @property
    def F(self) -> int:
        """Fraction bits kept below the alignment point."""
        return self.facc.frac_bits + self.align_bits

    @property
    def formats_label(self) -> str:
        """IN:OUT, or A,B:OUT when a and b differ."""
        ins = short_format(self.in_format)
        if self.fb.name != self.fin.name:
            ins += "," + short_format(self.fb.name)
        return f"{ins}:{short_format(self.out_format)}"

    def scale_count(self, k: int) -> int:
        """Scales of a (and of b) a dot product of length k needs."""
        return -(-k // self.scale_block) if self.scale_format else 0

    def replace(self, **changes) -> ModelParams:
        p = dataclasses.replace(self, **changes)
        validate(p, origin=f"{self.name} (overridden)")
        return p

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d.pop("source_file")
        d["devices"] = list(self.devices)
        return d

    def parameter_dict(self) -> dict:
        """Only the values that change the arithmetic (parameters of
        LATER_DEFAULTS left out where they hold that value)."""
        d = self.as_dict()
        for k in ("name", "arch", "devices", "instruction", "description", "default"):
            d.pop(k)
        for k, v in LATER_DEFAULTS.items():
            if d[k] == v:
                d.pop(k)
        return d


LATER_DEFAULTS = {"b_format": None, "scale_format": None, "scale_block": None, "group_size": 1,
                  "scale_nan": "nan", "scale_zero": "dead",
                  "scale_window_bits": None, "c_window_bits": None, "c_group_size": None,
                  "c_group_window": False, "group_floor": None,
                  "product_groups": 1, "late_sum_exponent": "value", "late_c_window": None}
"""Parameters added after results and plans were first written, with the
value that leaves the datapath as it was. ``parameter_dict`` leaves them out
at that value, so the hashes that name a model's questions (the plans' space
digests, regen's cache keys) stay what they were for every model that does
not use them."""


SHORT = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64",
         "tf32": "tf32", "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2",
         "float8_e4m3fnuz": "e4m3fnuz", "float8_e5m2fnuz": "e5m2fnuz",
         "float6_e2m3fn": "e2m3", "float6_e3m2fn": "e3m2", "float4_e2m1fn": "e2m1",
         "float8_e8m0fnu": "ue8m0"}


def short_format(name: str) -> str:
    return SHORT.get(name, name)


CHOICES = {
    "align_rounding": ALIGN_ROUNDINGS, "normalisation": NORMALISATIONS,
    "add_order": ADD_ORDERS, "product_alignment": PRODUCT_ALIGNMENTS,
    "final_rounding": ROUNDING_MODES, "chaining": CHAININGS, "c_rounding": ROUNDING_MODES,
    "c_placement": C_PLACEMENTS, "subnormals": SUBNORMALS,
    "overflow": OVERFLOWS, "zero_sign": ZERO_SIGNS,
    "product_overflow": PRODUCT_OVERFLOWS, "product_rounding": PRODUCT_ROUNDINGS,
    "term_order": TERM_ORDERS, "late_sum_exponent": LATE_SUM_EXPONENTS,
    "scale_nan": SCALE_NANS, "scale_zero": SCALE_ZEROS,
}
FORMAT_KEYS = ("in_format", "b_format", "c_format", "out_format", "acc_format")
OPTIONAL_FORMAT_KEYS = ("scale_format",)
OPTIONAL_INT_KEYS = ("carry_bits", "min_exponent", "final_frac_bits", "late_frac_bits",
                     "scale_block", "scale_window_bits", "c_window_bits", "c_group_size",
                     "group_floor", "late_c_window")
FIELD_NAMES = [f.name for f in fields(ModelParams) if f.name != "source_file"]
REQUIRED = [f.name for f in fields(ModelParams)
            if f.default is dataclasses.MISSING and f.name != "source_file"]


MAX_FORMAT_BITS = 64
"""The widest format a model may name (binary64): the batch simulator, the
candidate pools and the result files hold every operand in 64 bits."""


def exponent_range(p: ModelParams) -> tuple[int, int]:
    """The unbiased exponents min_exponent may take: from 64 below the
    smallest exponent a product, c or the accumulator can have (a floor
    there never acts) to 64 above the largest (every term is shifted out)."""
    fmts = [p.fc, p.facc, p.fout]
    lo = min([p.fin.emin - p.fin.frac_bits + p.fb.emin - p.fb.frac_bits]
             + [f.emin - f.frac_bits for f in fmts])
    hi = max([p.fin.emax + p.fb.emax + 2] + [f.emax + 1 for f in fmts])
    if p.scale_format is not None:
        lo, hi = lo + 2 * (p.fscale.emin - p.fscale.frac_bits), hi + 2 * (p.fscale.emax + 1)
    return lo - 64, hi + 64


def _bad(origin: str, key: str, msg: str) -> ModelFileError:
    return ModelFileError(f"{origin}: key '{key}': {msg}")


def validate(p: ModelParams, origin: str) -> None:
    """Raise ModelFileError naming ``origin`` and the key at the first problem."""
    for key in FORMAT_KEYS:
        if getattr(p, key) is None and key == "b_format":
            continue
        try:
            get_format(getattr(p, key))
        except UserError as e:
            raise _bad(origin, key, str(e)) from None
    for key in OPTIONAL_FORMAT_KEYS:
        if getattr(p, key) is not None:
            try:
                get_format(getattr(p, key))
            except UserError as e:
                raise _bad(origin, key, str(e)) from None
    for key in (*FORMAT_KEYS, *OPTIONAL_FORMAT_KEYS):
        if getattr(p, key) is not None and get_format(getattr(p, key)).bits > MAX_FORMAT_BITS:
            raise _bad(origin, key, f"{getattr(p, key)} is {get_format(getattr(p, key)).bits} bits "
                       f"wide: formats of at most {MAX_FORMAT_BITS} bits are modelled")
    for key, allowed in CHOICES.items():
        v = getattr(p, key)
        if v not in allowed:
            raise _bad(origin, key, f"{v!r} is not one of {', '.join(allowed)}")
    validate_scaling(p, origin)
    validate_window(p, origin)
    if not isinstance(p.block_size, int) or not 1 <= p.block_size <= 256:
        raise _bad(origin, "block_size", f"{p.block_size!r} is not an integer in 1..256")
    if not isinstance(p.align_bits, int) or not 0 <= p.align_bits <= 64:
        raise _bad(origin, "align_bits", f"{p.align_bits!r} is not an integer in 0..64")
    if p.carry_bits is not None and (not isinstance(p.carry_bits, int) or not 0 <= p.carry_bits <= 16):
        raise _bad(origin, "carry_bits", f"{p.carry_bits!r} is not an integer in 0..16 or \"unbounded\"")
    if p.min_exponent is not None:
        lo, hi = exponent_range(p)
        if isinstance(p.min_exponent, bool) or not isinstance(p.min_exponent, int) \
                or not lo <= p.min_exponent <= hi:
            raise _bad(origin, "min_exponent", f"{p.min_exponent!r} is not \"none\" or an integer in "
                       f"{lo}..{hi} (the exponents a term of these formats can have, give or take 64)")
    if p.final_frac_bits is not None and (
            not isinstance(p.final_frac_bits, int) or not 1 <= p.final_frac_bits <= p.fout.frac_bits):
        raise _bad(origin, "final_frac_bits",
                   f"{p.final_frac_bits!r} is not an integer in 1..{p.fout.frac_bits}")
    if p.c_placement == "late":
        if not isinstance(p.late_frac_bits, int) or not p.fout.frac_bits <= p.late_frac_bits <= 60:
            raise _bad(origin, "late_frac_bits",
                       "late c placement needs an integer late_frac_bits "
                       "of at least out_format's fraction bits")
        if p.normalisation != "block":
            raise _bad(origin, "c_placement", "late c placement needs normalisation = \"block\"")
    if p.align_rounding == "exact" and (p.normalisation != "block" or p.c_placement != "global"):
        raise _bad(origin, "align_rounding", "an exact sum needs normalisation = \"block\" "
                                             "and c_placement = \"global\"")
    if not isinstance(p.product_groups, int) or not 1 <= p.product_groups <= p.block_size:
        raise _bad(origin, "product_groups", f"{p.product_groups!r} is not an integer in "
                                             f"1..block_size ({p.block_size})")
    if p.product_groups > 1 and p.c_placement != "late":
        raise _bad(origin, "product_groups", "groups of products need c_placement = \"late\"")
    if p.late_c_window is not None and (not isinstance(p.late_c_window, int)
                                        or not 0 <= p.late_c_window <= 200):
        raise _bad(origin, "late_c_window", f"{p.late_c_window!r} is not an integer in 0..200 "
                                            "or \"none\"")
    if p.fin.frac_bits * 2 + 2 > 1200:
        raise _bad(origin, "in_format", "format too wide")
    if p.nan_bits is not None:
        try:
            v = int(str(p.nan_bits), 16)
        except ValueError:
            raise _bad(origin, "nan_bits", f"{p.nan_bits!r} is not a hex pattern") from None
        if get_format(p.out_format).classify(get_format(p.out_format).from_storage(v)) != "nan":
            raise _bad(origin, "nan_bits", f"{p.nan_bits} is not a NaN of {p.out_format}")


def validate_scaling(p: ModelParams, origin: str) -> None:
    """The block-scaling and group parameters (see ModelParams)."""
    g = p.group_size
    if isinstance(g, bool) or not isinstance(g, int) or not 1 <= g <= 256:
        raise _bad(origin, "group_size", f"{g!r} is not an integer in 1..256")
    if p.block_size % g:
        raise _bad(origin, "group_size", f"{g} does not divide block_size {p.block_size}")
    if g > 1 and (p.product_alignment != "raw" or p.product_rounding != "exact"
                  or p.term_order != "sequential" or p.normalisation != "block"):
        raise _bad(origin, "group_size", "exact groups need product_alignment = \"raw\", "
                   "product_rounding = \"exact\", term_order = \"sequential\" and "
                   "normalisation = \"block\"")
    if p.scale_format is None:
        if p.scale_block is not None:
            raise _bad(origin, "scale_block", "given without a scale_format")
        return
    if p.fscale.signed:
        raise _bad(origin, "scale_format", f"{p.scale_format} is not a scale format (ue8m0, ue4m3)")
    sb = p.scale_block
    if not isinstance(sb, int) or not 1 <= sb <= 1024 or sb % g:
        raise _bad(origin, "scale_block",
                   f"{sb!r} is not an integer in 1..1024 that group_size {g} divides")


WINDOW_KEYS = ("c_window_bits", "c_group_size", "c_group_window", "group_floor")


def validate_window(p: ModelParams, origin: str) -> None:
    """The raw-exponent window's parameters (see ModelParams)."""
    if p.scale_window_bits is None:
        for key in WINDOW_KEYS:
            if getattr(p, key) not in (None, False):
                raise _bad(origin, key, "given without scale_window_bits")
        return
    for key in ("scale_window_bits", "c_window_bits"):
        v = getattr(p, key)
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 64:
            raise _bad(origin, key, f"{v!r} is not an integer in 0..64 (the window needs both)")
    if p.scale_format is None or p.block_size % p.scale_block:
        raise _bad(origin, "scale_window_bits", "the raw-exponent window needs a scale_format "
                   "and a scale_block that divides block_size")
    if (p.align_rounding, p.carry_bits, p.c_placement) != ("truncate", None, "global") \
            or p.chaining != "recursive":
        raise _bad(origin, "scale_window_bits", "the raw-exponent window truncates and adds "
                   "exactly: it needs align_rounding = \"truncate\", carry_bits = \"unbounded\", "
                   "c_placement = \"global\" and chaining = \"recursive\"")
    cg = p.c_group_size
    if cg is not None and (isinstance(cg, bool) or not isinstance(cg, int) or cg < 1
                           or cg % p.group_size or p.scale_block % cg):
        raise _bad(origin, "c_group_size", f"{cg!r} is not a multiple of group_size "
                   f"{p.group_size} that divides scale_block {p.scale_block}")
    if not isinstance(p.c_group_window, bool):
        raise _bad(origin, "c_group_window", "expected true or false")
    if p.group_floor is not None and (isinstance(p.group_floor, bool)
                                      or not isinstance(p.group_floor, int)):
        raise _bad(origin, "group_floor", f"{p.group_floor!r} is not an integer or \"none\"")


def _convert(origin: str, key: str, raw):
    """TOML value to field value (words for None, lists to tuples)."""
    if key in OPTIONAL_INT_KEYS:
        if raw is None or isinstance(raw, str) and raw.lower() in ("none", "unbounded"):
            return None
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise _bad(origin, key, f"{raw!r} is not an integer")
        return raw
    if key == "devices":
        if isinstance(raw, tuple):
            raw = list(raw)
        if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
            raise _bad(origin, key, "expected a list of device names")
        return tuple(raw)
    if key in ("default", "c_group_window"):
        if not isinstance(raw, bool):
            raise _bad(origin, key, "expected true or false")
        return raw
    if key in OPTIONAL_FORMAT_KEYS:
        if raw is None or isinstance(raw, str) and raw.lower() == "none":
            return None
    if key in ("block_size", "align_bits", "group_size", "product_groups"):
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise _bad(origin, key, f"{raw!r} is not an integer")
        return raw
    if key in ("nan_bits", "b_format"):
        if raw is None or isinstance(raw, str) and raw.lower() == "none":
            return None
    if not isinstance(raw, str):
        raise _bad(origin, key, f"{raw!r} is not a string")
    return raw


def params_from_dict(data: dict, origin: str) -> ModelParams:
    unknown = [k for k in data if k not in FIELD_NAMES]
    if unknown:
        raise _bad(origin, unknown[0], "unknown key")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise _bad(origin, missing[0], "missing")
    values = {k: _convert(origin, k, v) for k, v in data.items()}
    p = ModelParams(**values, source_file=origin)
    validate(p, origin)
    return p


def _syntax_where(text: str, message: str) -> str:
    """``key 'K': `` for a TOML error that lies after key K on its line
    (tomllib says "(at line L, column C)"), else ``""``."""
    m = re.search(r"at line (\d+), column (\d+)", message)
    lines = text.splitlines()
    if not m or not 1 <= int(m.group(1)) <= len(lines):
        return ""
    k = re.match(r"\s*([A-Za-z0-9_-]+)", lines[int(m.group(1)) - 1])
    return f"key '{k.group(1)}': " if k and int(m.group(2)) > k.end(1) else ""


def load_model(path: str | Path, _chain: tuple[str, ...] = ()) -> ModelParams:
    """A model file, checked completely. ``base = "NAME"`` starts from another
    model (a file NAME.toml beside this one, else the shipped model NAME,
    else a path ending in .toml relative to this file) and the file lists only
    what differs; ``default`` is never inherited."""
    path = Path(path)
    origin = str(path)
    text = read_text(path, ModelFileError)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ModelFileError(f"{origin}: {_syntax_where(text, str(e))}not valid TOML: {e}") from None
    except (ValueError, RecursionError):
        raise ModelFileError(f"{origin}: not TOML tcsmt reads (nested too deeply, or a number "
                             "too long)") from None
    if "name" not in data:
        data = {"name": path.stem, **data}
    if "base" in data:
        base = _load_base(path, data.pop("base"), _chain + (str(path.resolve()),))
        inherited = {k: v for k, v in base.as_dict().items() if k not in ("name", "default")}
        unknown = [k for k in data if k not in FIELD_NAMES]
        if unknown:
            raise _bad(origin, unknown[0], "unknown key")
        data = {**inherited, **data}
    return params_from_dict(data, origin)


def _load_base(path: Path, base, chain: tuple[str, ...]) -> ModelParams:
    """The model a file's ``base`` names (see load_model)."""
    origin = str(path)
    if not isinstance(base, str) or not base.strip():
        raise _bad(origin, "base", f"{base!r} is not a model name")
    base = base.strip()
    beside = path.parent / (base if base.endswith(".toml") else f"{base}.toml")
    if beside.is_file():
        if str(beside.resolve()) in chain:
            raise _bad(origin, "base", f"{base!r} leads back to this file (a cycle)")
        return load_model(beside, chain)
    from tcsmt.model.catalogue import find_model  # the shipped models (same room)
    try:
        return find_model(base)
    except UserError:
        raise _bad(origin, "base", f"no model {base!r} beside this file or among the shipped "
                                   "models") from None


def parse_override(text: str) -> tuple[str, object]:
    """``key=value`` from ``--set``; the value is read as TOML, else as a string."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise UserError(f"--set {text!r}: expected key=value")
    if key not in FIELD_NAMES or key in ("name", "source_file"):
        raise UserError(f"--set {text!r}: unknown parameter {key!r}")
    raw = raw.strip()
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return key, value


def apply_overrides(p: ModelParams, overrides: list[str]) -> ModelParams:
    if not overrides:
        return p
    seen: dict[str, object] = {}
    for text in overrides:
        key, value = parse_override(text)
        if key in seen and seen[key] != value:
            raise UserError(f"conflicting overrides for {key}: {seen[key]!r} and {value!r}")
        seen[key] = value
    origin = f"{p.name} with --set " + " ".join(overrides)
    values = {k: _convert(origin, k, v) for k, v in seen.items()}
    suffix = ",".join(f"{k}={v}" for k, v in seen.items())
    new = dataclasses.replace(p, name=f"{p.name}[{suffix}]", **values)
    validate(new, origin)
    return new
