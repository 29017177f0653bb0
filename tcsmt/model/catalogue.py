"""The shipped architecture models: loading and listing them, and the
devices each architecture covers.

Model files live in ``models/`` of the source tree, installed as the package
data ``tcsmt.models``. A model is named ``ARCH-IN-OUT`` (``ampere-fp16-fp32``).
Choosing one for a request (``--arch ampere``, ``--arch ampere --formats
bf16:fp32``, a name, a file, the dtypes of arrays) is tcsmt.model.choose.
"""

from __future__ import annotations

import functools
from pathlib import Path

from tcsmt.errors import UnknownModel, UserError
from tcsmt.fileio import data_folder
from tcsmt.model.load import read_model_file
from tcsmt.model.params import ModelParams


def models_dir() -> Path:
    """Folder of the shipped model files (installed package data, or the
    source tree's models/ when run from a checkout)."""
    d = data_folder("tcsmt.models", "models", "*.toml")
    if d is None:
        raise UserError("no model files found: is tcsmt installed with its models?")
    return d


def load_model(path: str | Path) -> ModelParams:
    """A model file, checked completely (tcsmt.model.load); its ``base`` may
    name a shipped model."""
    return read_model_file(path, _shipped)


@functools.cache
def _load_all(folder: str) -> tuple[ModelParams, ...]:
    read: dict[Path, ModelParams] = {}       # a base file beside is read once, not once a model
    return tuple(read_model_file(p, _shipped, read=read) for p in sorted(Path(folder).glob("*.toml")))


def all_models() -> list[ModelParams]:
    return list(_load_all(str(models_dir())))


def select_models(archs=(), scaled: bool | None = None) -> list[ModelParams]:
    """The shipped models of the named architectures (all without names),
    only the block-scaled ones (scaled True) or only the others (False)."""
    wanted = {arch_name(a) for a in archs}
    unknown = wanted - set(architectures())
    if unknown:
        raise UnknownModel(f"unknown architecture {sorted(unknown)[0]!r} "
                        f"(known: {', '.join(architectures())})")
    return [m for m in all_models() if (not wanted or m.arch in wanted)
            and (scaled is None or (m.scale_format is not None) == scaled)]


def architectures() -> list[str]:
    seen: list[str] = []
    for m in all_models():
        if m.arch not in seen:
            seen.append(m.arch)
    return seen


def by_name() -> dict[str, ModelParams]:
    """The shipped models by name."""
    return {m.name: m for m in all_models()}


def arch_name(spec: str) -> str:
    """An architecture's name from a name or alias (h100 -> hopper)."""
    arch = spec.strip().lower()
    return ARCH_ALIASES.get(arch, arch)


def models_of(spec: str) -> list[ModelParams]:
    """The shipped models of an architecture (by name or alias), in file
    order; UnknownModel naming what there is when it has none."""
    arch = arch_name(spec)
    mine = [m for m in all_models() if m.arch == arch]
    if not mine:
        known = ", ".join(architectures())
        raise UnknownModel(f"unknown architecture {spec!r} (known: {known}; `tcsmt models` lists them)")
    return mine


def plain_name(m: ModelParams) -> str:
    """ARCH-IN-OUT (ARCH-A-B-OUT): the name of an architecture's main model
    for m's formats."""
    return f"{m.arch}-{m.formats_label.replace(':', '-').replace(',', '-')}"


def _shipped(name: str) -> ModelParams:
    """A shipped model named by a file's ``base``: a model name, or an
    architecture (its default model)."""
    named = by_name().get(name.strip())
    if named is not None:
        return named
    mine = models_of(name)
    return next((m for m in mine if m.default), mine[0])


# Device names that appear in recorded data, and what architecture they are.
DEVICE_ARCH = {
    "V100": "volta", "TITAN V": "volta",
    "T4": "turing",
    "A100": "ampere", "A2": "ampere", "A30": "ampere", "A10": "ampere", "RTX3060": "ampere",
    "ADA": "ada", "L40S": "ada", "L4": "ada", "RTX4090": "ada",
    "H100": "hopper", "H200": "hopper", "H800": "hopper",
    "B200": "blackwell", "B100": "blackwell", "GB200": "blackwell",
    "B300": "blackwell-ultra", "GB300": "blackwell-ultra",
    "RTX 5090": "rtx-blackwell", "RTX PRO 6000": "rtx-blackwell",
    "MI300": "cdna3", "MI300X": "cdna3",
    "RX 7900 XTX": "rdna3", "8060S": "rdna3", "RX 9070 XT": "rdna4", "R9700": "rdna4",
}

# NVIDIA compute capability of the recorded devices (what a probe reports as such).
DEVICE_CC = {"V100": "7.0", "T4": "7.5", "A100": "8.0", "Ada": "8.9", "L40S": "8.9",
             "H100": "9.0", "H200": "9.0", "B200": "10.0", "B300": "10.3"}

ARCH_ALIASES = {"lovelace": "ada", "ada-lovelace": "ada", "h100": "hopper", "a100": "ampere",
                "v100": "volta", "b200": "blackwell", "mi300": "cdna3", "rtx5090": "rtx-blackwell",
                "sm_120": "rtx-blackwell", "sm_100": "blackwell"}


def arch_for_device(device: str) -> str | None:
    key = device.upper().replace(" ", "").replace("_", "")
    for name, arch in DEVICE_ARCH.items():
        if key == name.replace(" ", ""):
            return arch
    return None
