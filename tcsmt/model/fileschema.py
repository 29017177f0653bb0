"""The JSON Schema of model files, generated from the model's own tables so it
cannot drift from what ``tcsmt.model.load`` reads: the keys are the fields
of ``ModelParams``, the values of each choice are ``CHOICES``, the formats
the format table's names and aliases, the descriptions the ModelParams
docstring (as ``tcsmt params`` shows them). ``$defs/value-NAME`` is the
value of parameter NAME.

The schema (tcsmt/schemas/model.schema.json) covers a model file's parsed
form (TOML read as a table) and, under ``$defs``, the pieces other
documents hold: ``parameters`` (a result's or plan's record of a model,
``ModelParams.parameter_dict()``), ``axes`` and ``settings`` (a space
file's). ``python -m tcsmt.model.fileschema`` writes it;
tests/test_schemas.py checks that the shipped file is what this writes.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from tcsmt.model.choices import CHOICES, FORMAT_KEYS, OPTIONAL_FORMAT_KEYS, OPTIONAL_INT_KEYS
from tcsmt.model.formats import ALIASES
from tcsmt.model.paramdoc import DESCRIPTIVE, docstring_entries
from tcsmt.model.params import FIELD_NAMES, REQUIRED, ModelParams

SCHEMA_ID = "urn:tcsmt:schema:model"
TARGET = Path(__file__).resolve().parent.parent / "schemas" / "model.schema.json"
NONE_WORDS = ["none", "None", "unbounded"]
NOT_AXES = ("name", "arch", "devices", "description", "default")
NEUTRAL = ("name", "arch", "devices", "instruction", "description", "default")


def _format() -> dict:
    return {"description": "A float format by name or alias (tcsmt formats), or eXmY for an "
                           "internal format with X exponent and Y fraction bits (e8m13); any "
                           "capitalisation reads the same.",
            "type": "string",
            "anyOf": [{"enum": sorted(ALIASES)}, {"pattern": "^[eE][0-9]+[mM][0-9]+$"}]}


def _value(name: str, kind: type | str) -> dict:
    """The schema of one field's value."""
    if name in CHOICES:
        return {"enum": list(CHOICES[name])}
    if name in FORMAT_KEYS or name in OPTIONAL_FORMAT_KEYS:
        if name in OPTIONAL_FORMAT_KEYS or name == "b_format":
            return {"anyOf": [{"$ref": "#/$defs/format"}, {"enum": ["none", "None"]}, {"type": "null"}]}
        return {"$ref": "#/$defs/format"}
    if name in OPTIONAL_INT_KEYS:
        return {"anyOf": [{"type": "integer"}, {"enum": NONE_WORDS}, {"type": "null"}]}
    if name == "nan_bits":
        return {"anyOf": [{"type": "string", "pattern": "^0[xX][0-9a-fA-F]+$"},
                          {"enum": ["none", "None"]}, {"type": "null"}]}
    if name == "devices":
        return {"type": "array", "items": {"type": "string"}}
    return {"type": {"int": "integer", "bool": "boolean", "str": "string"}[str(kind)]}


def _field_type(f: dataclasses.Field) -> str:
    return str(f.type).split(" |")[0]


def values() -> dict[str, dict]:
    """name -> the schema of its value, with its meaning from the docstring."""
    docs = docstring_entries()
    out = {}
    for f in dataclasses.fields(ModelParams):
        if f.name not in FIELD_NAMES:
            continue
        v = _value(f.name, _field_type(f))
        if f.name in docs:
            v = {"description": docs[f.name][1], **v}
        out[f.name] = v
    return out


def model_schema() -> dict:
    """The schema of a model file (see the module docstring)."""
    ref = {n: {"$ref": f"#/$defs/value-{n}"} for n in FIELD_NAMES}
    arithmetic = [n for n in FIELD_NAMES if n not in DESCRIPTIVE]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "tcsmt model file",
        "description": "A model file (TOML, models/*.toml): every choice of the block-FMA datapath, "
                       "keys exactly the fields of ModelParams. With base = NAME the file starts "
                       "from another model and lists only what differs. Generated from "
                       "ModelParams and tcsmt.model.choices by tcsmt.model.fileschema: do not edit.",
        "type": "object",
        "properties": {"base": {"description": "The model this file starts from: a file NAME.toml "
                                               "beside it, a shipped model, or a path ending in .toml.",
                                "type": "string", "minLength": 1}, **ref},
        "additionalProperties": False,
        "if": {"not": {"required": ["base"]}},
        "then": {"required": [n for n in REQUIRED if n != "name"]},
        "$defs": {
            "format": _format(),
            **{f"value-{n}": v for n, v in values().items()},
            "parameter_name": {"description": "A parameter that changes the arithmetic.",
                               "enum": arithmetic},
            "parameters": {
                "description": "A model as result files and plans record it "
                               "(ModelParams.parameter_dict(): the values that change the "
                               "arithmetic; None as null).",
                "type": "object",
                "properties": {n: ref[n] for n in arithmetic},
                "required": [n for n in REQUIRED if n in arithmetic],
                "additionalProperties": False},
            "axes": {
                "description": "Parameters a hypothesis space varies, each with its values.",
                "type": "object",
                "properties": {n: {"type": "array", "minItems": 1, "items": ref[n]}
                               for n in FIELD_NAMES if n not in NOT_AXES},
                "additionalProperties": False},
            "settings": {
                "description": "Parameters held at other values than the base model's.",
                "type": "object",
                "properties": {n: ref[n] for n in FIELD_NAMES if n not in NEUTRAL},
                "additionalProperties": False},
        },
    }


def text() -> str:
    return json.dumps(model_schema(), indent=2) + "\n"


if __name__ == "__main__":
    TARGET.write_text(text(), encoding="utf-8")
    print(f"wrote {TARGET}")
