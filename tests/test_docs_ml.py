"""docs/ml-engineers.md runs as written: every python block in order, in
one namespace, its output compared with the text block shown after it;
the transformer block at a smaller size (its errors and seconds then
differ from the page's: their shape is checked)."""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "docs" / "ml-engineers.md"
FULL = "D_MODEL, HEADS, SEQ, BATCH = 256, 4, 64, 2"
SMALL = "D_MODEL, HEADS, SEQ, BATCH = 64, 2, 16, 1"


def blocks() -> list[tuple[str, str | None]]:
    """(python code, the text block right after it or None)."""
    parts = re.findall(r"```(python|text)\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    out = []
    for n, (kind, body) in enumerate(parts):
        if kind == "python":
            after = parts[n + 1] if n + 1 < len(parts) else None
            out.append((body, after[1] if after and after[0] == "text" else None))
    return out


def test_every_block_of_the_page_runs_and_prints_what_the_page_shows():
    found = blocks()
    assert len(found) == 5 and sum(FULL in code for code, _ in found) == 1
    space: dict = {}
    for code, shown in found:
        small = FULL in code
        out = io.StringIO()
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(code.replace(FULL, SMALL), str(PAGE), "exec"), space)
        if not small:
            assert out.getvalue() == (shown or ""), code[:200]
            continue
        got, want = out.getvalue().splitlines(), shown.splitlines()
        assert got[0] == want[0] and [g.split()[0] for g in got] == [w.split()[0] for w in want]
        errors = [float(line.split()[1]) for line in got[1:]]
        assert 0 < errors[0] < 1e-3 < errors[1] < errors[2] < 1        # fp16 < fp8 < NVFP4
