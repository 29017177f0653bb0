"""The suite file format (schema "tcsmt-suite/1"): records, and loading
with a complete check of the file.

A suite file (JSON) holds the test vectors a paper published, each with the
claims the paper makes about it: which feature of the hardware the vector
reveals, which model parameter that feature is, and the output the paper
reports for each device (tcsmt.cases.suites runs them).

Layout of a file::

    {"schema": "tcsmt-suite/1", "name": "fasi-v100", "source": "...",
     "formats": {"in": "float16", "c": "float32", "out": "float32"},  # default
     "k": 4,                                                           # default
     "vectors": [
       {"id": "fp16-fp32.align-bits", "description": "...",
        "group": "fp16-fp32", "section": "...", "test": "...",  # optional
        "formats": {...}, "k": 4,                    # optional overrides
        "a": [{"hex": "0x3c00", "value": "1", "decimal": "1"}, ...],
        "b": [...], "c": {"hex": "0xbf7fffff", "value": "-(1 - 2^-24)", ...},
        "note": "...",                               # optional
        "claims": [{"feature": "...", "parameter": "align_bits",
                    "reveals": "...", "basis": "...",             # basis optional
                    "expected": {"V100": {"hex": "0x34000000", "value": "2^-23",
                                          "decimal": "..."}},
                    "relation": {"op": "<", "vector": "other-id",  # optional
                                 "devices": ["V100"]}}]}]}

Every operand carries its bit pattern in its own format and its exact value
side by side; the loader checks that they agree, so a typo in either is
caught. ``expected`` holds published hardware outputs, in the output format.
A ``relation`` holds a published claim that compares two outputs ("<", ">",
"!=" another vector's output on the same device, or a fixed "value").
Anything malformed raises a one-line UserError naming the file and the key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from tcsmt.errors import UserError
from tcsmt.fileio import read_json
from tcsmt.model.exact import parse_exact, parse_value_text
from tcsmt.model.formats import Format, format_value, get_format, parse_bits
from tcsmt.model.params import FIELD_NAMES, ModelParams

SCHEMA = "tcsmt-suite/1"

# The devices a suite may name, and the architecture of each: a device's
# expectation is checked against the shipped model of that architecture
# whose formats are the vector's.
DEVICE_ARCH = {
    "V100": "volta",
    "T4": "turing",
    "A100": "ampere",
    "RTX 3060": "ampere",
    "RTX 1000 Ada": "ada",
}

RELATION_OPS = ("<", ">", "!=")
TOP_KEYS = {"schema", "name", "title", "source", "formats", "k", "note", "vectors"}
VECTOR_KEYS = {"id", "description", "group", "section", "test", "formats", "k",
               "a", "b", "c", "note", "claims"}
CLAIM_KEYS = {"feature", "parameter", "reveals", "basis", "expected", "relation"}
PARAMETERS = [f for f in FIELD_NAMES
              if f not in ("name", "arch", "devices", "instruction", "description", "default")]

# ---------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Formats:
    fin: Format
    fc: Format
    fout: Format

    def as_dict(self) -> dict:
        return {"in": self.fin.name, "c": self.fc.name, "out": self.fout.name}

    def matches(self, p: ModelParams) -> bool:
        return (self.fin.name, self.fc.name, self.fout.name) == (p.fin.name, p.fc.name, p.fout.name)


@dataclass(frozen=True)
class Number:
    """One bit pattern with the exact value it stands for."""
    bits: int
    value: Fraction | float
    text: str            # the readable form as written in the file

    @property
    def decimal(self) -> str:
        return format_value(self.value)


@dataclass(frozen=True)
class Relation:
    op: str
    vector: str | None
    value: Fraction | None
    devices: tuple[str, ...]


@dataclass(frozen=True)
class Claim:
    feature: str
    parameter: str
    reveals: str
    expected: dict          # device -> Number, in the vector's output format
    relation: Relation | None = None
    basis: str = ""


@dataclass(frozen=True)
class Vector:
    id: str
    description: str
    formats: Formats
    a: tuple[Number, ...]
    b: tuple[Number, ...]
    c: Number
    claims: tuple[Claim, ...]
    group: str = ""
    note: str = ""
    section: str = ""       # where in the paper
    test: str = ""          # the name of the test in the authors' program

    @property
    def k(self) -> int:
        return len(self.a)


@dataclass(frozen=True)
class Suite:
    name: str
    source: str
    vectors: tuple[Vector, ...]
    path: str = ""
    title: str = ""
    note: str = ""

    def vector(self, vid: str) -> Vector:
        for v in self.vectors:
            if v.id == vid:
                return v
        raise UserError(f"suite {self.name}: no vector {vid!r}")

# ---------------------------------------------------------------------------
# Checking a file
# ---------------------------------------------------------------------------

class _Ctx:
    """The file name, for one-line errors naming the file and the key."""

    def __init__(self, origin: str):
        self.origin = origin

    def fail(self, key: str, msg: str) -> UserError:
        return UserError(f"{self.origin}: key '{key}': {msg}")

    def text(self, obj: dict, key: str, where: str, required: bool = True) -> str:
        if key not in obj:
            if required:
                raise self.fail(f"{where}{key}", "missing")
            return ""
        v = obj[key]
        if not isinstance(v, str) or (required and not v.strip()):
            raise self.fail(f"{where}{key}", "expected a non-empty string")
        return v

    def dict_(self, v, key: str) -> dict:
        if not isinstance(v, dict):
            raise self.fail(key, "expected an object")
        return v

    def list_(self, v, key: str, nonempty: bool = True) -> list:
        if not isinstance(v, list) or (nonempty and not v):
            raise self.fail(key, "expected a non-empty list")
        return v

    def unknown(self, obj: dict, allowed: set, where: str) -> None:
        extra = sorted(set(obj) - allowed)
        if extra:
            raise self.fail(f"{where}{extra[0]}", "unknown key")


def _formats(ctx: _Ctx, raw, key: str) -> Formats:
    raw = ctx.dict_(raw, key)
    ctx.unknown(raw, {"in", "c", "out"}, f"{key}.")
    out = []
    for part in ("in", "c", "out"):
        name = ctx.text(raw, part, f"{key}.")
        try:
            out.append(get_format(name))
        except UserError as e:
            raise ctx.fail(f"{key}.{part}", str(e)) from None
    return Formats(*out)


def _number(ctx: _Ctx, raw, key: str, fmt: Format) -> Number:
    """An operand or output: hex bits and readable value, which must agree."""
    raw = ctx.dict_(raw, key)
    ctx.unknown(raw, {"hex", "value", "decimal"}, f"{key}.")
    hx = ctx.text(raw, "hex", f"{key}.")
    try:
        bits = parse_bits(hx, fmt)
    except UserError as e:
        raise ctx.fail(f"{key}.hex", str(e)) from None
    actual = fmt.value(bits)
    text = ctx.text(raw, "value", f"{key}.")
    try:
        written = parse_value_text(text)
    except (ValueError, ZeroDivisionError) as e:
        raise ctx.fail(f"{key}.value", f"{text!r} is not an exact value ({e})") from None
    if fmt.classify(bits) == "nan":
        same = isinstance(written, float) and written != written
    elif actual == 0:
        # a zero: the written sign must be the sign bit
        same = written == 0 and text.strip().startswith("-") == bool(bits >> (fmt.bits - 1))
    else:
        same = written == actual
    if not same:
        raise ctx.fail(f"{key}.value", f"{text} is not the value of {hx} in {fmt.name} "
                                       f"({format_value(actual)})")
    if "decimal" in raw:
        dec = raw["decimal"]
        want = "-0" if fmt.is_negative_zero(bits) else format_value(actual)
        if dec != want:
            raise ctx.fail(f"{key}.decimal", f"{dec!r} is not the value of {hx} ({want})")
    return Number(bits, actual, text)


def _relation(ctx: _Ctx, raw, key: str) -> Relation:
    raw = ctx.dict_(raw, key)
    ctx.unknown(raw, {"op", "vector", "value", "devices"}, f"{key}.")
    op = ctx.text(raw, "op", f"{key}.")
    if op not in RELATION_OPS:
        raise ctx.fail(f"{key}.op", f"{op!r} is not one of {', '.join(RELATION_OPS)}")
    if ("vector" in raw) == ("value" in raw):
        raise ctx.fail(key, "give exactly one of 'vector' and 'value'")
    value = None
    if "value" in raw:
        try:
            value = parse_exact(ctx.text(raw, "value", f"{key}."))
        except (ValueError, ZeroDivisionError) as e:
            raise ctx.fail(f"{key}.value", f"not an exact value ({e})") from None
    vector = ctx.text(raw, "vector", f"{key}.") if "vector" in raw else None
    devices = ctx.list_(raw.get("devices"), f"{key}.devices")
    for i, d in enumerate(devices):
        if d not in DEVICE_ARCH:
            raise ctx.fail(f"{key}.devices[{i}]", f"unknown device {d!r} (known: {', '.join(DEVICE_ARCH)})")
    return Relation(op, vector, value, tuple(devices))


def _claim(ctx: _Ctx, raw, key: str, fout: Format) -> Claim:
    raw = ctx.dict_(raw, key)
    ctx.unknown(raw, CLAIM_KEYS, f"{key}.")
    feature = ctx.text(raw, "feature", f"{key}.")
    parameter = ctx.text(raw, "parameter", f"{key}.")
    if parameter not in PARAMETERS:
        raise ctx.fail(f"{key}.parameter", f"{parameter!r} is not a model parameter")
    reveals = ctx.text(raw, "reveals", f"{key}.")
    basis = ctx.text(raw, "basis", f"{key}.", required=False)
    expected = {}
    for device, num in ctx.dict_(raw.get("expected", {}), f"{key}.expected").items():
        if device not in DEVICE_ARCH:
            raise ctx.fail(f"{key}.expected.{device}", f"unknown device (known: {', '.join(DEVICE_ARCH)})")
        expected[device] = _number(ctx, num, f"{key}.expected.{device}", fout)
    relation = _relation(ctx, raw["relation"], f"{key}.relation") if "relation" in raw else None
    return Claim(feature, parameter, reveals, expected, relation, basis)


_ID = re.compile(r"^[a-z0-9][a-z0-9.+-]*$")


def _vector(ctx: _Ctx, raw, i: int, defaults: dict) -> Vector:
    where = f"vectors[{i}]"
    raw = ctx.dict_(raw, where)
    ctx.unknown(raw, VECTOR_KEYS, f"{where}.")
    vid = ctx.text(raw, "id", f"{where}.")
    if not _ID.match(vid):
        raise ctx.fail(f"{where}.id", f"{vid!r}: use lower-case letters, digits, '.', '+' and '-'")
    where = f"vectors[{i}] ({vid})"
    if "formats" in raw:
        fm = _formats(ctx, raw["formats"], f"{where}.formats")
    elif defaults.get("formats") is not None:
        fm = defaults["formats"]
    else:
        raise ctx.fail(f"{where}.formats", "missing (and no top-level formats)")
    k = raw.get("k", defaults.get("k"))
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 4096:
        raise ctx.fail(f"{where}.k", f"{k!r} is not a vector length (give k here or at the top)")
    ops = {}
    for name in ("a", "b"):
        items = ctx.list_(raw.get(name), f"{where}.{name}")
        if len(items) != k:
            raise ctx.fail(f"{where}.{name}", f"has {len(items)} terms, k is {k}")
        ops[name] = tuple(_number(ctx, x, f"{where}.{name}[{j}]", fm.fin) for j, x in enumerate(items))
    if "c" not in raw:
        raise ctx.fail(f"{where}.c", "missing")
    c = _number(ctx, raw["c"], f"{where}.c", fm.fc)
    claims = tuple(_claim(ctx, x, f"{where}.claims[{j}]", fm.fout)
                   for j, x in enumerate(ctx.list_(raw.get("claims"), f"{where}.claims")))
    optional = {key: ctx.text(raw, key, f"{where}.", required=False)
                for key in ("group", "note", "section", "test")}
    return Vector(vid, ctx.text(raw, "description", f"{where}."), fm, ops["a"], ops["b"], c,
                  claims, **optional)


def suite_from_dict(data, origin: str) -> Suite:
    """Check a parsed suite file completely; UserError at the first problem."""
    ctx = _Ctx(origin)
    data = ctx.dict_(data, "(top level)")
    ctx.unknown(data, TOP_KEYS, "")
    schema = data.get("schema")
    if schema != SCHEMA:
        raise ctx.fail("schema", f"{schema!r} is not {SCHEMA!r}")
    name = ctx.text(data, "name", "")
    source = ctx.text(data, "source", "")
    defaults = {"formats": _formats(ctx, data["formats"], "formats") if "formats" in data else None,
                "k": data.get("k")}
    vectors = tuple(_vector(ctx, v, i, defaults)
                    for i, v in enumerate(ctx.list_(data.get("vectors"), "vectors")))
    seen: set[str] = set()
    for i, v in enumerate(vectors):
        if v.id in seen:
            raise ctx.fail(f"vectors[{i}].id", f"{v.id!r} appears twice")
        seen.add(v.id)
    for i, v in enumerate(vectors):
        for j, cl in enumerate(v.claims):
            r = cl.relation
            if r is None or r.vector is None:
                continue
            key = f"vectors[{i}] ({v.id}).claims[{j}].relation.vector"
            if r.vector not in seen:
                raise ctx.fail(key, f"no vector {r.vector!r} in this suite")
            other = next(w for w in vectors if w.id == r.vector)
            if other.formats != v.formats:
                raise ctx.fail(key, f"{r.vector!r} has other formats: outputs cannot be compared")
    return Suite(name, source, vectors, origin, ctx.text(data, "title", "", required=False),
                 ctx.text(data, "note", "", required=False))


def load_suite(path: str | Path) -> Suite:
    return suite_from_dict(read_json(path), str(path))
