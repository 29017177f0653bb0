"""docs/formats.md, written from the schemas themselves: a section per
format with its title, its description and its schema's text, so the page
cannot drift from the files (tests/test_schemas.py compares them).

    python -m tcsmt.schemas.page docs/formats.md
"""

from __future__ import annotations

import sys
from pathlib import Path

from tcsmt.schemas import FOLDER, SUFFIX, load, names

ORDER = ("result", "plan", "observations", "vectors", "check", "conformance", "identification",
         "identify-loop", "identify-blind", "compare", "coverage", "suite", "error", "agreement", "model",
         "space", "regen-cache", "common")

INTRO = """\
# File formats

Every file tcsmt reads or writes has a JSON Schema (Draft 2020-12), shipped
with the package as `tcsmt/schemas/NAME.schema.json` and loaded by
`tcsmt.schemas.load(NAME)`. A JSON document names its format in its
`"schema"` key (`"tcsmt-result/2"`), and `tcsmt.schemas.name_for` finds the
schema from it; model and space files are TOML, and their schemas describe
the table TOML reads them as. The schemas refer to each other by `$id`
(`urn:tcsmt:schema:NAME`): `common` holds the shared pieces, and `model`,
generated from `ModelParams` and the choices of the datapath
(`python -m tcsmt.model.fileschema`), the model parameters.

The tests check every committed file under `results/` (results, plans,
observations and identification reports, the MMA-Sim agreement table,
coverage and compare files), the suites, the model and space files, and
every JSON file tcsmt writes while they run (`TCSMT_CHECK_SCHEMAS=1`: the
writers check each document before it goes out). The readers keep their own
checks, which name the problem in tcsmt's words.

Checking a file from Python (the `test` extra installs jsonschema):

```pycon
>>> import json
>>> from tcsmt import schemas
>>> doc = json.load(open("results/ampere/rounding.json"))
>>> schemas.name_for(doc)
'result'
>>> schemas.check(doc, where="results/ampere/rounding.json")
>>> doc["vectors"][0]["c"] = 1
>>> schemas.check(doc, where="f.json")
Traceback (most recent call last):
...
tcsmt.errors.BadFile: f.json: does not match the result schema: $.vectors[0].c: 1 is not of type 'object'
```

Not JSON, and so without a schema: the arrays `tcsmt gemm` reads and
writes (`.npy`), the recorded GPU outputs (`data/hwdata`, described in
`data/hwdata/README.md`), the probe programs `tcsmt harness` writes (CUDA,
HIP), the Markdown copy of the agreement table, the plots of `tcsmt error`
(PNG) and the SMT-LIB text of `--emit-smt2`.

| Format | `"schema"` | Schema file |
|---|---|---|
"""


def _ordered() -> list[str]:
    have = names()
    return [n for n in ORDER if n in have] + [n for n in have if n not in ORDER]


def _const(name: str) -> str:
    const = load(name).get("properties", {}).get("schema", {}).get("const")
    return f"`{const}`" if const else "(none)"


def _section(name: str) -> str:
    s = load(name)
    text = (FOLDER / f"{name}{SUFFIX}").read_text(encoding="utf-8").strip()
    return (f"## {s['title']} {{#{name}}}\n\n{s['description']}\n\n"
            f"Schema `tcsmt/schemas/{name}{SUFFIX}`:\n\n"
            f"<!-- test: skip (a schema, not a command) -->\n```json\n{text}\n```\n")


def markdown() -> str:
    """The whole page."""
    rows = [f"| [{load(n)['title']}](#{n}) | {_const(n)} | `{n}{SUFFIX}` |" for n in _ordered()]
    return INTRO + "\n".join(rows) + "\n\n" + "\n".join(_section(n) for n in _ordered())


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/formats.md")
    target.write_text(markdown(), encoding="utf-8")
    print(f"wrote {target}")
