"""Reading and writing files.

Reading: one-line errors (BadFile, or the kind a caller names) naming the
file for every way a file can be unreadable: missing, a folder, not UTF-8,
not JSON or TOML, larger than tcsmt reads for a file of its kind
(``limit``), or a pipe or device that never ends or says nothing for
TCSMT_PIPE_WAIT seconds. Nothing is read without a bound.

Writing: a regular file (one that is there, or will be) is written
atomically: a temporary file beside it, renamed over it, so a reader sees
the old file or the new one, never half of either, even when the writer is
interrupted; a link to a file keeps its place and the file at its end is
replaced. A character device or a named pipe (/dev/null, /dev/stdout, a
pipe that a reader holds open, /proc/self/fd/N) is written through, never
replaced; a pipe with no reader, a folder, a socket or a block device is
refused with one line (OutputRefused)."""

from __future__ import annotations

import json
import os
import stat
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

from tcsmt.errors import BadFile, OutputRefused, UserError
from tcsmt.streams import copy_to, names_a_stream, read_stream

T = TypeVar("T")

DOCUMENT_LIMIT = 128 << 20
"""Bytes of a JSON document tcsmt reads (results, plans and observations
are at most a few MB; parsing takes about ten times the text's size)."""

SMALL_LIMIT = 4 << 20
"""Bytes of a model file or a space file (TOML, a few KB)."""



# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------

def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _too_large(path, size: str, limit: int, error):
    return error(f"{path}: {size}, more than the {_size(limit)} tcsmt reads for a file of this kind")


_INPUTS: dict[tuple[int, int], str] | None = None
"""(device, inode) -> path of every regular file read as an input, once
guard_inputs() is called (the command line does): none is written over."""


def guard_inputs() -> None:
    """From now on in this process, a regular file read as an input
    (read_bytes, read_text, read_json, open_regular) is never replaced by
    write_atomic: OutputRefused. (An earlier result read to be replaced,
    json_object_or_none, is not an input.)"""
    global _INPUTS
    if _INPUTS is None:
        _INPUTS = {}


def stop_guarding_inputs() -> None:
    """Forget the inputs read and stop guarding them (guard_inputs undone):
    for a process that runs one command after another, such as a test run."""
    global _INPUTS
    _INPUTS = None


def _remember(st: os.stat_result, path) -> None:
    if _INPUTS is not None and stat.S_ISREG(st.st_mode):
        _INPUTS.setdefault((st.st_dev, st.st_ino), str(path))


