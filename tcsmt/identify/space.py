"""Hypothesis spaces: every combination of a few parameters over a base model.

A space is a base model (formats and the parameters held fixed) and axes:
for each varied parameter, the values it may take. ``models()`` gives one
ModelParams per combination, named by its values. A space file is TOML:

    base = "ampere-fp16-fp32"        # a model name, or an architecture
    [axes]
    block_size = [1, 2, 4, 8, 16, 32]
    align_bits = [0, 1, 2, 3]

``default_space(formats)`` is the space ``tcsmt plan`` and ``tcsmt coverage``
use when none is given.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tcsmt.errors import UserError
from tcsmt.fileio import read_toml
from tcsmt.model.formats import get_format
from tcsmt.model.load import params_from_dict
from tcsmt.model.params import FIELD_NAMES, ModelParams, arithmetic
from tcsmt.model.validate import bad, convert, validate

_ALL_FIELDS = [f.name for f in dataclasses.fields(ModelParams)]

DEFAULT_AXES: dict[str, list] = {
    "block_size": [1, 2, 4, 8, 16, 32],
    "align_bits": [0, 1, 2, 3],
    "align_rounding": ["truncate", "rz", "rne", "ru", "rd"],
    "final_rounding": ["rz", "rne", "ru", "rd"],
    "product_alignment": ["raw", "normalised"],
    "normalisation": ["block", "every_add"],
    "subnormals": ["keep", "flush", "flush_inputs", "flush_outputs"],
    "chaining": ["recursive", "separate"],
}


@dataclass
class Space:
    base: ModelParams
    axes: dict[str, list] = field(default_factory=dict)
    name: str = "space"

    @property
    def size(self) -> int:
        n = 1
        for values in self.axes.values():
            n *= len(values)
        return n

    def combinations(self):
        keys = list(self.axes)
        for values in itertools.product(*(self.axes[k] for k in keys)):
            yield dict(zip(keys, values))

    def model(self, values: dict, prefix: str = "") -> ModelParams:
        """The base with the axes' values (checked as a model file's are),
        named by them after ``prefix``."""
        label = prefix + ",".join(f"{k}={v}" for k, v in values.items())
        origin = f"space {self.name}: {label}"
        unknown = [k for k in values if k not in FIELD_NAMES]
        if unknown:
            raise bad(origin, unknown[0], "unknown key")
        changes = {k: convert(origin, k, v) for k, v in values.items()}
        p = dataclasses.replace(self.base, name=label, default=False, source_file=origin, **changes)
        validate(p, origin)
        return p

    def models(self, prefix: str = "") -> list[ModelParams]:
        """Every combination's model, as ``model`` makes it (the same
        fields, names and checks), built without dataclasses.replace and
        with each axis value converted once: 30816 fp8 hypotheses in about
        1.1 s instead of 1.9. A value that does not convert is left to
        ``model``, whose message names the first combination holding it."""
        keys = list(self.axes)
        unknown = [k for k in keys if k not in FIELD_NAMES]
        try:
            if unknown:
                raise UserError("unknown key")
            conv = [[convert("", k, v) for v in self.axes[k]] for k in keys]
        except UserError:
            return [self.model(v, prefix) for v in self.combinations()]
        fixed = {f: getattr(self.base, f) for f in _ALL_FIELDS}
        fixed["default"] = False
        texts = [[f"{k}={v}" for v in self.axes[k]] for k in keys]
        out = []
        new, update = object.__new__, dict.update
        for picked in itertools.product(*(range(len(vs)) for vs in conv)):
            label = prefix + ",".join(texts[n][j] for n, j in enumerate(picked))
            origin = f"space {self.name}: {label}"
            p = new(ModelParams)
            d = p.__dict__
            update(d, fixed)
            for n, j in enumerate(picked):
                d[keys[n]] = conv[n][j]
            d["name"], d["source_file"] = label, origin
            validate(p, origin)
            out.append(p)
        return out

    def parameter_reprs(self) -> Iterator[str]:
        """``repr(sorted(m.parameter_dict().items()))`` of every model, in
        the order of models(), without building the models: the base's
        items with each combination's values (converted as model() converts
        them), each item's repr made once."""
        origin = f"space {self.name}"
        fixed = {k: repr((k, v)) for k, v in arithmetic(self.base.as_dict()).items()
                 if k not in self.axes}
        choices = [[{n: repr((n, x)) for n, x in arithmetic({k: convert(origin, k, v)}).items()}
                    for v in values] for k, values in self.axes.items()]
        for picked in itertools.product(*choices):
            items = dict(fixed)
            for item in picked:
                items.update(item)
            yield "[" + ", ".join(items[k] for k in sorted(items)) + "]"


