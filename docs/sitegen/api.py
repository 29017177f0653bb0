"""The Python API reference: what ``tcsmt`` exports (its ``__all__``),
each name linked to where its docstring is rendered, then the modules a
user imports (mkdocstrings renders their docstrings)."""

from __future__ import annotations

import importlib

import tcsmt

MODULES = [("tcsmt.api", "One call per command"),
           ("tcsmt.testing", "A kernel's D against a model's, for pytest"),
           ("tcsmt.torch", "A unit's arithmetic inside PyTorch"),
           ("tcsmt.quant", "Rounding into formats, MX and NVFP4 quantisation")]
OBJECTS = [("tcsmt.sim.dot", ["dot", "model", "Result"]),
           ("tcsmt.model.params", ["ModelParams"]),
           ("tcsmt.model.catalogue", ["all_models", "load_model"]),
           ("tcsmt.model.choose", ["choose"]),
           ("tcsmt.testing.compare", ["compare"])]


def _where(name: str) -> str:
    """The anchor of the rendered docstring of ``tcsmt.NAME``."""
    obj = getattr(tcsmt, name)
    module = getattr(obj, "__module__", "") or ""
    target = getattr(obj, "__name__", name)
    if module.startswith("tcsmt.api"):
        return f"tcsmt.api.{target}"
    return f"{module}.{target}"


def _first_sentence(obj) -> str:
    text = " ".join((getattr(obj, "__doc__", "") or "").split())
    if type(obj).__name__ == "type" and text.startswith(obj.__name__ + "("):
        return ""                                  # a dataclass's generated signature
    first = text.split(". ")[0].rstrip(".")
    if len(first) > 180:
        first = first[:180].rsplit(" ", 1)[0] + " ..."
    return first.replace("|", "\\|")


def page() -> str:
    rows = []
    for name in tcsmt.__all__:
        where = _where(name)
        rows.append(f"| `tcsmt.{name}` | [`{where}`](#{where}) | {_first_sentence(getattr(tcsmt, name))} |")
    lines = ["# Python API", "",
             "*Generated from the docstrings when this site was built.*", "",
             "Every command is one call that returns the document the command prints "
             "(`--format json` prints the same document). `import tcsmt` exports them, beside the "
             "simulator's own calls:", "",
             "| name | documented at | what it does |", "|---|---|---|", *rows, ""]
    for module, title in MODULES:
        importlib.import_module(module)
        lines += [f"## {title}: `{module}`", "", f"::: {module}", "    options:",
                  "      show_root_heading: false", "      heading_level: 3", ""]
    lines += ["## The simulator's records and calls", ""]
    for module, names in OBJECTS:
        for n in names:
            lines += [f"::: {module}.{n}", "    options:", "      heading_level: 3", ""]
    return "\n".join(lines) + "\n"
