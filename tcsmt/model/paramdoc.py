"""``tcsmt params``: every model parameter, its values and its meaning.

Nothing here is a second copy of the documentation: the meanings are read
from the ``ModelParams`` docstring (each parameter is described there once,
as ``name: text`` under a heading), the values from the ``CHOICES`` table,
the format table and the field types, and the examples from the shipped
models.
"""

from __future__ import annotations

import dataclasses
import re

from tcsmt.model.choices import CHOICES, FORMAT_KEYS, OPTIONAL_FORMAT_KEYS, OPTIONAL_INT_KEYS
from tcsmt.model.params import FIELD_NAMES, ModelParams

DESCRIPTIVE = ("name", "arch", "devices", "instruction", "description", "default")


def docstring_entries() -> dict[str, tuple[str, str]]:
    """name -> (heading, meaning) from the ModelParams docstring."""
    out: dict[str, tuple[str, str]] = {}
    heading, names, words = "", list[str](), list[str]()

    def flush():
        for n in names:
            out[n] = (heading, " ".join(words))
    for line in (ModelParams.__doc__ or "").splitlines():
        m = re.match(r"^ {6}([a-z_]+(?:, [a-z_]+)*): (.*)$", line)
        if re.match(r"^ {4}[A-Z]", line):
            flush()
            heading, names, words = line.strip(), [], []
        elif re.match(r"^ {4}\S", line) and heading and not names:     # a heading's second line
            heading += " " + line.strip()
        elif m:
            flush()
            names, words = m.group(1).split(", "), [m.group(2).strip()]
        elif line.startswith(" " * 8) and names:
            words.append(line.strip())
    flush()
    return out


def _values(name: str, default) -> str:
    from tcsmt.model.formats import FORMATS
    if name in CHOICES:
        return ", ".join(CHOICES[name])
    if name in FORMAT_KEYS or name in OPTIONAL_FORMAT_KEYS:
        none = "none, " if default is None or name in OPTIONAL_FORMAT_KEYS else ""
        return none + "a format: " + ", ".join(sorted(FORMATS))
    if name in OPTIONAL_INT_KEYS:
        word = "unbounded" if name == "carry_bits" else "none"
        return f"an integer, or {word}"
    if name in ("block_size", "align_bits", "group_size"):
        return "an integer"
    if name == "nan_bits":
        return "none, or a hex pattern of a NaN in out_format"
    return "text"


def parameter_docs() -> list[dict]:
    """One record per parameter that changes the arithmetic: name, section,
    allowed values, default (None when every model file must give it),
    meaning, and the values the shipped models use."""
    from tcsmt.model.catalogue import all_models
    entries = docstring_entries()
    fields = {f.name: f for f in dataclasses.fields(ModelParams)}
    shipped = all_models()
    out = []
    for name in FIELD_NAMES:
        if name in DESCRIPTIVE:
            continue
        f = fields[name]
        required = f.default is dataclasses.MISSING
        heading, meaning = entries.get(name, ("", ""))
        used = []
        for m in shipped:
            v = value_word(name, getattr(m, name))
            if v not in used:
                used.append(v)
        out.append({"name": name, "section": heading, "values": _values(name, f.default),
                    "default": None if required else f.default, "required": required,
                    "meaning": meaning, "shipped": used})
    order = list(entries)
    return sorted(out, key=lambda d: order.index(d["name"]) if d["name"] in order else len(order))


def text_lines(docs: list[dict], width: int = 100) -> list[str]:
    """The parameters as plain text, wrapped to ``width`` columns."""
    import textwrap
    lines, section = [], None
    for d in docs:
        if d["section"] != section:
            section = d["section"]
            lines += ["", *textwrap.wrap(section or "Other", width, subsequent_indent="  ")]
        default = "required in a model file" if d["required"] else f"default {_word(d)}"
        lines.append(f"  {d['name']}  ({default})")
        for label, text in (("meaning", d["meaning"]), ("values", d["values"]),
                            ("shipped models use", ", ".join(d["shipped"]))):
            lines += textwrap.wrap(f"{label}: {text}", width, initial_indent="    ",
                                   subsequent_indent="      ")
    return lines[1:]


def _word(d: dict) -> str:
    return value_word(d["name"], d["default"])


