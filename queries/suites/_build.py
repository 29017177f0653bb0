"""Writes the shipped suite files from the transcriptions in _fasi.py and
_khattak.py.

    python -m tcsmt.queries.suites._build           # rewrite the JSON files
    python -m tcsmt.queries.suites._build --check   # exit 1 if one differs

Values are written as exact expressions ("1 - 2^-24"); this module encodes
each one in its format with tcsmt.sim.dot.to_bits (which refuses a value
the format cannot hold exactly), so the hex beside it is right by
construction. Expected outputs are the papers' values, never a model's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tcsmt.cases.suite_file import SCHEMA, suite_from_dict
from tcsmt.fileio import write_text_atomic
from tcsmt.model.exact import parse_exact
from tcsmt.model.formats import format_value, get_format
from tcsmt.sim.dot import to_bits

HERE = Path(__file__).resolve().parent

# Format triples (in, c, out) by group name.
GROUPS = {
    "fp16-fp32": ("float16", "float32", "float32"),
    "fp16-fp16": ("float16", "float16", "float16"),
    "bf16-fp32": ("bfloat16", "float32", "float32"),
    "tf32-fp32": ("tf32", "float32", "float32"),
    "e4m3-fp32": ("float8_e4m3fn", "float32", "float32"),
    "e5m2-fp32": ("float8_e5m2", "float32", "float32"),
}


def number(fmt_name: str, text: str) -> dict:
    """{"hex", "value", "decimal"} for an exact value in a format."""
    fmt = get_format(fmt_name)
    value = parse_exact(text)
    bits = to_bits(fmt, value)
    return {"hex": fmt.hex(bits), "value": text, "decimal": format_value(value)}


def claim(feature: str, parameter: str, reveals: str, expected: dict | None = None,
          relation: dict | None = None, basis: str = "") -> dict:
    """A claim; ``expected`` maps a device to the published output, written
    as an exact expression (encoded by ``vector`` in the output format)."""
    out = {"feature": feature, "parameter": parameter, "reveals": reveals}
    if basis:
        out["basis"] = basis
    out["expected"] = dict(expected or {})
    if relation:
        out["relation"] = relation
    return out


def vector(vid: str, group: str, description: str, a: list, b: list, c: str,
           claims: list, k: int | None = None, section: str = "", test: str = "",
           note: str = "") -> dict:
    """One vector of a group; a and b are padded with zeros to k terms."""
    fin, fc, fout = GROUPS[group]
    k = k or len(a)
    a = [str(x) for x in a] + ["0"] * (k - len(a))
    b = [str(x) for x in b] + ["0"] * (k - len(b))
    out = {"id": vid, "group": group, "description": description}
    if section:
        out["section"] = section
    if test:
        out["test"] = test
    out["formats"] = {"in": fin, "c": fc, "out": fout}
    out["k"] = k
    out["a"] = [number(fin, x) for x in a]
    out["b"] = [number(fin, x) for x in b]
    out["c"] = number(fc, str(c))
    if note:
        out["note"] = note
    out["claims"] = []
    for cl in claims:
        cl = dict(cl)
        cl["expected"] = {dev: number(fout, str(val)) for dev, val in cl["expected"].items()}
        out["claims"].append(cl)
    return out


def suite(name: str, title: str, source: str, note: str, vectors: list) -> dict:
    return {"schema": SCHEMA, "name": name, "title": title, "source": source,
            "note": note, "vectors": vectors}


def dumps(obj, indent: int = 0) -> str:
    """JSON with small objects and lists of numbers on one line each."""
    flat = json.dumps(obj, ensure_ascii=False)
    simple = not isinstance(obj, (dict, list)) or (
        len(flat) + indent <= 100 and not any(isinstance(v, (dict, list)) and v
                                              for v in (obj.values() if isinstance(obj, dict) else [])))
    if simple:
        return flat
    pad = " " * (indent + 2)
    if isinstance(obj, dict):
        items = [f"{pad}{json.dumps(k)}: {dumps(v, indent + 2)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + dumps(v, indent + 2) for v in obj]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def all_suites() -> dict[str, dict]:
    from tcsmt.queries.suites import _fasi, _khattak
    suites = {s["name"]: s for s in (*_fasi.suites(), _khattak.suite())}
    for name, data in suites.items():
        suite_from_dict(json.loads(json.dumps(data)), f"{name} (built)")   # same checks as loading
    return suites


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for name, data in all_suites().items():
        path = HERE / f"{name}.json"
        text = dumps(data) + "\n"
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(path.name)
        if not check:
            write_text_atomic(path, text)
            path.chmod(0o644)
    if check and stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    print(("checked" if check else "written") + f": {len(all_suites())} suites")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
