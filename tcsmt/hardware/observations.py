"""Observations: the bits a matrix unit returned for given inputs.

A probe written by ``tcsmt harness`` prints one JSON object of this schema;
recorded data (``tcsmt.hardware.recorded``) and a model run (``simulated_observations``)
are turned into the same shape, so ``tcsmt identify`` reads all three alike.

Schema ``tcsmt-observations/1``::

    {
      "schema": "tcsmt-observations/1",
      "source": "device" | "simulated" | "hwdata",   (optional)
      "device": "NVIDIA H100 80GB HBM3",       cudaGetDeviceProperties name,
                                                or the model / recording
      "compute_capability": "9.0",             "major.minor"; free text off a device
      "instruction": "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
      "formats": {"in": "float16", "c": "float32", "out": "float32"},
      "k": 16,                                 terms of every observation
      "layout_check": "ok",                    (optional) a probe's check that
                                                no other element of D was hit
      "known_problems": [{"rule": ..., "why": ...}],   (optional, recorded data)
      "observations": [
        {"index": 0,
         "a": ["0x3c00", ...],                 k hex patterns in formats.in
         "b": ["0x3c00", ...],                 k hex patterns in formats.in
         "c": "0x3f800000",                    in formats.c
         "d": "0x40000000"},                   the returned D[0][0], in formats.out
        ...
      ]
    }

Hex patterns are bit patterns in the format's storage width (tf32 as a
32-bit word whose low 13 bits are zero), never decimal values. Inputs
shorter than the instruction's k were padded with zero terms before they
ran, and are written padded: an observation is what the hardware computed.
Other keys (``generator``, ``vectors_sha256``, ``cuda_runtime``...) are kept
for the record and not interpreted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from tcsmt.errors import UserError
from tcsmt.model.formats import Format, get_format, parse_bits

SCHEMA = "tcsmt-observations/1"


@dataclass(frozen=True)
class Observation:
    index: int
    a: tuple[int, ...]      # bit patterns in in_format (not storage words)
    b: tuple[int, ...]
    c: int
    d: int


@dataclass
class ObservationSet:
    device: str
    compute_capability: str
    instruction: str
    fin: Format
    fc: Format
    fout: Format
    k: int
    rows: list[Observation]
    meta: dict = field(default_factory=dict)    # every other top-level key

    def formats(self) -> dict[str, str]:
        return {"in": self.fin.name, "c": self.fc.name, "out": self.fout.name}


def hex_bits(text, fmt: Format, where: str) -> int:
    if not isinstance(text, str):
        raise UserError(f"{where}: expected a hex string such as \"0x3c00\", got {text!r}")
    try:
        return parse_bits(text, fmt)
    except UserError as e:
        raise UserError(f"{where}: {e}") from None


def parse_formats(obj, where: str) -> tuple[Format, Format, Format]:
    """{"in": ..., "c": ..., "out": ...} -> three Formats (aliases allowed)."""
    if not isinstance(obj, dict) or not all(isinstance(obj.get(x), str) for x in ("in", "c", "out")):
        raise UserError(f"{where}: \"formats\" must be an object with string keys in, c and out")
    try:
        return get_format(obj["in"]), get_format(obj["c"]), get_format(obj["out"])
    except UserError as e:
        raise UserError(f"{where}: formats: {e}") from None


def parse_observations(data, where: str = "observations") -> ObservationSet:
    """Validate a decoded JSON object of the schema; one-line UserErrors."""
    if not isinstance(data, dict):
        raise UserError(f"{where}: expected a JSON object")
    if data.get("schema") != SCHEMA:
        raise UserError(f"{where}: schema is {data.get('schema')!r}, expected {SCHEMA!r}")
    for key in ("device", "compute_capability", "instruction"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise UserError(f"{where}: \"{key}\" must be a non-empty string")
    check = data.get("layout_check", "ok")
    if check != "ok":
        raise UserError(f"{where}: the probe's layout check failed ({check}): "
                        "its d values are not trustworthy")
    fin, fc, fout = parse_formats(data.get("formats"), where)
    k = data.get("k")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise UserError(f"{where}: \"k\" must be a positive integer")
    obs = data.get("observations")
    if not isinstance(obs, list) or not obs:
        raise UserError(f"{where}: \"observations\" must be a non-empty list")
    rows = [_parse_row(o, n, fin, fc, fout, k, where) for n, o in enumerate(obs)]
    meta = {key: v for key, v in data.items() if key not in (
        "device", "compute_capability", "instruction", "formats", "k", "observations")}
    return ObservationSet(data["device"], data["compute_capability"], data["instruction"],
                          fin, fc, fout, k, rows, meta)


def _parse_row(o, n: int, fin: Format, fc: Format, fout: Format, k: int, where: str) -> Observation:
    at = f"{where}: observations[{n}]"
    if not isinstance(o, dict):
        raise UserError(f"{at}: expected an object with index, a, b, c, d")
    index = o.get("index", n)
    if not isinstance(index, int) or isinstance(index, bool):
        raise UserError(f"{at}: \"index\" must be an integer")
    terms = {}
    for name in ("a", "b"):
        xs = o.get(name)
        if not isinstance(xs, list) or len(xs) != k:
            got = len(xs) if isinstance(xs, list) else type(xs).__name__
            raise UserError(f"{at}.{name}: expected a list of k = {k} hex patterns, got {got}")
        terms[name] = tuple(hex_bits(x, fin, f"{at}.{name}[{i}]") for i, x in enumerate(xs))
    c = hex_bits(o.get("c"), fc, f"{at}.c")
    d = hex_bits(o.get("d"), fout, f"{at}.d")
    return Observation(index, terms["a"], terms["b"], c, d)


def read_observations(path: str | Path) -> ObservationSet:
    """Read and validate an observations file (see the module docstring)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise UserError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise UserError(f"{path}: not JSON: {e.msg} at line {e.lineno}") from None
    return parse_observations(data, str(path))


def observation_dict(index: int, fin: Format, fc: Format, fout: Format,
                     a, b, c: int, d: int) -> dict:
    """One row of the schema from bit patterns (in the formats, not storage)."""
    return {"index": index, "a": [fin.hex(x) for x in a], "b": [fin.hex(x) for x in b],
            "c": fc.hex(c), "d": fout.hex(d)}


# ---------------------------------------------------------------------------
# Comparing observations with a model
# ---------------------------------------------------------------------------

@dataclass
class Comparison:
    model: str
    matched: int
    total: int
    mismatches: list[tuple[Observation, int]]     # (row, the model's d)

    @property
    def line(self) -> str:
        return f"{self.model}: {self.matched}/{self.total} rows match"


def compare(obs: ObservationSet, model) -> Comparison:
    """Run every observed input through ``model`` (a name or ModelParams)
    and count the rows whose d bits the model reproduces."""
    from tcsmt.sim.dot import dot_bits
    from tcsmt.sim.dot import model as get_model
    p = get_model(model)
    if (p.fin.name, p.fc.name, p.fout.name) != (obs.fin.name, obs.fc.name, obs.fout.name):
        raise UserError(f"model {p.name} computes {p.fin.name} x {p.fin.name} + {p.fc.name} -> "
                        f"{p.fout.name}; the observations are {obs.fin.name} x {obs.fin.name} + "
                        f"{obs.fc.name} -> {obs.fout.name}")
    bad = []
    for row in obs.rows:
        want = dot_bits(p, list(row.a), list(row.b), row.c)
        if want != row.d:
            bad.append((row, want))
    return Comparison(p.name, len(obs.rows) - len(bad), len(obs.rows), bad)
