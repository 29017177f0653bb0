"""Writing an identified model as a file for models/.

The file has every ModelParams key, in the order of the shipped files, and
a ``# source:`` comment on each value saying where it came from: identified
from which observations, not separable (values that give the same bits on
every input of the plan's domain), or held fixed by the space searched.
It is written atomically and checked with ``tcsmt.model.params.load_model``
before it replaces anything.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tcsmt.errors import BadOption, UserError
from tcsmt.fileio import write_atomic
from tcsmt.model.catalogue import load_model
from tcsmt.model.params import FIELD_NAMES, LATER_DEFAULTS, ModelParams

KEY_ORDER = ["name", "arch", "description", "default", "devices", "instruction",
             "in_format", "b_format", "c_format", "out_format", "acc_format",
             "scale_format", "scale_block", "group_size", "scale_nan", "scale_zero", "scale_window_bits",
             "c_window_bits", "c_group_size", "c_group_window", "group_floor", "block_size", "align_bits",
             "carry_bits", "align_rounding", "c_lead_bits", "pair_sums", "normalisation", "add_order",
             "product_alignment",
             "min_exponent", "c_placement", "late_frac_bits", "product_groups",
             "late_sum_exponent", "late_c_window", "c_rounding", "term_order",
             "final_rounding", "final_frac_bits", "chaining", "subnormals", "overflow", "zero_sign",
             "product_overflow", "product_rounding", "nan_bits", "saturation", "sparsity",
             "sparse_order"]
assert sorted(KEY_ORDER) == sorted(FIELD_NAMES), "KEY_ORDER must list every ModelParams field"

NONE_WORD = {"carry_bits": "unbounded"}


def toml_value(key: str, v) -> str:
    if v is None:
        return json.dumps(NONE_WORD.get(key, "none"))
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(json.dumps(str(x)) for x in v) + "]"
    return json.dumps(str(v))


def render(p: ModelParams, sources: dict[str, str], header: list[str]) -> str:
    """TOML text: header comment lines, then every key with its source
    (a key of LATER_DEFAULTS only where it differs from that value)."""
    lines = [f"# {h}" for h in header]
    lines += ["# Model file of tcsmt: keys are ModelParams fields; every value names its source.", ""]
    for key in KEY_ORDER:
        if key in LATER_DEFAULTS and getattr(p, key) == LATER_DEFAULTS[key]:
            continue
        lines.append(f"# source: {' '.join(sources[key].split())}")
        lines.append(f"{key} = {toml_value(key, getattr(p, key))}")
    return "\n".join(lines) + "\n"


def write_model(path: str | Path, text: str) -> ModelParams:
    """Check the text with load_model from a temporary file beside ``path``,
    then rename it over ``path`` (a reader sees the old file or the new one)."""
    p = write_atomic(path, lambda f: f.write(text), check=load_model, suffix=".toml")
    assert p is not None            # the model load_model read from the written text
    return p


def identified_sources(members: list[ModelParams], axes: dict[str, list], evidence: str,
                       proof: str, space_name: str) -> dict[str, str]:
    """The source comment of every key for a class of equal hypotheses."""
    out = {}
    for key in KEY_ORDER:
        values = []
        for m in members:
            v = getattr(m, key)
            if v not in values:
                values.append(v)
        if key in ("name", "arch", "description", "default", "devices", "instruction"):
            out[key] = f"tcsmt identify ({evidence})"
        elif key in ("in_format", "b_format", "c_format", "out_format"):
            out[key] = f"the observations' formats ({evidence})"
        elif key in axes and len(values) == 1:
            out[key] = (f"identified from {evidence}: every hypothesis of the space {space_name} "
                        f"left has this value (the space tried {_list(axes[key])})")
        elif key in axes:
            out[key] = (f"not separable by any input of the plan's domain: {_list(values)} give the "
                        f"same bits ({proof}); the first is written; identified from {evidence}")
        else:
            out[key] = f"not identified: held fixed by the space {space_name} (its base model's value)"
    return out


def _list(values) -> str:
    return ", ".join("none" if v is None else str(v) for v in values)


def slug(text: str) -> str:
    keep = "".join(ch.lower() if ch.isalnum() else "-" for ch in text)
    while "--" in keep:
        keep = keep.replace("--", "-")
    return keep.strip("-") or "device"


def model_for_class(members: list[ModelParams], name: str, arch: str, device: str,
                    instruction: str, description: str) -> ModelParams:
    """The class's first member, named for the device it was identified on."""
    if not members:
        raise UserError("no hypothesis to write")
    return members[0].replace(name=name, arch=arch, devices=(device,) if device else (),
                              instruction=instruction, description=description, default=False)


