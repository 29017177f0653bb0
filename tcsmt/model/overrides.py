"""``--set KEY=VALUE``: changing a model's parameters by name."""

from __future__ import annotations

import dataclasses
import tomllib

from tcsmt.errors import UserError
from tcsmt.model.params import FIELD_NAMES, ModelParams
from tcsmt.model.validate import convert, validate


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
    values = {k: convert(origin, k, v) for k, v in seen.items()}
    suffix = ",".join(f"{k}={v}" for k, v in seen.items())
    new = dataclasses.replace(p, name=f"{p.name}[{suffix}]", **values)
    validate(new, origin)
    return new
