"""Published test suites as data: the shipped suites, and running them.

A suite file (schema "tcsmt-suite/1", described in tcsmt.cases.suite_file) holds
the test vectors a paper published, each with the claims the paper makes
about it: which feature of the hardware the vector reveals, which model
parameter that is, and the output the paper reports for each device. The
shipped suites live in ``queries/suites/`` (installed as the package data
``tcsmt.queries.suites``); ``find_suite("fasi-a100")`` loads one.

``claims(suite)`` gives every (vector, claim) pair, ``vector_inputs`` a
vector's bit patterns in a model's formats, ``evaluate`` a model's output
for every vector in its formats, and ``check_suite`` every published
expectation against the shipped model of its device.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tcsmt.cases.suite_file import (  # noqa: F401
    DEVICE_ARCH,
    SCHEMA,
    Claim,
    Formats,
    Number,
    Relation,
    Suite,
    Vector,
    load_suite,
    suite_from_dict,
)
from tcsmt.errors import UserError
from tcsmt.fileio import data_folder
from tcsmt.model.exact import parse_exact  # noqa: F401  (part of this module's interface)
from tcsmt.model.formats import Format, format_value, get_format
from tcsmt.model.params import ModelParams
from tcsmt.sim.dot import Result, dot_bits, to_bits

# ---------------------------------------------------------------------------
# The shipped suites
# ---------------------------------------------------------------------------

def suites_dir() -> Path:
    """Folder of the shipped suite files (package data, or the checkout's)."""
    d = data_folder("tcsmt.queries.suites", "queries/suites", "*.json")
    if d is None:
        raise UserError("no suite files found: is tcsmt installed with its package data?")
    return d


def list_suites() -> list[str]:
    """Names of the shipped suites."""
    return sorted(p.stem for p in suites_dir().glob("*.json"))


def find_suite(spec: str) -> Suite:
    """A suite by file path or by the name of a shipped one (fasi-v100)."""
    spec = str(spec).strip()
    if spec.endswith(".json") or "/" in spec:
        return load_suite(spec)
    path = suites_dir() / f"{spec}.json"
    if not path.is_file():
        raise UserError(f"unknown suite {spec!r} (shipped: {', '.join(list_suites())})")
    return load_suite(path)


# ---------------------------------------------------------------------------
# Using a suite
# ---------------------------------------------------------------------------

def claims(suite: Suite) -> Iterator[tuple[Vector, Claim]]:
    """Every (vector, claim) pair, in file order."""
    for v in suite.vectors:
        for cl in v.claims:
            yield v, cl


def vector_inputs(vector: Vector, fmt: ModelParams | Formats | dict | None = None
                  ) -> tuple[list[int], list[int], int]:
    """(a_bits, b_bits, c_bits) of a vector in the formats of ``fmt`` (a
    model, a Formats, or a dict with "in" and "c"); the vector's own bits
    when the formats are its own, else its exact values encoded again
    (UserError when a value does not fit the other format exactly)."""
    if fmt is None:
        fin, fc = vector.formats.fin, vector.formats.fc
    elif isinstance(fmt, ModelParams):
        fin, fc = fmt.fin, fmt.fc
    elif isinstance(fmt, Formats):
        fin, fc = fmt.fin, fmt.fc
    else:
        fin, fc = get_format(fmt["in"]), get_format(fmt["c"])

    def encode(n: Number, mine: Format, want: Format, what: str) -> int:
        if mine.name == want.name:
            return n.bits
        if mine.is_negative_zero(n.bits):
            return want.pack(1, 0, 0)
        try:
            return to_bits(want, n.value)
        except UserError:
            raise UserError(f"vector {vector.id}: {what} = {n.text} is not exactly "
                            f"representable in {want.name}") from None

    a = [encode(n, vector.formats.fin, fin, f"a[{i}]") for i, n in enumerate(vector.a)]
    b = [encode(n, vector.formats.fin, fin, f"b[{i}]") for i, n in enumerate(vector.b)]
    return a, b, encode(vector.c, vector.formats.fc, fc, "c")


def evaluate(suite: Suite, model: ModelParams | str) -> dict[str, Result]:
    """The model's output for every vector of the suite in the model's
    formats (vector id -> Result); vectors in other formats are left out."""
    from tcsmt.sim.dot import model as resolve_model
    p = resolve_model(model) if isinstance(model, str) else model
    out: dict[str, Result] = {}
    for v in suite.vectors:
        if v.formats.matches(p):
            a, b, c = vector_inputs(v)
            out[v.id] = Result(dot_bits(p, a, b, c), p.fout)
    if not out:
        raise UserError(f"suite {suite.name} has no vector in {p.name}'s formats "
                        f"({p.in_format}, c {p.c_format}, out {p.out_format})")
    return out


def device_model(device: str, formats: Formats) -> ModelParams:
    """The shipped model of a device's architecture in the given formats
    (the plain ARCH-IN-OUT one where the architecture has variants)."""
    from tcsmt.model.catalogue import all_models
    from tcsmt.model.names import short_format
    arch = DEVICE_ARCH.get(device)
    if arch is None:
        raise UserError(f"unknown device {device!r} (known: {', '.join(DEVICE_ARCH)})")
    found = [m for m in all_models() if m.arch == arch and formats.matches(m)]
    if not found:
        raise UserError(f"no shipped {arch} model for {formats.fin.name} inputs, "
                        f"{formats.fc.name} c, {formats.fout.name} output")
    plain = f"{arch}-{short_format(formats.fin.name)}-{short_format(formats.fout.name)}"
    return next((m for m in found if m.name == plain), found[0])


@dataclass(frozen=True)
class Check:
    """One published expectation against one model."""
    vector: Vector
    claim: Claim
    device: str
    model: str
    kind: str            # "expected" or "relation"
    want: str            # what the paper says, readable
    got: str             # what the model gives, readable
    holds: bool


def compare_values(op: str, x, y) -> bool:
    if op == "<":
        return x < y
    if op == ">":
        return x > y
    return x != y


def check_suite(suite: Suite, overrides: dict[str, dict] | None = None) -> list[Check]:
    """Every published expectation of the suite against the shipped model of
    its device (``device_model``); ``overrides`` maps a device to parameter
    changes for its models, such as {"T4": {"block_size": 4}}."""
    results: list[Check] = []
    cache: dict[tuple[str, str], tuple[ModelParams, int]] = {}

    def output(v: Vector, device: str) -> tuple[ModelParams, int]:
        key = (v.id, device)
        if key not in cache:
            p = device_model(device, v.formats)
            changes = (overrides or {}).get(device)
            if changes:
                label = ",".join(f"{k}={x}" for k, x in changes.items())
                p = p.replace(name=f"{p.name}[{label}]", **changes)
            cache[key] = (p, dot_bits(p, *vector_inputs(v)))
        return cache[key]

    for v, cl in claims(suite):
        fout = v.formats.fout
        for device, num in cl.expected.items():
            p, bits = output(v, device)
            results.append(Check(v, cl, device, p.name, "expected",
                                 f"{fout.hex(num.bits)} = {num.decimal}",
                                 f"{fout.hex(bits)} = {format_value(fout.value(bits))}",
                                 bits == num.bits))
        r = cl.relation
        if r is None:
            continue
        for device in r.devices:
            p, bits = output(v, device)
            mine = fout.value(bits)
            if r.vector is not None:
                _, other_bits = output(suite.vector(r.vector), device)
                other, what = fout.value(other_bits), f"d({r.vector})"
            else:
                assert r.value is not None      # a relation compares with a vector's d or a value
                other, what = r.value, format_value(r.value)
            ok = compare_values(r.op, mine, other)      # a NaN output compares as IEEE says
            results.append(Check(v, cl, device, p.name, "relation",
                                 f"d {r.op} {what}",
                                 f"{format_value(mine)} vs {format_value(other)}", ok))
    return results
