"""The code blocks of a Markdown page (README.md, docs/**.md), run as a
reader would run them, their output compared with what the page shows.

A fenced block is one of:

* ```console: lines ``$ COMMAND`` (run by bash in the page's folder), each
  followed by the output the page shows;
* ```python: run in one namespace per page, in page order; a ```text block
  right after it is what it prints;
* ```pycon: ``>>>`` lines and their output, checked by doctest in the same
  namespace;
* any other block that a marker accounts for.

Shown output is split at its "..." lines; each part must appear as
consecutive lines of what ran, the parts in order. Times ("1.43 s") are
compared as "T s", the solvers a race named ("bitwuzla, z3", "boolector
and bitwuzla") as "SOLVERS".

Markers are HTML comments on the lines right before a fence, several in
one comment separated by ";":

    <!-- test: skip (why) -->             not run (needs a GPU, writes results/, hours...)
    <!-- test: slow (why) -->             run only under ``pytest -m slow``
    <!-- test: output varies (why) -->    run, exit status checked, output not compared
    <!-- test: exit N -->                 the last command exits with N (default 0)
    <!-- test: file NAME -->              the block is the content of NAME in the page's folder
    <!-- test: smaller "OLD" "NEW" -->    run with OLD replaced by NEW (a smaller size): the
                                          output's lines compared by their first word only
    <!-- test: number varies "TEXT" ... (why) -->  the whole number right before each TEXT is
                                          compared as "N" (a count that depends on what the
                                          solvers answer within their time, say)

A page's folder is a fresh temporary folder in which data/, results/,
models/ and benchmarks/ of the checkout can be read, so the paths a page
names resolve as they do in a checkout, and what a command writes lands
outside the checkout.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import shlex
import subprocess
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from checkout import ROOT

LINKED = ("data", "results", "models", "benchmarks")
KINDS = ("console", "python", "pycon")
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>```+)(?P<lang>[\w-]*)\s*$")
_MARK = re.compile(r"^\s*<!--\s*test:(.*?)-->\s*$")
_TIME = re.compile(r"\b\d+(\.\d+)? s\b")
# which solvers answered first (a race) varies from run to run: a list of
# solver names, "(bitwuzla, z3)", "by boolector and bitwuzla", "bitwuzla+z3"
_SOLVERS = re.compile(r"\b(bitwuzla|boolector|cvc5|z3)((, | and |\+)(bitwuzla|boolector|cvc5|z3))*\b")


@dataclass
class Block:
    page: Path
    line: int                    # 1-based line of the opening fence
    lang: str
    body: str
    marks: dict[str, str] = field(default_factory=dict)
    shown: str | None = None     # python: the text block right after it

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _marks(text: str) -> dict[str, str]:
    """'skip (why); exit 1' -> {"skip": "(why)", "exit": "1"}."""
    out = {}
    for part in re.split(r";(?![^()]*\))", text):
        part = part.strip()
        if not part:
            continue
        for key in ("output varies", "number varies", "skip", "slow", "exit", "file", "smaller"):
            if part.startswith(key):
                out[key] = part[len(key):].strip()
                break
        else:
            raise ValueError(f"unknown test marker {part!r}")
    return out


def blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page``, with its markers; a python block's
    shown output (the text block right after it) is attached to it and not
    listed on its own."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    marks: dict[str, str] = {}
    i = 0
    while i < len(lines):
        mark = _MARK.match(lines[i])
        fence = _FENCE.match(lines[i])
        if mark:
            marks.update(_marks(mark.group(1)))
        elif fence:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == fence.group("fence"))
            body = "\n".join(x[len(fence.group("indent")):] for x in lines[i + 1:end]) + "\n"
            found.append(Block(page, i + 1, fence.group("lang"), body, marks))
            marks = {}
            i = end
        elif lines[i].strip():
            marks = {}
        i += 1
    out: list[Block] = []
    for b in found:
        if b.lang == "text" and out and out[-1].lang == "python" and out[-1].shown is None \
                and not b.marks and _adjacent(lines, out[-1], b):
            out[-1].shown = b.body
        else:
            out.append(b)
    return out


def _adjacent(lines: list[str], a: Block, b: Block) -> bool:
    """Nothing but blank lines between the end of block a and block b."""
    end = a.line + a.body.count("\n")
    return all(not x.strip() for x in lines[end + 1:b.line - 1])


def unaccounted(page: Path) -> list[str]:
    """Blocks that neither run nor carry a marker saying what they are, and
    indented code blocks (which no marker can reach: fence them)."""
    out = [f"{b.where}: a ```{b.lang or '(no language)'} block the tests cannot run: give it a "
           "marker (<!-- test: skip (why) -->, file NAME...)"
           for b in blocks(page) if b.lang not in KINDS and not ({"skip", "file"} & set(b.marks))]
    return out + [f"{page.relative_to(ROOT)}:{n}: an indented code block: fence it (```console, "
                  "```text...) so that the tests run it or a marker says why not"
                  for n in _indented(page.read_text(encoding="utf-8").splitlines())]


def _indented(lines: list[str]) -> list[int]:
    """Lines that open an indented code block: 4 spaces after a blank line,
    outside fences, lists and HTML."""
    out, fence, context = [], None, ""
    for n, line in enumerate(lines, 1):
        f = _FENCE.match(line)
        if f and (fence is None or line.strip() == fence):
            fence = None if fence else f.group("fence")
            continue
        if fence:
            continue
        if not line.strip():
            continue
        in_list = re.match(r"^\s*([*+-]|\d+\.)\s", context)
        if line.startswith("    ") and not lines[n - 2].strip() and not in_list:
            out.append(n)
        if not line.startswith("    "):
            context = line
    return out


def reasons_missing(page: Path) -> list[str]:
    return [f"{b.where}: '{k}' needs a reason in parentheses" for b in blocks(page)
            for k in ("skip", "slow", "output varies") if k in b.marks and not b.marks[k].startswith("(")] + [
        f"{b.where}: 'number varies' needs \"TEXT\" and a reason in parentheses" for b in blocks(page)
        if "number varies" in b.marks and not re.fullmatch(r'("[^"]+" )+\(.+\)', b.marks["number varies"])]


# ---------------------------------------------------------------------------
# Comparing output
# ---------------------------------------------------------------------------

def same_run(line: str) -> str:
    """A line as any run prints it: times and the solvers of a race left out."""
    return _SOLVERS.sub("SOLVERS", _TIME.sub("T s", line.rstrip()))


def parts(shown: str) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for line in shown.splitlines():
        if line.strip() == "...":
            out.append([])
        else:
            out[-1].append(same_run(line))
    return [p for p in out if p]


def missing_part(shown: str, got: str) -> str | None:
    """None when every part of ``shown`` appears in ``got`` as consecutive
    lines, in order; else the first part that does not."""
    lines = [same_run(x) for x in got.splitlines()]
    pos = 0
    for part in parts(shown):
        for start in range(pos, len(lines) - len(part) + 1):
            if lines[start:start + len(part)] == part:
                pos = start + len(part)
                break
        else:
            return "\n".join(part)
    return None


def _number_varies(block: Block, text: str) -> str:
    """``text`` with the whole number right before each of the marker's TEXTs written N."""
    for after in re.findall(r'"([^"]+)"', block.marks["number varies"].split("(")[0]):
        text = re.sub(rf"\b\d+(?= {re.escape(after)})", "N", text)
    return text