def neutral_base(formats: str) -> ModelParams:
    """A base model for a format pair with nothing architecture-specific:
    unbounded carries, no alignment floor, NVIDIA's special-value rules."""
    fin_s, _, fout_s = formats.partition(":")
    try:
        fin, fout = get_format(fin_s), get_format(fout_s or "float32")
    except UserError:
        raise UserError(f"bad --formats {formats!r}: expected IN:OUT such as fp16:fp32") from None
    fc = fout if fout.name == "float16" else get_format("float32")
    fp8 = fin.bits == 8
    data = dict(
        name=f"space-{fin.name}-{fout.name}", arch="space", in_format=fin.name,
        c_format=fc.name, out_format=fout.name, block_size=8, align_bits=1,
        carry_bits="unbounded", align_rounding="truncate", normalisation="block",
        product_alignment="raw", final_rounding="rz" if fout.name == "float32" else "rne",
        chaining="recursive", c_placement="global", subnormals="keep", min_exponent="none",
    )
    if fin.name == "float64":
        raise UserError("the fp64 units are IEEE FMA chains: there is no block datapath to identify")
    del fp8
    return params_from_dict(data, f"default space for {formats}")


def default_space(formats: str) -> Space:
    base = neutral_base(formats)
    axes = {k: list(v) for k, v in DEFAULT_AXES.items()}
    if base.fin.bits == 8:
        # fp8 units may keep only 13 fraction bits (Ada, Hopper wgmma)
        axes["acc_format"] = ["float32", "e8m13"]
    return Space(base, axes, name=f"default-{base.fin.name}-{base.fout.name}")


def load_space(path: str | Path) -> Space:
    data = read_toml(path)
    if "parts" in data:
        raise UserError(f"{path}: a space of several parts: read it with "
                        "tcsmt.identify.hypspace.load_space_file")
    return space_part(data, str(path), Path(path).stem)


NEUTRAL = {"arch": "space", "devices": (), "instruction": "", "description": "", "default": False}


def space_part(data: dict, path: str, name: str) -> Space:
    """One part of a space file: ``base`` (a model name or architecture,
    with ``formats`` to pick one), ``set`` (parameters held at other values
    than the base's) and ``axes``."""
    from tcsmt.model.choose import choose
    if "base" not in data:
        raise UserError(f"{path}: key 'base': missing (a model name or architecture)")
    base = choose(str(data["base"]), data.get("formats"))
    fixed = data.get("set", {})
    if not isinstance(fixed, dict):
        raise UserError(f"{path}: key 'set': expected a table of parameter = value")
    if fixed:
        for k in fixed:
            if k not in FIELD_NAMES or k in NEUTRAL or k == "name":
                raise UserError(f"{path}: key 'set.{k}': not a model parameter")
        values = {**base.as_dict(), **NEUTRAL, "name": f"space-{name}", **fixed}
        base = params_from_dict(values, f"{path}: part {name}")
    axes = data.get("axes", {})
    if not isinstance(axes, dict) or not axes:
        raise UserError(f"{path}: key 'axes': expected a table of parameter = [values]")
    for k, v in axes.items():
        if k not in FIELD_NAMES or k in ("name", "arch", "devices", "description", "default"):
            raise UserError(f"{path}: key 'axes.{k}': not a model parameter")
        if not isinstance(v, list) or not v:
            raise UserError(f"{path}: key 'axes.{k}': expected a non-empty list")
    space = Space(base, {k: list(v) for k, v in axes.items()}, name=name)
    space.model(next(space.combinations()))   # validate one combination now
    return space
