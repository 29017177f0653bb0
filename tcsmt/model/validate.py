"""Checking a model completely: formats, choices, ranges and the
combinations the datapath takes; the first problem is one ModelFileError
naming where the model came from and the key. Also the conversion of TOML
values to field values."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcsmt.errors import ModelFileError, UserError
from tcsmt.model.choices import (
    CHOICES,
    FLOAT_OVERFLOWS,
    FORMAT_KEYS,
    INT_OVERFLOWS,
    MAX_FORMAT_BITS,
    OPTIONAL_FORMAT_KEYS,
    OPTIONAL_INT_KEYS,
)
from tcsmt.model.formats import Format, get_format

if TYPE_CHECKING:                       # the record is checked here, not built: no import at run time
    from tcsmt.model.params import ModelParams

def exponent_range(p: ModelParams) -> tuple[int, int]:
    """The unbiased exponents min_exponent may take: from 64 below the
    smallest exponent a product, c or the accumulator can have (a floor
    there never acts) to 64 above the largest (every term is shifted out)."""
    fmts = [p.fc, p.facc, p.fout]
    lo = min([p.fin.emin - p.fin.frac_bits + p.fb.emin - p.fb.frac_bits]
             + [f.emin - f.frac_bits for f in fmts])
    hi = max([p.fin.emax + p.fb.emax + 2] + [f.emax + 1 for f in fmts])
    fs = p.fscale
    if fs is not None:
        lo, hi = lo + 2 * (fs.emin - fs.frac_bits), hi + 2 * (fs.emax + 1)
    return lo - 64, hi + 64


def bad(origin: str, key: str, msg: str) -> ModelFileError:
    return ModelFileError(f"{origin}: key '{key}': {msg}")


def validate(p: ModelParams, origin: str) -> None:
    """Raise ModelFileError naming ``origin`` and the key at the first problem."""
    looked: dict[str, Format] = {}       # each format looked up once
    for key in FORMAT_KEYS:
        if getattr(p, key) is None and key == "b_format":
            continue
        try:
            looked[key] = get_format(getattr(p, key))
        except UserError as e:
            raise bad(origin, key, str(e)) from None
    for key in OPTIONAL_FORMAT_KEYS:
        if getattr(p, key) is not None:
            try:
                looked[key] = get_format(getattr(p, key))
            except UserError as e:
                raise bad(origin, key, str(e)) from None
    for key, f in looked.items():
        if f.bits > MAX_FORMAT_BITS:
            raise bad(origin, key, f"{getattr(p, key)} is {f.bits} bits "
                       f"wide: formats of at most {MAX_FORMAT_BITS} bits are modelled")
    for key, allowed in CHOICES.items():
        v = getattr(p, key)
        if v not in allowed:
            raise bad(origin, key, f"{v!r} is not one of {', '.join(allowed)}")
    validate_integer(p, origin)
    validate_sparse(p, origin)
    validate_scaling(p, origin)
    validate_window(p, origin)
    if not isinstance(p.block_size, int) or not 1 <= p.block_size <= 256:
        raise bad(origin, "block_size", f"{p.block_size!r} is not an integer in 1..256")
    if not isinstance(p.align_bits, int) or not 0 <= p.align_bits <= 64:
        raise bad(origin, "align_bits", f"{p.align_bits!r} is not an integer in 0..64")
    if p.carry_bits is not None and (not isinstance(p.carry_bits, int) or not 0 <= p.carry_bits <= 16):
        raise bad(origin, "carry_bits", f"{p.carry_bits!r} is not an integer in 0..16 or \"unbounded\"")
    if p.min_exponent is not None:
        lo, hi = exponent_range(p)
        if isinstance(p.min_exponent, bool) or not isinstance(p.min_exponent, int) \
                or not lo <= p.min_exponent <= hi:
            raise bad(origin, "min_exponent", f"{p.min_exponent!r} is not \"none\" or an integer in "
                       f"{lo}..{hi} (the exponents a term of these formats can have, give or take 64)")
    if p.final_frac_bits is not None and (
            not isinstance(p.final_frac_bits, int) or not 1 <= p.final_frac_bits <= p.fout.frac_bits):
        raise bad(origin, "final_frac_bits",
                   f"{p.final_frac_bits!r} is not an integer in 1..{p.fout.frac_bits}")
    if p.c_placement == "late":
        if not isinstance(p.late_frac_bits, int) or not p.fout.frac_bits <= p.late_frac_bits <= 60:
            raise bad(origin, "late_frac_bits",
                       "late c placement needs an integer late_frac_bits "
                       "of at least out_format's fraction bits")
        if p.normalisation != "block":
            raise bad(origin, "c_placement", "late c placement needs normalisation = \"block\"")
    if p.align_rounding == "exact" and (p.normalisation != "block" or p.c_placement != "global"):
        raise bad(origin, "align_rounding", "an exact sum needs normalisation = \"block\" "
                                             "and c_placement = \"global\"")
    if not isinstance(p.product_groups, int) or not 1 <= p.product_groups <= p.block_size:
        raise bad(origin, "product_groups", f"{p.product_groups!r} is not an integer in "
                                             f"1..block_size ({p.block_size})")
    if p.product_groups > 1 and p.c_placement != "late":
        raise bad(origin, "product_groups", "groups of products need c_placement = \"late\"")
    validate_rdna(p, origin)
    if p.late_c_window is not None and (not isinstance(p.late_c_window, int)
                                        or not 0 <= p.late_c_window <= 200):
        raise bad(origin, "late_c_window", f"{p.late_c_window!r} is not an integer in 0..200 "
                                            "or \"none\"")
    if p.fin.frac_bits * 2 + 2 > 1200:
        raise bad(origin, "in_format", "format too wide")
    if p.nan_bits is not None:
        try:
            v = int(str(p.nan_bits), 16)
        except ValueError:
            raise bad(origin, "nan_bits", f"{p.nan_bits!r} is not a hex pattern") from None
        if get_format(p.out_format).classify(get_format(p.out_format).from_storage(v)) != "nan":
            raise bad(origin, "nan_bits", f"{p.nan_bits} is not a NaN of {p.out_format}")


def validate_rdna(p: ModelParams, origin: str) -> None:
    """The parameters of AMD RDNA's adder (see ModelParams): c_lead_bits,
    pair_sums, and the "ones" and "floor" alignment roundings."""
    if isinstance(p.c_lead_bits, bool) or not isinstance(p.c_lead_bits, int) \
            or not 0 <= p.c_lead_bits <= min(8, p.fc.frac_bits):
        raise bad(origin, "c_lead_bits", f"{p.c_lead_bits!r} is not an integer in "
                   f"0..{min(8, p.fc.frac_bits)}")
    if not isinstance(p.pair_sums, bool):
        raise bad(origin, "pair_sums", "expected true or false")
    plain = (p.c_placement, p.normalisation, p.group_size, p.scale_format) == ("global", "block", 1, None)
    special = p.align_rounding in ("ones", "floor") or p.c_lead_bits or p.pair_sums
    if special and not plain:
        raise bad(origin, "align_rounding" if p.align_rounding in ("ones", "floor") else
                   "c_lead_bits" if p.c_lead_bits else "pair_sums",
                   "RDNA's adder needs c_placement = \"global\", normalisation = \"block\" "
                   "and no block scales or groups")
    if p.pair_sums and (p.block_size % 2 or p.align_rounding in ("exact", "ones")):
        raise bad(origin, "pair_sums", "pairs need an even block_size and align_rounding "
                   "\"truncate\", \"floor\" or an IEEE mode")


def validate_scaling(p: ModelParams, origin: str) -> None:
    """The block-scaling and group parameters (see ModelParams)."""
    g = p.group_size
    if isinstance(g, bool) or not isinstance(g, int) or not 1 <= g <= 256:
        raise bad(origin, "group_size", f"{g!r} is not an integer in 1..256")
    if p.block_size % g:
        raise bad(origin, "group_size", f"{g} does not divide block_size {p.block_size}")
    if g > 1 and (p.product_alignment != "raw" or p.product_rounding != "exact"
                  or p.term_order != "sequential" or p.normalisation != "block"):
        raise bad(origin, "group_size", "exact groups need product_alignment = \"raw\", "
                   "product_rounding = \"exact\", term_order = \"sequential\" and "
                   "normalisation = \"block\"")
    fs = p.fscale
    if fs is None:
        if p.scale_block is not None:
            raise bad(origin, "scale_block", "given without a scale_format")
        return
    if fs.signed or fs.is_integer:
        raise bad(origin, "scale_format", f"{p.scale_format} is not a scale format (ue8m0, ue4m3)")
    sb = p.scale_block
    if not isinstance(sb, int) or not 1 <= sb <= 1024 or sb % g:
        raise bad(origin, "scale_block",
                   f"{sb!r} is not an integer in 1..1024 that group_size {g} divides")


INT_NEUTRAL = {"align_rounding": "exact", "normalisation": "block", "c_placement": "global",
               "product_alignment": "raw", "product_rounding": "exact", "product_overflow": "keep",
               "chaining": "recursive", "term_order": "sequential", "subnormals": "keep",
               "min_exponent": None, "final_frac_bits": None, "scale_format": None, "group_size": 1}
"""The values an integer model takes for the float choices: its products and
sums are exact (tcsmt.datapath.integer), nothing is aligned or rounded."""


def validate_integer(p: ModelParams, origin: str) -> None:
    """Integer formats come together (a, b, c, d and the accumulator), with
    the integer overflow rules and the neutral float choices."""
    fmts = {"in_format": p.fin, "b_format": p.fb, "c_format": p.fc, "out_format": p.fout,
            "acc_format": p.facc}
    ints = [k for k, f in fmts.items() if f.is_integer]
    if not ints:
        if p.overflow not in FLOAT_OVERFLOWS:
            raise bad(origin, "overflow", f"{p.overflow!r} is for integer formats; a float "
                      f"result takes {', '.join(FLOAT_OVERFLOWS)}")
        return
    floats = [k for k in fmts if k not in ints]
    if floats:
        raise bad(origin, floats[0], f"{getattr(p, floats[0]) or p.in_format} is a float format "
                  f"but {ints[0]} is {fmts[ints[0]].name}: a model's formats are all integer or "
                  "all float")
    if p.fc.name != p.fout.name or not p.fout.signed:
        raise bad(origin, "c_format", "an integer model's c and d are one signed format (s32)")
    if p.overflow not in INT_OVERFLOWS:
        raise bad(origin, "overflow", f"{p.overflow!r}: an integer result takes "
                  f"{', '.join(INT_OVERFLOWS)}")
    for key, want in INT_NEUTRAL.items():
        if getattr(p, key) != want:
            raise bad(origin, key, f"an integer model's products and sums are exact: it takes "
                      f"{'none' if want is None else repr(want)} here")


def validate_sparse(p: ModelParams, origin: str) -> None:
    """A sparse model selects single products from blocks chained one after
    another: no scales or exact groups, products in order."""
    if p.sparsity == "dense":
        if p.sparse_order != "logical":
            raise bad(origin, "sparse_order", "given for a dense model (sparsity = \"dense\")")
        return
    if p.scale_format is not None or p.group_size != 1 or p.term_order != "sequential" \
            or p.chaining != "recursive" or p.c_placement == "late":
        raise bad(origin, "sparsity", "a sparse model takes no scales or exact groups, products "
                  "in order (term_order = \"sequential\"), chaining = \"recursive\" and c "
                  "placed \"global\" or \"after\"")


WINDOW_KEYS = ("c_window_bits", "c_group_size", "c_group_window", "group_floor")


def validate_window(p: ModelParams, origin: str) -> None:
    """The raw-exponent window's parameters (see ModelParams)."""
    if p.scale_window_bits is None:
        for key in WINDOW_KEYS:
            if getattr(p, key) not in (None, False):
                raise bad(origin, key, "given without scale_window_bits")
        return
    for key in ("scale_window_bits", "c_window_bits"):
        v = getattr(p, key)
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 64:
            raise bad(origin, key, f"{v!r} is not an integer in 0..64 (the window needs both)")
    sb = p.scale_block
    if p.scale_format is None or sb is None or p.block_size % sb:
        raise bad(origin, "scale_window_bits", "the raw-exponent window needs a scale_format "
                   "and a scale_block that divides block_size")
    if (p.align_rounding, p.carry_bits, p.c_placement) != ("truncate", None, "global") \
            or p.chaining != "recursive":
        raise bad(origin, "scale_window_bits", "the raw-exponent window truncates and adds "
                   "exactly: it needs align_rounding = \"truncate\", carry_bits = \"unbounded\", "
                   "c_placement = \"global\" and chaining = \"recursive\"")
    cg = p.c_group_size
    if cg is not None and (isinstance(cg, bool) or not isinstance(cg, int) or cg < 1
                           or cg % p.group_size or sb % cg):
        raise bad(origin, "c_group_size", f"{cg!r} is not a multiple of group_size "
                   f"{p.group_size} that divides scale_block {p.scale_block}")
    if not isinstance(p.c_group_window, bool):
        raise bad(origin, "c_group_window", "expected true or false")
    if p.group_floor is not None and (isinstance(p.group_floor, bool)
                                      or not isinstance(p.group_floor, int)):
        raise bad(origin, "group_floor", f"{p.group_floor!r} is not an integer or \"none\"")


def convert(origin: str, key: str, raw):
    """TOML value to field value (words for None, lists to tuples)."""
    if key in OPTIONAL_INT_KEYS:
        if raw is None or isinstance(raw, str) and raw.lower() in ("none", "unbounded"):
            return None
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise bad(origin, key, f"{raw!r} is not an integer")
        return raw
    if key == "devices":
        if isinstance(raw, tuple):
            raw = list(raw)
        if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
            raise bad(origin, key, "expected a list of device names")
        return tuple(raw)
    if key in ("default", "c_group_window", "pair_sums"):
        if not isinstance(raw, bool):
            raise bad(origin, key, "expected true or false")
        return raw
    if key in OPTIONAL_FORMAT_KEYS:
        if raw is None or isinstance(raw, str) and raw.lower() == "none":
            return None
    if key in ("block_size", "align_bits", "group_size", "product_groups", "c_lead_bits"):
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise bad(origin, key, f"{raw!r} is not an integer")
        return raw
    if key in ("nan_bits", "b_format"):
        if raw is None or isinstance(raw, str) and raw.lower() == "none":
            return None
    if not isinstance(raw, str):
        raise bad(origin, key, f"{raw!r} is not a string")
    return raw
