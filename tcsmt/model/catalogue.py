"""The shipped architecture models: finding, listing and choosing them.

Model files live in ``models/`` of the source tree, installed as the package
data ``tcsmt.models``. A model is named ``ARCH-IN-OUT`` (``ampere-fp16-fp32``);
``--arch ampere`` picks the architecture's default model, and
``--arch ampere --formats bf16:fp32`` another of its format pairs.
"""

from __future__ import annotations

import functools
from pathlib import Path

from tcsmt.errors import UserError
from tcsmt.fileio import data_folder
from tcsmt.model.formats import get_format
from tcsmt.model.params import ModelParams, apply_overrides, load_model
from tcsmt.model.params import short_format as short
from tcsmt.model.reference import is_reference, reference_for


def models_dir() -> Path:
    """Folder of the shipped model files (installed package data, or the
    source tree's models/ when run from a checkout)."""
    d = data_folder("tcsmt.models", "models", "*.toml")
    if d is None:
        raise UserError("no model files found: is tcsmt installed with its models?")
    return d


@functools.cache
def _load_all(folder: str) -> tuple[ModelParams, ...]:
    return tuple(load_model(p) for p in sorted(Path(folder).glob("*.toml")))


def all_models() -> list[ModelParams]:
    return list(_load_all(str(models_dir())))


def select_models(archs=(), scaled: bool | None = None) -> list[ModelParams]:
    """The shipped models of the named architectures (all without names),
    only the block-scaled ones (scaled True) or only the others (False)."""
    wanted = {ARCH_ALIASES.get(a.lower(), a.lower()) for a in archs}
    unknown = wanted - set(architectures())
    if unknown:
        raise UserError(f"unknown architecture {sorted(unknown)[0]!r} "
                        f"(known: {', '.join(architectures())})")
    return [m for m in all_models() if (not wanted or m.arch in wanted)
            and (scaled is None or (m.scale_format is not None) == scaled)]


def architectures() -> list[str]:
    seen: list[str] = []
    for m in all_models():
        if m.arch not in seen:
            seen.append(m.arch)
    return seen


def _formats_match(m: ModelParams, formats: str) -> bool:
    """Whether ``formats`` (IN:OUT, or A,B:OUT for different a and b
    formats) names m's formats."""
    fin, _, fout = formats.partition(":")
    fa, _, fb = fin.partition(",")
    try:
        if get_format(fa).name != m.fin.name or get_format(fb or fa).name != m.fb.name:
            return False
        return not fout or get_format(fout).name == m.fout.name
    except UserError:
        raise UserError(f"bad --formats {formats!r}: expected IN:OUT such as fp16:fp32, "
                        "or A,B:OUT such as e4m3fnuz,e5m2fnuz:fp32") from None


def find_model(spec: str, formats: str | None = None) -> ModelParams:
    """A model by file path, model name (ampere-bf16-fp32), architecture
    name (ampere, with ``formats`` IN:OUT choosing among its models), or
    reference name (fma-chain, in ``formats``; tcsmt.model.reference)."""
    spec = spec.strip()
    if spec.endswith(".toml") or "/" in spec:
        return load_model(spec)
    if is_reference(spec):
        return reference_for(spec, formats)
    models = all_models()
    by_name = {m.name: m for m in models}
    if spec in by_name and formats is None:
        return by_name[spec]
    arch = spec.lower()
    if arch in ARCH_ALIASES:
        arch = ARCH_ALIASES[arch]
    mine = [m for m in models if m.arch == arch]
    if not mine:
        known = ", ".join(architectures())
        raise UserError(f"unknown architecture {spec!r} (known: {known}; `tcsmt models` lists them)")
    if formats:
        match = [m for m in mine if _formats_match(m, formats)]
        plain = [m for m in match if m.name == f"{arch}-{short(m.in_format)}-{short(m.out_format)}"]
        match = plain + [m for m in match if m not in plain]
        if not match:
            have = ", ".join(m.formats_label for m in mine)
            raise UserError(f"{arch} has no model for formats {formats} (it has: {have})")
        return match[0]
    defaults = [m for m in mine if m.default]
    return defaults[0] if defaults else mine[0]


def resolve(spec: str, formats: str | None = None, overrides: list[str] | None = None) -> ModelParams:
    """``find_model`` then ``--set`` overrides."""
    return apply_overrides(find_model(spec, formats), list(overrides or []))


# Device names that appear in recorded data, and what architecture they are.
DEVICE_ARCH = {
    "V100": "volta", "TITAN V": "volta",
    "T4": "turing",
    "A100": "ampere", "A2": "ampere", "A30": "ampere", "A10": "ampere", "RTX3060": "ampere",
    "ADA": "ada", "L40S": "ada", "L4": "ada", "RTX4090": "ada",
    "H100": "hopper", "H200": "hopper", "H800": "hopper",
    "B200": "blackwell", "B100": "blackwell", "GB200": "blackwell", "B300": "blackwell",
    "RTX 5090": "rtx-blackwell", "RTX PRO 6000": "rtx-blackwell",
    "MI300": "cdna3", "MI300X": "cdna3",
}

ARCH_ALIASES = {"lovelace": "ada", "ada-lovelace": "ada", "h100": "hopper", "a100": "ampere",
                "v100": "volta", "b200": "blackwell", "mi300": "cdna3", "rtx5090": "rtx-blackwell",
                "sm_120": "rtx-blackwell", "sm_100": "blackwell"}


def arch_for_device(device: str) -> str | None:
    key = device.upper().replace(" ", "").replace("_", "")
    for name, arch in DEVICE_ARCH.items():
        if key == name.replace(" ", ""):
            return arch
    return None