def read_bytes(path: str | Path, error=None, limit: int = DOCUMENT_LIMIT, input: bool = True) -> bytes:
    """A file's bytes, at most ``limit`` of them; ``error`` (default
    BadFile) with one line naming the file when it cannot be read, is a
    folder, is larger, or is a pipe or device that sends more or says
    nothing for TCSMT_PIPE_WAIT seconds. ``input``: remembered as a file
    this command reads (guard_inputs)."""
    error = error or BadFile
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        raise error(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if input:
            _remember(st, path)
        if stat.S_ISDIR(st.st_mode):
            raise error(f"{path}: a folder, not a file")
        if stat.S_ISREG(st.st_mode):
            if st.st_size > limit:
                raise _too_large(path, _size(st.st_size), limit, error)
            os.set_blocking(fd, True)
        data = read_stream(fd, limit, path, error, regular=stat.S_ISREG(st.st_mode),
                            pipe=stat.S_ISFIFO(st.st_mode))
    except OSError as e:
        raise error(f"{path}: cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)
    return data


def open_regular(path: str | Path, name: str = "", error=None) -> IO[bytes]:
    """A regular file opened for reading (binary), never blocking on a pipe;
    ``error`` (default BadFile) naming it (and ``name``, the operand it is)
    when it is missing, a folder, a pipe or a device."""
    error = error or BadFile
    label = f"{name}: {path}" if name else str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        raise error(f"{label}: cannot read: {e.strerror or e}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise error(f"{label}: not a regular file")
    _remember(st, path)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_text(path: str | Path, error=None, limit: int = DOCUMENT_LIMIT, input: bool = True) -> str:
    """A UTF-8 text file of at most ``limit`` bytes; ``error`` (default
    BadFile) with one line naming the file when it cannot be read."""
    error = error or BadFile
    data = read_bytes(path, error, limit, input)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise error(f"{path}: not UTF-8 text (byte {e.start})") from None


def read_json(path: str | Path, error=None, limit: int = DOCUMENT_LIMIT):
    """A JSON file (any JSON value); one-line errors as read_text."""
    error = error or BadFile
    text = read_text(path, error, limit)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise error(f"{path}: not JSON: line {e.lineno} column {e.colno}: {e.msg}") from None
    except RecursionError:
        raise error(f"{path}: not JSON: nested too deep") from None
    except ValueError as e:     # an integer of more digits than Python converts
        raise error(f"{path}: not JSON tcsmt reads: {e}") from None


def json_object_or_none(path: str | Path, limit: int = DOCUMENT_LIMIT) -> dict | None:
    """A JSON object from a regular file of at most ``limit`` bytes, or
    None when there is none (an earlier result that may or may not be
    there): a device, a pipe, a larger file or one that is not a JSON
    object is not read as one."""
    text = text_or_none(path, limit)
    try:
        doc = json.loads(text) if text is not None else None
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def text_or_none(path: str | Path, limit: int = DOCUMENT_LIMIT) -> str | None:
    """The UTF-8 text of a regular file of at most ``limit`` bytes, or None
    when there is none (missing, not a regular file, larger, unreadable)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
        return None
    try:
        return read_text(path, limit=limit, input=False)
    except UserError:
        return None


def read_toml(path: str | Path, error=None, limit: int = SMALL_LIMIT) -> dict:
    """A TOML file; one-line errors as read_text."""
    error = error or BadFile
    text = read_text(path, error, limit)
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
    """Call ``write`` on a temporary file, flush it to disk, optionally
    ``check`` the temporary file by its name (its result is returned; an
    exception leaves ``path`` untouched), then put it in place: renamed
    over a regular file (os.replace is atomic on one file system; the
    parent folder is created, a link is followed to the file it names),
    or copied through to a character device or a pipe's reader (see the
    module doc). A folder, socket, block device or a pipe with no reader
    is an OutputRefused; a folder that cannot be written, a full disk or
    any other failure of the file system a UserError naming ``path``."""
    path = Path(path)
    try:
        kind, real = output_target(path)
        if kind == "through":
            return _write_through(path, write, binary, check, suffix)
        return _write_atomic(real, write, binary, check, suffix)
    except OSError as e:
        raise UserError(f"{path}: cannot write: {e.strerror or e}") from None


def output_target(path: str | Path) -> tuple[str, Path]:
    """("file", where the regular file is or will be, links followed) or
    ("through", path) for a character device, a named pipe or a stream of
    this process (/dev/stdout, /proc/self/fd/N); OutputRefused for what
    tcsmt never writes over."""
    path = Path(path)
    if names_a_stream(path):
        return "through", path
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "file", Path(os.path.realpath(path))
    except OSError as e:                 # a file where a folder should be, a loop of links
        raise OutputRefused(f"{path}: cannot write: {e.strerror or e}") from None
    if stat.S_ISREG(st.st_mode):
        read = _INPUTS.get((st.st_dev, st.st_ino)) if _INPUTS is not None else None
        if read is not None:
            what = "" if os.path.abspath(read) == os.path.abspath(path) else f" ({read})"
            raise OutputRefused(f"{path}{what} is a file this command reads: write the output "
                                "to another file")
        return "file", Path(os.path.realpath(path))
    if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        return "through", path
    what = ("a folder" if stat.S_ISDIR(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode)
            else "a block device" if stat.S_ISBLK(st.st_mode) else "not a regular file")
    raise OutputRefused(f"{path} is {what}: tcsmt writes a file there only where a regular file "
                        "is or will be (or through a character device or pipe)")


def _write_atomic(path: Path, write, binary: bool, check, suffix: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    try:
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        result = check(tmp) if check is not None else None
        usual_mode(tmp, path)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return result


def _write_through(path: Path, write, binary: bool, check, suffix: str):
    """Write to a temporary file, check it, then copy it to ``path`` (a
    device, pipe or stream) without replacing it."""
    fd, tmp = tempfile.mkstemp(prefix="tcsmt-", suffix=suffix)
    try:
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")) as f:
            write(f)
        result = check(tmp) if check is not None else None
        with open(tmp, "rb") as src:
            copy_to(src, path)
    finally:
        os.unlink(tmp)
    return result


def write_text_atomic(path: str | Path, text: str) -> None:
    write_atomic(path, lambda f: f.write(text))


def usual_mode(path: str | Path, replaces: str | Path | None = None) -> None:
    """mkstemp makes files 0600: give a temporary file the mode of the file
    it replaces, else the mode a plain open() would (0666 less the umask)."""
    try:
        mode = stat.S_IMODE(os.stat(replaces).st_mode) if replaces is not None else None
    except OSError:
        mode = None
    if mode is None:
        mask = os.umask(0)
        os.umask(mask)
        mode = 0o666 & ~mask
    os.chmod(path, mode)


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
