"""Where a command writes its result.

The rule (docs/getting-started.md shows it on the first question):

* ``-o FILE`` writes FILE. An existing FILE is replaced only when it holds
  an earlier answer to the same question (find, prove, compare-algorithms
  and coverage start from its vectors), or with ``--force``.
* Without ``-o``, the result goes into the current directory, in a file
  named after the question (``ampere-rounding.json``,
  ``diff-volta--hopper.json``). An earlier answer to the same question
  there is rewritten; any other file of that name is left alone and the
  name gets -2, -3... (diff and equiv always take a free name).
* Every command says which file it wrote. Only ``tcsmt regen`` writes the
  ``results/`` tree of a checkout, whose files are the project's committed
  answers; a user's run never replaces one unless asked with ``-o``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tcsmt.errors import OutputRefused
from tcsmt.fileio import json_object_or_none


@dataclass(frozen=True)
class Target:
    """Where a result goes, and the earlier answer to the same question
    (its vectors are tried first), if there is one."""
    path: Path
    prior: Path | None = None


def file_name(*parts: str) -> str:
    """A file name from the parts of a question, safe on every system."""
    clean = [re.sub(r"[^A-Za-z0-9._=+-]+", "_", p).strip("_") for p in parts if p]
    return "-".join(clean) + ".json"


def holds(path: Path, question: dict) -> bool:
    """True when ``path`` is a JSON file whose schema family and query
    fields are those of ``question`` ({"schema": "tcsmt-result", "kind":
    ..., "model": ...}: schema is compared without its version)."""
    doc = json_object_or_none(path)     # a bounded read of a regular file: never /dev/zero whole
    if doc is None or not isinstance(doc.get("query"), dict):
        return False
    want = dict(question)
    if str(doc.get("schema", "")).split("/")[0] != want.pop("schema", None):
        return False
    return all(doc["query"].get(k) == v for k, v in want.items())


def target(name: str, output: str | Path | None = None, force: bool = False,
           question: dict | None = None) -> Target:
    """Where a result goes by the rule above. ``name``: the default file
    name in the current directory; ``question``: what an earlier answer in
    the file must hold to be rewritten (None: never rewrite, take a free
    name, as diff and equiv do)."""
    if output is not None:
        path = Path(output)
        if not path.exists():
            return Target(path)
        if question is not None and holds(path, question):
            return Target(path, path)
        if force:
            return Target(path)
        raise OutputRefused(f"{path} exists and holds no earlier answer to this question: "
                            "--force replaces it, or choose another -o")
    path = Path(name)
    if question is not None and path.exists() and holds(path, question):
        return Target(path, path)
    out, n = path, 2
    while out.exists():
        out = path.with_name(f"{path.stem}-{n}{path.suffix}")
        n += 1
    return Target(out)


def said(path: Path, status: str) -> str:
    """What became of the file, in words: "written to X", "X unchanged"..."""
    return {"unchanged": f"{path} unchanged (it held this answer)",
            "changed": f"{path} updated",
            "kept": f"{path} kept (this run lost answers it holds)"}.get(status, f"written to {path}")