# ---------------------------------------------------------------------------
# A model that starts from another (tcsmt model save)
# ---------------------------------------------------------------------------

def derived_text(name: str, base: ModelParams, base_ref: str, overrides: list[str],
                 source: str, description: str = "") -> tuple[str, ModelParams]:
    """A model file with ``base = "BASE_REF"`` and only what ``overrides``
    (``KEY=VALUE``) change, each key with its source line; and the model
    it describes (checked)."""
    from tcsmt.model.overrides import apply_overrides, parse_override
    changed = apply_overrides(base, list(overrides))
    keys = [k for k in KEY_ORDER if k in {parse_override(o)[0] for o in overrides}]
    same = [k for k in keys if getattr(changed, k) == getattr(base, k)]
    if same:
        raise UserError(f"--set {same[0]}={toml_value(same[0], getattr(base, same[0]))} is "
                        f"{base.name}'s own value: a saved model lists only what differs")
    desc = description or f"{base.name} with " + ", ".join(
        f"{k} = {toml_value(k, getattr(changed, k)).strip(chr(34))}" for k in keys)
    source = " ".join(source.split())
    text = starts_from(name, base, base_ref, changed, {k: source for k in keys}, "tcsmt model save", desc)
    return text, changed.replace(name=name, description=desc, default=False)


def starts_from(name: str, base: ModelParams, base_ref: str, model: ModelParams, sources: dict[str, str],
                made_by: str, description: str, header: tuple[str, ...] = ()) -> str:
    """Model file text: ``base = "BASE_REF"``, name and description, then
    every key where ``model`` differs from ``base``, each after its
    ``# source:`` line (``sources[key]``)."""
    keys = [k for k in KEY_ORDER if k not in ("name", "description", "default", "arch", "devices",
                                             "instruction") and getattr(model, k) != getattr(base, k)]
    lines = [f"# {name}: starts from {base.name} and changes {', '.join(keys) or 'nothing'}",
             *(f"# {h}" for h in header),
             "# Model file of tcsmt: keys are ModelParams fields; every value names its source.",
             "",
             "# source: the model this one starts from; every key not below is its value",
             f"base = {json.dumps(base_ref)}",
             f"# source: {made_by}", f"name = {json.dumps(name)}",
             f"# source: {made_by}", f"description = {json.dumps(description)}"]
    for k in keys:
        lines += [f"# source: {' '.join(sources[k].split())}", f"{k} = {toml_value(k, getattr(model, k))}"]
    return "\n".join(lines) + "\n"


MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,199}$")


def check_name(name: str) -> str:
    """A model's name: one word of letters, digits and . _ + - (it also
    names the file NAME.toml when no other is given); BadOption otherwise."""
    if not MODEL_NAME.match(name):
        raise BadOption(f"model name {name!r}: expected one word of letters, digits and . _ + - "
                        "(at most 200, not starting with . _ + or -)")
    return name


def save_derived(path: str | Path, name: str, base_spec: str, formats: str | None,
                 overrides: list[str], source: str = "", description: str = "") -> dict:
    """Write a model file that starts from ``base_spec`` (a shipped model,
    an architecture's model for ``formats``, or a model file) and changes
    ``overrides``; returns what was written. The file is checked with
    load_model before it replaces anything."""
    from tcsmt.model.choose import choose
    check_name(name)
    if not overrides:
        raise UserError("nothing to save: give the changes with --set KEY=VALUE")
    base = choose(base_spec, formats)
    ref = base.name
    if base_spec.endswith(".toml") or "/" in base_spec:
        import os
        ref = os.path.relpath(Path(base_spec).resolve(), Path(path).resolve().parent)
    source = source or ("tcsmt model save --set " + " --set ".join(overrides)
                        + ": a hypothesis to test, not a measured value")
    text, _ = derived_text(name, base, ref, overrides, source, description)
    saved = write_model(path, text)
    differs = {k: getattr(saved, k) for k in KEY_ORDER
               if k not in ("name", "description", "default", "devices", "instruction", "arch")
               and getattr(saved, k) != getattr(base, k)}
    return {"path": str(path), "name": saved.name, "base": ref, "differs": differs}