def params_lines(doc: dict) -> list[str]:
    """What ``tcsmt params`` prints of its document (tcsmt.api.params)."""
    import textwrap
    lines = text_lines(doc["parameters"])
    lines.append("\nReference models (take the formats of what they are compared with):")
    lines += [textwrap.fill(f"{r['name']}: {r['meaning']}", 100, initial_indent="  ",
                            subsequent_indent="    ") for r in doc["references"]]
    return lines


# ---------------------------------------------------------------------------
# One model's values (tcsmt params --arch X)
# ---------------------------------------------------------------------------

def file_sources(path: str, seen: tuple = ()) -> dict[str, str]:
    """key -> the text of its ``# source:`` line in a model file, and, for
    keys the file leaves to its ``base``, in the base's file. A key the file
    sets without a source line is said to be set there (its base's source
    was for another value)."""
    import json
    from pathlib import Path

    from tcsmt.fileio import text_or_none
    from tcsmt.model.catalogue import by_name, models_of
    text = text_or_none(path)      # a bounded read of a regular file
    if text is None:
        return {}
    lines = text.splitlines()
    out: dict[str, str] = {}
    base = None
    for prev, line in zip(["", *lines], lines):
        m = re.match(r"^([a-z_]+)\s*=\s*(.*)$", line)
        if not m:
            continue
        if m.group(1) == "base":
            base = json.loads(m.group(2)) if m.group(2).startswith('"') else m.group(2)
        elif prev.startswith("# source:"):
            out[m.group(1)] = prev[len("# source:"):].strip()
        else:
            out[m.group(1)] = f"set in {Path(path).name} (no # source: line)"
    if base and base not in seen:
        named = by_name().get(base) or next((x for x in models_of(base) if x.default), None)
        if named is not None and named.source_file:
            out = {**file_sources(named.source_file, (*seen, base)), **out}
    return out


def value_word(name: str, value) -> str:
    """A parameter's value as model files write it: None is "unbounded"
    for carry_bits, "none" elsewhere."""
    if value is None:
        return "unbounded" if name == "carry_bits" else "none"
    return str(value)


def model_values(p: ModelParams, overrides=()) -> dict:
    """A model's values, each with its section and where it comes from:
    {"model", "description", "devices", "instruction", "file", "parameters":
    [{"name", "section", "value", "source"}]}; source None: the default,
    which the file does not set."""
    sources = file_sources(p.source_file) if p.source_file else {}
    changed = {o.split("=", 1)[0].strip() for o in overrides}
    entries = docstring_entries()
    rows = []
    for name in FIELD_NAMES:
        if name in DESCRIPTIVE:
            continue
        source = "changed by --set (overrides=)" if name in changed else sources.get(name, "")
        rows.append({"name": name, "section": entries.get(name, ("", ""))[0],
                     "value": value_word(name, getattr(p, name)),
                     "source": source or None})
    order = list(entries)
    rows.sort(key=lambda d: order.index(d["name"]) if d["name"] in order else len(order))
    return {"model": p.name, "description": p.description, "devices": list(p.devices),
            "instruction": p.instruction, "file": p.source_file, "parameters": rows}


def model_values_lines(doc: dict, width: int = 100, sources: bool = True) -> list[str]:
    """What ``tcsmt params --arch X`` prints: the model's values by section,
    each with its source."""
    import textwrap
    lines = [f"{doc['model']}: {doc['description']}"]
    lines += textwrap.wrap(f"devices {', '.join(doc['devices']) or '-'}; instruction {doc['instruction']}",
                           width, initial_indent="  ", subsequent_indent="    ")
    if doc["file"]:
        lines.append(f"  file {doc['file']}")
    section = None
    pad = max(len(r["name"]) for r in doc["parameters"]) + 2
    for r in doc["parameters"]:
        if r["section"] != section:
            section = r["section"]
            lines += textwrap.wrap(section or "Other", width, subsequent_indent="  ")
        lines.append(f"  {r['name']:<{pad}}{r['value']}" + ("" if r["source"] else "  (default)"))
        if sources and r["source"]:
            lines += textwrap.wrap(f"source: {r['source']}", width, initial_indent=" " * (pad + 4),
                                   subsequent_indent=" " * (pad + 6), break_long_words=False)
    return lines
