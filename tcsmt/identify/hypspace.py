"""The hypothesis spaces ``tcsmt plan`` and ``tcsmt identify`` search.

A space here is one or more parts, each a ``tcsmt.identify.space.Space`` (a base
model and axes); its hypotheses are every part's models, in order, and
hypothesis i of a plan is the i-th of them. One part is what
``tcsmt.identify.space.default_space`` and ``load_space`` give.

Why more than one part for fp8 (``identification_space``): the shipped fp8
models differ from the default space in parameters that move together, and
a full product of the extra axes would multiply the space by eight
(122880 models at k = 32, hours of evaluation on two cores):

  * Ada and Hopper wgmma keep 13 fraction bits (acc_format e8m13 AND
    final_frac_bits = 13); the default space's acc_format = e8m13 alone
    rounds the block result to binary32 and reproduces neither. So the
    default axes run twice: once with a binary32 accumulator, once with an
    e8m13 accumulator and 13-bit block results.
  * Hopper and Blackwell mma.sync fp8 add c after the products with one
    IEEE addition and take the terms in pairs_mod4 order; a small third
    part holds those readings (c_placement = after, both term orders,
    block sizes 8..32, alignment bits, final and c roundings).

For fp16 and bf16 inputs with binary32 output the default space (part
"default") gets a small second part, "c-late": AMD CDNA3 adds c after the
product sum, rounded down to 31 fraction bits (c_placement = late), which
no value of the default axes reproduces. It varies block size, alignment
bits and final rounding (96 models), with AMD's special-value rules (IEEE
sign of an exact zero sum, products beyond binary32 overflow); without it ``identify --device
sim:cdna3`` could only say "outside the space". Two more small parts
hold the other AMD readings: "exact-sum" (CDNA1: the block's products and
c summed exactly and rounded once; block sizes and final roundings, 24
models) and "pairwise-adds" (CDNA2: IEEE binary32 additions rounded to
nearest even, in pairs or in sequence, with subnormals kept, flushed, or
flushed at every step; 30 models). For tf32 and fp16 output
(no shipped late-c model) the identification space is the default space.
Parameters no part varies (min_exponent, carry_bits, c_placement for fp16,
...) keep the neutral base's values; see tcsmt/identify/simdevice.py for how shipped
models with other values are handled.

Block-scaled spaces (``scales`` = FORMAT/BLOCK) hold the scales' format
and block in every hypothesis: the scales are inputs of the plan's
vectors. One is defined, NVFP4 (e2m1:fp32 with ue4m3/16, tcgen05
kind::mxf4nvf4 block16, k = 64), in two parts, one per published reading
of B200 (results/blackwell-readings/README.md), each varying what the
readings and the users' reports leave open:

  * "largest" (MMA-Sim 2.1.1, blackwell-nvfp4): exact sums of 1 to 16
    scaled products, the window set by the largest group or c with 33 to
    37 fraction bits (align_bits 10..14; "34 to 37 bits" is what users
    report), blocks of 32 or 64, the floor e_zero = -139 or none, the sign
    of a zero result, truncation or nearest-even;
  * "raw-window" (sf-tensor/tcgen05, blackwell-nvfp4-sftensor): the
    window on raw exponents with 33 to 37 bits below the largest scale
    pair, exact groups of 4 or 16 (and of 16 or the same when c
    dominates), 38 to 40 bits below the largest raw product, the sign of
    a zero result.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from tcsmt.errors import UserError
from tcsmt.identify.space import (
    DEFAULT_AXES,
    Space,
    default_space,
    load_space,
    neutral_base,
    space_part,
)
from tcsmt.model.load import params_from_dict
from tcsmt.model.names import short_format
from tcsmt.model.params import ModelParams


@dataclass
class HypSpace:
    parts: list[Space]
    name: str = "space"
    _models: list[ModelParams] | None = field(default=None, repr=False)
    _digest: str | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def size(self) -> int:
        return sum(p.size for p in self.parts)

    @property
    def base(self) -> ModelParams:
        return self.parts[0].base

    def models(self) -> list[ModelParams]:
        """Every hypothesis, named by its part (when there are several) and
        its axis values."""
        if self._models is None:
            out: list[ModelParams] = []
            for part in self.parts:
                out += part.models(f"{part.name}:" if len(self.parts) > 1 else "")
            self._models = out
        return self._models

    def axes(self) -> dict[str, list]:
        """Every varied parameter and the values any part gives it."""
        out: dict[str, list] = {}
        for part in self.parts:
            for k, vs in part.axes.items():
                for v in vs:
                    if v not in out.setdefault(k, []):
                        out[k].append(v)
        return out

    def digest(self) -> str:
        """A hash of every hypothesis's parameters, ModelParams.parameter_dict
        (plans check it), read from the parts' bases and axes without
        building the hypotheses; worked out once, as models() is."""
        if self._digest is None:
            h = hashlib.sha256()
            for part in self.parts:
                for line in part.parameter_reprs():
                    h.update(line.encode())
            self._digest = h.hexdigest()
        return self._digest

    def record(self) -> dict:
        return {"name": self.name, "size": self.size,
                "parts": [{"name": p.name, "base": p.base.as_dict(), "axes": p.axes} for p in self.parts],
                "sha256": self.digest()}


def from_record(rec: dict, where: str) -> HypSpace:
    try:
        parts = [Space(params_from_dict(dict(p["base"]), f"{where}: space part {p['name']}"),
                       {k: list(v) for k, v in p["axes"].items()}, name=p["name"])
                 for p in rec["parts"]]
        space = HypSpace(parts, name=rec["name"])
    except (KeyError, TypeError, AttributeError) as e:
        raise UserError(f"{where}: malformed \"space\" ({e})") from None
    if rec.get("sha256") and space.digest() != rec["sha256"]:
        raise UserError(f"{where}: the space's hypotheses do not match the hash recorded in the "
                        "plan (the parameters or their meaning changed): plan again")
    return space


def single(space: Space) -> HypSpace:
    return HypSpace([space], name=space.name)


def identification_space(formats: str) -> HypSpace:
    """The default space of ``tcsmt plan`` / ``tcsmt identify`` for a format
    pair (see the module docstring)."""
    base = neutral_base(formats)
    if base.fin.bits != 8:
        default = default_space(formats)
        if base.fin.name not in ("float16", "bfloat16") or base.fout.name != "float32":
            return single(default)
        default.name = "default"
        return HypSpace([default, *amd_parts(base)], name=f"identify-{short_format(base.fin.name)}-"
                                                         f"{short_format(base.fout.name)}")
    axes = {k: list(v) for k, v in DEFAULT_AXES.items()}
    fin = base.fin.name.replace("float8_", "")
    acc32 = Space(base, axes, name="acc-fp32")
    e8m13 = Space(base.replace(acc_format="e8m13", final_frac_bits=13), axes, name="acc-e8m13")
    after_axes: dict[str, list] = {"block_size": [8, 16, 32], "align_bits": [0, 1, 2, 3],
                  "final_rounding": ["rz", "rne"], "c_rounding": ["rne", "rz"],
                  "term_order": ["sequential", "pairs_mod4"]}
    after = Space(base.replace(c_placement="after"), after_axes, name="c-after")
    return HypSpace([acc32, e8m13, after], name=f"identify-{fin}-{base.fout.name}")


def amd_parts(base: ModelParams) -> list[Space]:
    """The AMD readings of an fp16 or bf16 -> fp32 unit, each a small part
    (see the module docstring): c-late (CDNA3), exact-sum (CDNA1) and
    pairwise-adds (CDNA2)."""
    late = Space(base.replace(c_placement="late", late_frac_bits=31, c_rounding="rne",
                              zero_sign="ieee", product_overflow="inf"),
                 {"block_size": [1, 2, 4, 8, 16, 32], "align_bits": [0, 1, 2, 3],
                  "final_rounding": ["rz", "rne", "ru", "rd"]}, name="c-late")
    exact = Space(base.replace(align_rounding="exact", align_bits=0, overflow="ieee"),
                  {"block_size": [1, 2, 4, 8, 16, 32], "final_rounding": ["rz", "rne", "ru", "rd"]},
                  name="exact-sum")
    pairwise = Space(base.replace(align_rounding="rne", normalisation="every_add", align_bits=0,
                                  final_rounding="rne", overflow="ieee", zero_sign="ieee",
                                  product_overflow="inf"),
                     {"block_size": [1, 2, 4, 8, 16], "add_order": ["sequential", "pairwise"],
                      "subnormals": ["keep", "flush", "flush_every_step"]}, name="pairwise-adds")
    return [late, exact, pairwise]


def parse_scales(scales: str) -> tuple[str, int]:
    """FORMAT/BLOCK (ue4m3/16) -> (the format's name, block)."""
    from tcsmt.model.formats import get_format
    fmt, sep, block = scales.partition("/")
    try:
        f = get_format(fmt)
        n = int(block)
    except (UserError, ValueError):
        raise UserError(f"bad --scales {scales!r}: expected FORMAT/BLOCK such as ue4m3/16") from None
    if not sep or n < 1 or f.signed:
        raise UserError(f"bad --scales {scales!r}: expected FORMAT/BLOCK such as ue4m3/16")
    return f.name, n


def scaled_base(formats: str, scales: str | None = None) -> ModelParams:
    """The neutral base of a format pair, with block scales when given."""
    base = neutral_base(formats)
    if not scales:
        return base
    fmt, block = parse_scales(scales)
    return base.replace(scale_format=fmt, scale_block=block)


def position(part: Space, p: ModelParams) -> int:
    """The index in the part of the hypothesis with p's axis values."""
    pos, stride = 0, 1
    for k in reversed(list(part.axes)):
        pos += part.axes[k].index(getattr(p, k)) * stride
        stride *= len(part.axes[k])
    return pos


def readings(space: HypSpace) -> set[int]:
    """The hypotheses that are the bases of the space's parts (the readings
    a part varies around), where a base's values lie on its part's axes."""
    out, offset = set(), 0
    for part in space.parts:
        if all(getattr(part.base, k) in vals for k, vals in part.axes.items()):
            out.add(offset + position(part, part.base))
        offset += part.size
    return out


SCALED_SPACES = {("float4_e2m1fn", "float32", "ue4m3", 16): "nvfp4"}


def nvfp4_space() -> HypSpace:
    """NVFP4's identification space (see the module docstring)."""
    from tcsmt.model.choose import choose
    neutral = {"name": "space-nvfp4", "arch": "space", "devices": (), "instruction": "",
               "description": "", "default": False}
    a = choose("blackwell-nvfp4").replace(**neutral)
    b = choose("blackwell-nvfp4-sftensor").replace(**neutral)
    largest = Space(a, {"group_size": [1, 2, 4, 8, 16], "align_bits": [10, 11, 12, 13, 14],
                        "block_size": [32, 64], "min_exponent": [-139, None],
                        "zero_sign": ["all_positive", "keep_c"], "final_rounding": ["rz", "rne"]},
                    name="largest")
    raw = Space(b, {"group_size": [4, 16], "c_group_size": [None, 16],
                    "scale_window_bits": [33, 34, 35, 36, 37], "align_bits": [15, 16, 17],
                    "zero_sign": ["keep_c", "all_positive"]}, name="raw-window")
    return HypSpace([largest, raw], name="identify-nvfp4-fp32")


def scaled_space(formats: str, scales: str) -> HypSpace:
    base = scaled_base(formats, scales)
    key = (base.fin.name, base.fout.name, short_format(base.scaling()[0].name), base.scale_block)
    if key not in SCALED_SPACES:
        raise UserError(f"no identification space for {formats} with {scales} scales (there is "
                        "one for e2m1:fp32 with ue4m3/16, NVFP4): give --space FILE")
    return nvfp4_space()


def load_space_file(path) -> HypSpace:
    """A space file: one part (``base`` and ``axes``, tcsmt.identify.space)
    or several, each a ``[[parts]]`` table with its ``name``, ``base``,
    ``set`` and ``axes``; every part must compute the same formats."""
    from pathlib import Path

    from tcsmt.fileio import read_toml
    data = read_toml(path)
    if "parts" not in data:
        return single(load_space(path))
    parts = data["parts"]
    if not isinstance(parts, list) or not parts or not all(isinstance(p, dict) for p in parts):
        raise UserError(f"{path}: key 'parts': expected one or more [[parts]] tables")
    out = []
    for i, part in enumerate(parts):
        name = str(part.get("name", f"part{i + 1}"))
        out.append(space_part(part, f"{path}: part {name}", name))
    key = [(sp.base.fin.name, sp.base.fb.name, sp.base.fc.name, sp.base.fout.name) for sp in out]
    for sp, k in zip(out[1:], key[1:]):
        if k != key[0]:
            raise UserError(f"{path}: part {sp.name} computes {sp.base.formats_label}, part "
                            f"{out[0].name} {out[0].base.formats_label}: one space, one format pair")
    return HypSpace(out, name=Path(path).stem)


def space_for(formats: str | None, space_file: str | None, scales: str | None = None) -> HypSpace:
    if space_file and scales:
        raise UserError("give --scales with --formats; a space file's base model holds its scales")
    if formats and scales:
        return scaled_space(formats, scales)
    if space_file:
        sp = load_space_file(space_file)
        if formats:
            want = neutral_base(formats)
            if (want.fin.name, want.fout.name) != (sp.base.fin.name, sp.base.fout.name):
                raise UserError(f"--space {space_file} is a space of {sp.base.formats_label}, "
                                f"not of --formats {formats}")
        return sp
    if not formats:
        raise UserError("give --formats IN:OUT (such as fp16:fp32), --space FILE or --plan FILE")
    return identification_space(formats)
