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
            v = getattr(m, name)
            v = ("unbounded" if name == "carry_bits" else "none") if v is None else str(v)
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
            lines += ["", section or "Other"]
        default = "required in a model file" if d["required"] else f"default {_word(d)}"
        lines.append(f"  {d['name']}  ({default})")
        for label, text in (("meaning", d["meaning"]), ("values", d["values"]),
                            ("shipped models use", ", ".join(d["shipped"]))):
            lines += textwrap.wrap(f"{label}: {text}", width, initial_indent="    ",
                                   subsequent_indent="      ")
    return lines[1:]


def _word(d: dict) -> str:
    v = d["default"]
    if v is None:
        return "unbounded" if d["name"] == "carry_bits" else "none"
    return str(v)


def params_lines(doc: dict) -> list[str]:
    """What ``tcsmt params`` prints of its document (tcsmt.api.params)."""
    import textwrap
    lines = text_lines(doc["parameters"])
    lines.append("\nReference models (take the formats of what they are compared with):")
    lines += [textwrap.fill(f"{r['name']}: {r['meaning']}", 100, initial_indent="  ",
                            subsequent_indent="    ") for r in doc["references"]]
    return lines
