"""Reading model files: TOML checked completely, ``base =`` chains, and
records from dictionaries (result files and plans store models as such).

``tcsmt.model.catalogue.load_model`` is the usual entrance: it lets a file's
``base`` name a shipped model."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from pathlib import Path

from tcsmt.errors import ModelFileError, UserError
from tcsmt.fileio import SMALL_LIMIT, read_text
from tcsmt.model.params import FIELD_NAMES, REQUIRED, ModelParams
from tcsmt.model.validate import bad, convert, validate


def params_from_dict(data: dict, origin: str) -> ModelParams:
    unknown = [k for k in data if k not in FIELD_NAMES]
    if unknown:
        raise bad(origin, unknown[0], "unknown key")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise bad(origin, missing[0], "missing")
    values = {k: convert(origin, k, v) for k, v in data.items()}
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


Shipped = Callable[[str], ModelParams]
"""Finds a shipped model by name for a file's ``base`` (the catalogue's
model of that name; none: a base must be a file beside)."""


def read_model_file(path: str | Path, shipped: Shipped | None = None,
               _chain: tuple[str, ...] = (), read: dict[Path, ModelParams] | None = None) -> ModelParams:
    """A model file, checked completely. ``base = "NAME"`` starts from another
    model (a file NAME.toml beside this one, else the shipped model NAME
    found by ``shipped``, else a path ending in .toml relative to this file)
    and the file lists only what differs; ``default`` is never inherited.
    ``read``: the files already read in this pass (by path as named), filled
    in, so that a folder of files that start from each other reads each once."""
    path = Path(path)
    if read is not None and path in read:
        return read[path]
    origin = str(path)
    text = read_text(path, ModelFileError, SMALL_LIMIT)
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
        base = _load_base(path, data.pop("base"), shipped, _chain + (str(path.resolve()),), read)
        inherited = {k: v for k, v in base.as_dict().items() if k not in ("name", "default")}
        unknown = [k for k in data if k not in FIELD_NAMES]
        if unknown:
            raise bad(origin, unknown[0], "unknown key")
        data = {**inherited, **data}
    p = params_from_dict(data, origin)
    if read is not None:
        read[path] = p
    return p


def _load_base(path: Path, base, shipped: Shipped | None, chain: tuple[str, ...],
               read: dict[Path, ModelParams] | None) -> ModelParams:
    """The model a file's ``base`` names (see load_model)."""
    origin = str(path)
    if not isinstance(base, str) or not base.strip():
        raise bad(origin, "base", f"{base!r} is not a model name")
    base = base.strip()
    beside = path.parent / (base if base.endswith(".toml") else f"{base}.toml")
    if beside.is_file():
        if str(beside.resolve()) in chain:
            raise bad(origin, "base", f"{base!r} leads back to this file (a cycle)")
        return read_model_file(beside, shipped, chain, read)
    try:
        if shipped is None:
            raise UserError(base)
        return shipped(base)
    except UserError:
        raise bad(origin, "base", f"no model {base!r} beside this file or among the shipped "
                                   "models") from None
