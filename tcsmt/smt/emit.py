"""``--emit-smt2 DIR|FILE``: the exact SMT-LIB text of every query a command
solves, one file per query, for any other SMT-LIB solver.

Every formula reaches a solver through ``tcsmt.smt.service.race``; when a
target is set, the race writes each formula's text the first time a solver
starts on it (before any answer: a query that times out is written too),
and after the race appends one line per formula to an index with what each
solver answered:

* DIR (a path not ending in .smt2): ``DIR/query-0001.smt2``,
  ``query-0002.smt2``... in the order they were first started, and
  ``DIR/index.jsonl``;
* FILE (a path ending in .smt2): the first query in FILE itself (an
  earlier FILE is replaced), any further one in ``STEM-2.smt2``,
  ``STEM-3.smt2``... beside it, and the index in ``STEM.index.jsonl``.

Each index line: {"file", "sha256", "description", "formula" (the tag of
the formulation, "full" for the whole question), "answers": {solver:
status}, "seconds": {solver: wall seconds}}. A file holds the text the solvers parse, byte for byte (its
sha256 is the ``smt2_sha256`` result files record): the options, the
logic, the inputs, the assertions, ``(check-sat)`` and ``(get-value ...)``.

The target travels in the environment (TCSMT_EMIT_SMT2), so the worker
processes of tcsmt.runner on this machine write their queries too; files
are created exclusively (O_EXCL), so processes never overwrite each other.
A Dask worker on another machine writes to that machine's disk.
"""

from __future__ import annotations

import json
import os
import stat
from contextlib import contextmanager
from pathlib import Path

from tcsmt.errors import OutputRefused, UserError

ENV = "TCSMT_EMIT_SMT2"
_written: dict[str, str] = {}          # sha256 -> file, in this process


def target() -> Path | None:
    path = os.environ.get(ENV)
    return Path(path) if path else None


@contextmanager
def emitting(path: str | Path | None):
    """Within the block, every query solved (here and in local worker
    processes) is written under ``path`` (None: nothing is)."""
    if path is None:
        yield
        return
    path = Path(path)
    _refuse_what_is_not_ours(path)
    try:
        (path.parent if _is_file(path) else path).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"--emit-smt2 {path}: cannot create the folder ({e.strerror})") from None
    if not _is_file(path) and not path.is_dir():
        raise UserError(f"--emit-smt2 {path}: not a folder")
    if _is_file(path) and path.is_file():
        path.unlink()                  # the file named is this command's to replace
    old = os.environ.get(ENV)
    os.environ[ENV] = str(path)
    _written.clear()
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = old


def _refuse_what_is_not_ours(path: Path) -> None:
    """OutputRefused, before any work, unless ``path`` is (or may become) a
    folder (DIR) or a regular file (FILE): a device, pipe or socket there,
    a folder where a .smt2 file is named, or a file where a folder is, is
    not the command's to write into or replace."""
    if not os.path.lexists(path):
        return
    try:
        st = os.stat(path)
    except OSError as e:
        raise OutputRefused(f"--emit-smt2 {path}: cannot be read ({e.strerror})") from None
    if _is_file(path) and not stat.S_ISREG(st.st_mode):
        raise OutputRefused(f"--emit-smt2 {path}: not a regular file (queries are written as "
                            "files; name a folder or a new .smt2 file)")
    if not _is_file(path) and not stat.S_ISDIR(st.st_mode):
        raise OutputRefused(f"--emit-smt2 {path}: not a folder (a path not ending in .smt2 "
                            "is a folder the queries go into)")


def _is_file(path: Path) -> bool:
    return path.suffix == ".smt2"


def _index(path: Path) -> Path:
    return path.with_name(f"{path.stem}.index.jsonl") if _is_file(path) else path / "index.jsonl"


def _candidates(path: Path):
    """The file names a new query may take, in order."""
    n = 1
    while True:
        if _is_file(path):
            yield path if n == 1 else path.with_name(f"{path.stem}-{n}.smt2")
        else:
            yield path / f"query-{n:04d}.smt2"
        n += 1


def started(formula) -> None:
    """A solver starts on ``formula``: write its text if it is new here."""
    path = target()
    if path is None or formula.sha256 in _written:
        return
    for name in _candidates(path):
        try:
            with open(name, "x", encoding="utf-8") as f:
                f.write(formula.text)
            break
        except FileExistsError:
            continue
    _written[formula.sha256] = str(name)


def answered(formulas: dict, runs: list) -> None:
    """Append the index lines of a race's formulas (sha256 -> (tag,
    Formula)) that a solver started, with each solver's answer."""
    path = target()
    if path is None:
        return
    lines = []
    for sha, (tag, formula) in formulas.items():
        if sha not in _written:
            continue
        mine = [r for r in runs if r.tag == tag and str(r.status) in ("sat", "unsat", "unknown", "error")]
        lines.append(json.dumps({"file": Path(_written[sha]).name, "sha256": sha,
                                 "description": formula.description, "formula": tag or "",
                                 "answers": {r.solver: str(r.status) for r in mine},
                                 "seconds": {r.solver: round(r.seconds, 3) for r in mine}}) + "\n")
    if lines:
        with open(_index(path), "a", encoding="utf-8") as f:
            f.write("".join(lines))


def index_path(path: str | Path) -> Path:
    return _index(Path(path))


def count(path: str | Path) -> int:
    """How many query files the index under ``path`` names (every process's)."""
    try:
        lines = _index(Path(path)).read_text(encoding="utf-8").splitlines()
    except OSError:
        return 0
    return len({json.loads(line)["file"] for line in lines if line.strip()})