def _first_words(text: str) -> list[str]:
    return [(x.split() or [""])[0] for x in text.splitlines()]


def compare(block: Block, shown: str | None, got: str, what: str) -> None:
    if shown is None or "output varies" in block.marks:
        return
    if "smaller" in block.marks:
        assert _first_words(got) == _first_words(shown), \
            f"{block.where}: {what} prints other lines than the page shows:\n{got}"
        return
    if "number varies" in block.marks:
        shown, got = _number_varies(block, shown), _number_varies(block, got)
    missing = missing_part(shown, got)
    assert missing is None, (f"{block.where}: {what} does not print what the page shows:\n{missing}\n"
                             f"--- it printed:\n{got}")


# ---------------------------------------------------------------------------
# Running a page
# ---------------------------------------------------------------------------

def commands(body: str) -> list[tuple[str, str]]:
    """(command, the output shown after it) for each ``$ `` line of a console block."""
    out: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
        elif line.strip():
            raise ValueError(f"a console block starts with {line!r}, not a '$ ' command")
    return [(cmd, "\n".join(shown)) for cmd, shown in out]


def workdir(tmp: Path) -> Path:
    for name in LINKED:
        if (ROOT / name).exists() and not (tmp / name).exists():
            (tmp / name).symlink_to(ROOT / name)
    return tmp


def _smaller(block: Block, text: str) -> str:
    if "smaller" not in block.marks:
        return text
    old, new = shlex.split(block.marks["smaller"])
    assert old in text, f"{block.where}: 'smaller' names {old!r}, which the block does not hold"
    return text.replace(old, new)


def run_console(block: Block, cwd: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    cmds = commands(block.body)
    for n, (cmd, shown) in enumerate(cmds):
        run = subprocess.run(["bash", "-c", _smaller(block, cmd)], cwd=cwd, capture_output=True,
                             text=True, timeout=900, env=env)
        want = int(block.marks.get("exit", "0")) if n == len(cmds) - 1 else 0
        assert run.returncode == want, (f"{block.where}: `{cmd}` exited {run.returncode}, not {want}:\n"
                                        f"{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
        compare(block, shown or None, run.stdout, f"`{cmd}`")


def run_python(block: Block, space: dict, cwd: Path) -> None:
    out = io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(_smaller(block, block.body), block.where, "exec"), space)
    compare(block, block.shown if block.shown is not None else "", out.getvalue(), "the block")


def run_pycon(block: Block, space: dict, cwd: Path) -> None:
    test = doctest.DocTestParser().get_doctest(block.body, space, block.where, str(block.page), block.line)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = io.StringIO()
    with contextlib.chdir(cwd):
        runner.run(test, out=out.write, clear_globs=False)
    space.update(test.globs)     # doctest ran on a copy: later blocks see its names
    assert not runner.failures, f"{block.where}: doctest failed:\n{out.getvalue()}"


def run_page(page: Path, tmp: Path, slow: bool = False) -> list[str]:
    """Run every block of ``page`` in order; the blocks left out, with why."""
    cwd = workdir(tmp)
    space: dict = {"__name__": "__docs__"}
    left = []
    for b in blocks(page):
        if "skip" in b.marks or ("slow" in b.marks and not slow):
            left.append(f"{b.where}: {b.marks.get('skip') or b.marks.get('slow')}")
        elif "file" in b.marks:
            (cwd / b.marks["file"]).write_text(b.body, encoding="utf-8")
        elif b.lang == "console":
            run_console(b, cwd)
        elif b.lang == "python":
            run_python(b, space, cwd)
        elif b.lang == "pycon":
            run_pycon(b, space, cwd)
    return left
