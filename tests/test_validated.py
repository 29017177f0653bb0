"""A model a committed recording checked beyond a limit of the earlier
recordings (tcsmt.observed.validated.CHECKED_BEYOND) reproduces every row
of that recording, and the recording does hold rows beyond the limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tcsmt import api
from tcsmt.observed.validated import CHECKED_BEYOND, LIMITS

ROOT = Path(__file__).resolve().parent.parent
CASES = [(what, name, path) for what, models in CHECKED_BEYOND.items() for name, path in models.items()]


@pytest.mark.parametrize("what,name,path", CASES, ids=[c[1] for c in CASES])
def test_the_recording_checks_the_model_beyond_the_limit(what, name, path):
    lim = next(lim for lim in LIMITS if lim.what == what)
    doc = json.loads((ROOT / path).read_text())
    rows = doc["observations"]
    width = {"float32": 32, "float16": 16}[doc["formats"]["c"]]
    beyond = [r for r in rows if not lim.inside({"c": {"decimal": _decimal(r["c"], width)}})]
    assert len(beyond) >= len(rows) // 2
    doc = api.check(ROOT / path, [name])
    (m,) = doc["models"]
    assert m["model"] == name and m["rows"] == len(rows) == m["matched"]


def _decimal(c_hex: str, width: int) -> str:
    """"0" for a zero c (either sign) of that width, as Limit.inside reads it, else "1"."""
    return "0" if int(c_hex, 16) & ((1 << (width - 1)) - 1) == 0 else "1"
