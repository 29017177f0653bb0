"""Reading and writing files. Reading: one-line errors (UserError) naming
the file for every way a file can be unreadable (missing, a folder, not
UTF-8, not JSON or TOML). Writing: atomically, so a reader sees the old file
or the new one, never half of either, even when the writer is interrupted."""

from __future__ import annotations

import json
import os
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

from tcsmt.errors import BadFile, OutputRefused, UserError

T = TypeVar("T")


def read_text(path: str | Path, error=None) -> str:
    """A UTF-8 text file; ``error`` (default UserError) with one line naming
    the file when it cannot be read."""
    error = error or BadFile
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise error(f"{path}: cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise error(f"{path}: not UTF-8 text (byte {e.start})") from None


def read_json(path: str | Path, error=None):
    """A JSON file (any JSON value); one-line errors as read_text."""
    error = error or BadFile
    text = read_text(path, error)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise error(f"{path}: not JSON: line {e.lineno} column {e.colno}: {e.msg}") from None
    except RecursionError:
        raise error(f"{path}: not JSON: nested too deep") from None
    except ValueError as e:     # an integer of more digits than Python converts
        raise error(f"{path}: not JSON tcsmt reads: {e}") from None


def json_object_or_none(path: str | Path) -> dict | None:
    """A JSON object from a file, or None when there is no readable one (an
    earlier result that may or may not be there)."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def read_toml(path: str | Path, error=None) -> dict:
    """A TOML file; one-line errors as read_text."""
    error = error or BadFile
    text = read_text(path, error)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise error(f"{path}: not valid TOML: {e}") from None
    except RecursionError:
        raise error(f"{path}: not TOML: nested too deep") from None
    except ValueError as e:
        raise error(f"{path}: not TOML tcsmt reads: {e}") from None


def refuse_overwriting(output: str | Path | None, inputs: dict[str, str | Path | None],
                       option: str) -> None:
    """UserError when ``output`` (an option's file) is one of ``inputs``
    (name -> path): a command never writes over a file it reads."""
    if output is None:
        return
    out = Path(output)
    for name, path in inputs.items():
        if path is None:
            continue
        same = out.resolve() == Path(path).resolve()
        try:
            same = same or os.path.samefile(out, path)
        except OSError:
            pass
        if same:
            raise OutputRefused(f"{option} {output} is also {name}, which this command reads: "
                            "write the output to another file")


def write_atomic(path: str | Path, write: Callable[[IO], object], binary: bool = False,
                 check: Callable[[str], T] | None = None, suffix: str = ".tmp") -> T | None:
    """Call ``write`` on a temporary file beside ``path``, flush it to disk,
    optionally ``check`` the temporary file by its name (its result is
    returned; an exception leaves ``path`` untouched), then rename it over
    ``path`` (os.replace is atomic on one file system). The parent folder
    is created. A folder that cannot be written, a full disk or any other
    failure of the file system is a UserError naming ``path``."""
    path = Path(path)
    try:
        return _write_atomic(path, write, binary, check, suffix)
    except OSError as e:
        raise UserError(f"{path}: cannot write: {e.strerror or e}") from None


def _write_atomic(path: Path, write, binary: bool, check, suffix: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    try:
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        result = check(tmp) if check is not None else None
        usual_mode(tmp)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return result


def write_text_atomic(path: str | Path, text: str) -> None:
    write_atomic(path, lambda f: f.write(text))


def usual_mode(path: str | Path) -> None:
    """mkstemp makes files 0600: give a temporary file the mode a plain
    open() would (0666 less the umask) before it replaces the real one."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, 0o666 & ~mask)


def write_json_atomic(path: str | Path, data, schema: str | None = None,
                      dumps: Callable[[object], str] | None = None) -> None:
    """The one writer of JSON documents: ``data`` as JSON (indented, or as
    ``dumps`` writes it), atomically. With TCSMT_CHECK_SCHEMAS set (the
    tests) the document is first checked against its schema (``schema``,
    or the one its "schema" key names): see tcsmt.schemas.check_written."""
    from tcsmt.schemas import check_written
    check_written(data, path, schema)
    write_text_atomic(path, dumps(data) if dumps else json.dumps(data, indent=2, sort_keys=False) + "\n")


def json_dumps(doc) -> str:
    """A document as the JSON a command prints (indented; what JSON has no
    type for as text). One that names its schema is checked against it
    first when TCSMT_CHECK_SCHEMAS is set (tcsmt.schemas.check_written)."""
    from tcsmt.schemas import check_written, name_for
    if name_for(doc) is not None:
        check_written(doc, "standard output")
    return json.dumps(doc, indent=2, default=str)


def data_folder(package: str, tree: str, pattern: str) -> Path | None:
    """A folder of files the package ships (``package``, e.g. "tcsmt.models"),
    found as installed package data, else at ``tree`` relative to a source
    checkout's root (e.g. "models"); None when neither holds ``pattern``."""
    from importlib import resources
    try:
        d = Path(str(resources.files(package)))
        if d.is_dir() and any(d.glob(pattern)):
            return d
    except (ModuleNotFoundError, TypeError):
        pass
    d = Path(__file__).resolve().parent.parent / tree
    return d if d.is_dir() else None
