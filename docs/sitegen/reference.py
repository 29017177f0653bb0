"""Reference pages read from the code: the model parameters (the record
``tcsmt params`` prints), the properties (``tcsmt properties``), and the
list of shipped models (``tcsmt models``)."""

from __future__ import annotations

from sitegen.units import _table, models_table
from tcsmt import api
from tcsmt.model import catalogue
from tcsmt.model.paramdoc import parameter_docs
from tcsmt.model.reference import REFERENCES


def parameters_page() -> str:
    lines = ["# Model parameters", "",
             "*Generated from `tcsmt.model.params.ModelParams` and the shipped models when this "
             "site was built; `tcsmt params` prints the same.*", "",
             "Every key of a model file (`models/*.toml`) and of `--set KEY=VALUE` on every command "
             "that takes a model. A model file gives every required key, each with a `# source:` "
             "comment saying where its value comes from.", ""]
    section = None
    for d in parameter_docs():
        if d["section"] != section:
            section = d["section"]
            lines += [f"## {section or 'Other'}", ""]
        if d["required"]:
            default = "required in a model file"
        elif d["default"] is None:
            default = "default " + ("unbounded" if d["name"] == "carry_bits" else "none")
        else:
            default = f"default `{d['default']}`"
        lines += [f"### `{d['name']}`", "", f"{d['meaning']}", "",
                  f"- {default}", f"- values: {d['values']}",
                  f"- the shipped models use: {', '.join(d['shipped'])}", ""]
    lines += ["## Reference models", "",
              "Usable wherever a model is (`--arch fma-chain`, `tcsmt diff hopper fma-chain`), in the "
              "formats of what they are compared with.", "",
              *_table(["name", "what it computes"], [[f"`{n}`", d] for n, (d, _) in REFERENCES.items()])]
    return "\n".join(lines) + "\n"


def properties_page() -> str:
    lines = ["# Properties", "",
             "*Generated from `queries/` (the property registry) when this site was built; "
             "`tcsmt properties --arch ARCH` prints the same for any architecture.*", "",
             "Each property is a question about one or more model parameters: its hypotheses are "
             "the values it tells apart, stated as changes of the architecture's model. "
             "`tcsmt find PROPERTY --arch ARCH` answers it with the fewest vectors that separate "
             "every pair of hypotheses that can be separated, and a proof for each pair that cannot.",
             "", "Hypotheses as asked of `ampere-fp16-fp32` (and `blackwell-nvfp4` for the "
             "block-scaled properties):", ""]
    scaled = {r["property"]: r for r in api.properties("blackwell-nvfp4")}
    rows = []
    for r in api.properties("ampere"):
        if "not_applicable" in r and "not_applicable" not in scaled.get(r["property"], r):
            r = scaled[r["property"]]
        hyps = ", ".join(r.get("hypotheses", [])) or "-"
        if "not_applicable" in r:
            hyps = f"(not here: {r['not_applicable'].split(': ', 1)[-1]})"
        rows.append([f"`{r['property']}`", ", ".join(f"`{p}`" for p in r["parameters"]), hyps,
                     r["description"]])
    lines += _table(["property", "parameters", "hypotheses", "question"], rows)
    return "\n".join(lines) + "\n"


def models_page() -> str:
    lines = ["# Shipped models", "",
             "*Generated from `models/*.toml` when this site was built; `tcsmt models` prints the "
             "same.*", "",
             "`*` marks an architecture's default model (`--arch ARCH` picks it; `--formats IN:OUT` "
             "another). block: products summed before one normalisation; align: fraction bits kept "
             "below the accumulator's last bit when terms are aligned; carry: integer bits above the "
             "largest term (- no limit); rounding: of the result; scales: scale format / terms per "
             "scale.", ""]
    for arch in catalogue.architectures():
        lines += [f"## [{arch}](../units/{arch}.md)", "", *models_table(catalogue.models_of(arch))]
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    return {"reference/parameters.md": parameters_page(), "reference/properties.md": properties_page(),
            "reference/models.md": models_page()}

