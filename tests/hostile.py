"""Running a command the way a hostile user would, and judging how it ends.

A ``Case`` is one command line with the files it finds around it (made by
``setup`` in an empty folder, its working directory) and the environment
it runs in. ``judge`` runs it as the installed entry point, in a session of
its own, and returns what went wrong (an empty list: it ended clean):

- it ended within the case's seconds (else its session is killed);
- its exit status is one the case allows (0, 1 or 2 as documented);
- no traceback anywhere, and an error is one line on stderr (``error: ...``)
  holding the case's words;
- its peak memory (the process and the children it waited for, from
  wait4's rusage, measured by tests/launch.py so that the size of the
  process running the case does not count) stayed under the case's bound;
- every file in its folder, and every path the case names outside it, is
  as it was (type, inode, bytes, link target, device number) but for the
  paths the case lets it write.

``python tests/hostile.py [JOBS] [--times]`` runs every case of
tests/test_hostile.py, JOBS at a time, and prints a line per case that did
not end clean (with --times, every case's seconds), then the counts;
HOSTILE_TCSMT=/path/to/tcsmt judges another installation (an older one,
to count what it ends clean).
"""

from __future__ import annotations

import hashlib
import os
import resource
import signal
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cli_run import script

MiB = 1 << 20
LAUNCH = Path(__file__).with_name("launch.py")
PAGE = os.sysconf("SC_PAGE_SIZE")
DATA_LIMIT = 6 << 30
"""RLIMIT_DATA of every case's process: a guard for the shared machine
(a case that would grow past it fails to allocate instead)."""
WATCHDOG = 4 << 30
"""A case whose processes hold more than this is killed at once (and fails
its memory bound): the machine is shared."""


@dataclass
class Case:
    """One hostile command line (argv after ``tcsmt``; "{d}" stands for the
    case's folder) and what it may do."""

    name: str
    argv: list[str]
    exits: tuple[int, ...] = (2,)
    words: tuple[str, ...] = ()          # in the one error line (any case)
    setup: Callable[[Path], None] | None = None
    env: dict[str, str] = field(default_factory=dict)
    writes: tuple[str, ...] = ()         # paths (relative to the folder) it may create or change
    seconds: float = 60.0
    memory: int = 1536 * MiB
    outside: tuple[str, ...] = ()        # paths outside the folder it must leave as they were
    needs: str = ""                      # "mknod": a guard for CI runs without CAP_MKNOD
    after: Callable[[Path, str, str], list[str]] | None = None   # more checks: (folder, out, err)
    signal_after: float | None = None    # send SIGTERM this many seconds after the start
    core: bool = True                    # in the default test run (else marked slow)


def snapshot(root: Path, outside=()) -> dict[str, tuple]:
    """What every path under ``root`` (and each of ``outside``) is: type,
    inode, size and sha256 of a regular file, target of a link, device number."""
    out = {}
    paths = [Path(p) for p in outside]
    for base, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            paths.append(Path(base) / name)
    for p in paths:
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            out[str(p)] = ("missing",)
            continue
        kind = stat.S_IFMT(st.st_mode)
        rec: tuple = (kind, st.st_ino)
        if stat.S_ISREG(st.st_mode):
            rec += (st.st_size, _digest(p, st.st_size))
        elif stat.S_ISLNK(st.st_mode):
            rec += (os.readlink(p),)
        elif stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
            rec += (st.st_rdev,)
        out[str(p)] = rec
    return out


def _digest(p: Path, size: int) -> str:
    if size > 64 * MiB:             # a big sparse file: its size and inode say enough
        return "big"
    return hashlib.sha256(p.read_bytes()).hexdigest()


def can_mknod(folder: Path) -> bool:
    """Whether this process may make a character device (CAP_MKNOD: root,
    outside most containers' user namespaces)."""
    probe = folder / ".mknod-probe"
    try:
        os.mknod(probe, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError):
        return False
    probe.unlink()
    return True


def judge(case: Case, folder: Path) -> list[str]:
    """What went wrong when ``case`` ran in ``folder`` (see the module doc)."""
    folder.mkdir(parents=True, exist_ok=True)
    if case.setup:
        case.setup(folder)
    outside = [_fill(p, folder) for p in case.outside]
    before = snapshot(folder, outside)
    argv = [os.environ.get("HOSTILE_TCSMT") or script(), *(_fill(a, folder) for a in case.argv)]
    env = {**os.environ, "COLUMNS": "100", **{k: _fill(v, folder) for k, v in case.env.items()}}
    code, secs, rss, out, err = run_bounded(argv, folder, env, case.seconds, case.signal_after)
    problems = []
    if code is None:
        problems.append(f"still running after {case.seconds:g} s (killed)")
    elif code not in case.exits:
        problems.append(f"exit {code}, expected {' or '.join(map(str, case.exits))}")
    if "Traceback" in out + err:
        problems.append("a traceback")
    problems += _error_lines(code, err, case.words)
    if rss > case.memory:
        problems.append(f"peak memory {rss // MiB} MiB, bound {case.memory // MiB} MiB")
    after = snapshot(folder, outside)
    allowed = {str(folder / w) for w in case.writes}
    for path in sorted(set(before) | set(after)):
        if before.get(path, ("missing",)) != after.get(path, ("missing",)) and path not in allowed \
                and not _under(path, allowed):
            problems.append(f"{path}: {_what(before.get(path))} became {_what(after.get(path))}")
    if case.after and code is not None:
        problems += case.after(folder, out, err)
    if problems:
        tail = (err.strip().splitlines() or [""])[-1][:300]
        problems.append(f"(stderr ends: {tail!r}; {secs:.1f} s)")
    return problems


def _fill(text: str, folder: Path) -> str:
    """{d}: the case's folder; {silent}, {http}: addresses of listeners that
    are not Dask schedulers."""
    text = text.replace("{d}", str(folder))
    for kind in ("silent", "http"):
        if "{" + kind + "}" in text:
            text = text.replace("{" + kind + "}", f"tcp://127.0.0.1:{listener(kind)}")
    return text


_LISTENERS: dict[str, int] = {}


def listener(kind: str) -> int:
    """The port of a TCP listener in this process (started once): "silent"
    accepts connections and never sends a byte; "http" answers every
    request as a small web server does (a Dask dashboard's port)."""
    if kind not in _LISTENERS:
        import socket
        import threading
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(64)
        held = []

        def serve():
            while True:
                conn, _ = srv.accept()
                held.append(conn)
                if kind == "http":
                    try:
                        conn.recv(4096)
                        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                                     b"Content-Length: 5\r\n\r\nhello")
                    except OSError:
                        pass
        threading.Thread(target=serve, daemon=True).start()
        _LISTENERS[kind] = srv.getsockname()[1]
    return _LISTENERS[kind]


def _under(path: str, allowed: set[str]) -> bool:
    return any(path.startswith(a.rstrip("/") + "/") for a in allowed)


def _what(rec) -> str:
    if rec is None or rec[0] == "missing":
        return "nothing"
    names = {stat.S_IFREG: "a file", stat.S_IFLNK: "a link", stat.S_IFCHR: "a character device",
             stat.S_IFIFO: "a pipe", stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder",
             stat.S_IFBLK: "a block device"}
    return f"{names.get(rec[0], 'something')} (inode {rec[1]})"


def _error_lines(code, err: str, words) -> list[str]:
    lines = [x for x in err.splitlines() if x.strip()]
    errors = [x for x in lines if x.startswith(("error:", "internal error:"))]
    if code not in (None, 0, 1) or errors:
        if len(errors) != 1 or not lines or lines[-1] != errors[0]:
            return [f"{len(lines)} line(s) on stderr, not one error line at the end"]
        if errors[0].startswith("internal error"):
            return ["an internal error"]
        missing = [w for w in words if w.lower() not in errors[0].lower()]
        if missing:
            return [f"the error does not say {missing}"]
    return []


def run_bounded(argv, cwd: Path, env, seconds: float, term_after: float | None = None):
    """(exit code or None when killed, seconds, peak RSS bytes, stdout, stderr).

    The command starts through tests/launch.py, a small interpreter in a
    session of its own that forks it, waits for it and writes down its exit
    status and peak resident size: forked straight from this process, the
    command's peak would count this process's resident pages (see launch.py).
    """
    outf, errf = cwd.parent / f".{cwd.name}.out", cwd.parent / f".{cwd.name}.err"
    report = cwd.parent / f".{cwd.name}.rusage"
    launcher = [sys.executable, "-I", "-S", str(LAUNCH), str(report)]
    t0 = time.monotonic()
    with open(outf, "wb") as o, open(errf, "wb") as e, open(os.devnull, "rb") as nul:
        pid = os.fork()
        if pid == 0:                                   # the child: its own session
            try:
                os.setsid()
                resource.setrlimit(resource.RLIMIT_DATA, (DATA_LIMIT, DATA_LIMIT))
                os.chdir(cwd)
                for src, dst in ((nul, 0), (o, 1), (e, 2)):
                    os.dup2(src.fileno(), dst)
                os.execve(launcher[0], [*launcher, *argv], env)
            finally:
                os._exit(127)
        code, rss, termed, polls = None, 0, False, 0
        while True:
            done, status, _ = os.wait4(pid, os.WNOHANG)
            if done:
                code, rss = _reported(report, status)
                break
            elapsed = time.monotonic() - t0
            if term_after is not None and not termed and elapsed > term_after:
                os.kill(pid, signal.SIGTERM)           # passed on to the command
                termed = True
            polls += 1
            if elapsed > seconds or (polls % 10 == 0 and session_rss(pid) > WATCHDOG):
                rss = session_rss(pid)
                _kill_session(pid)
                os.wait4(pid, 0)
                break
            time.sleep(0.02)
    _kill_session(pid)
    out, err = outf.read_text(errors="replace"), errf.read_text(errors="replace")
    for f in (outf, errf, report):
        f.unlink(missing_ok=True)
    return code, time.monotonic() - t0, rss, out, err


def _reported(report: Path, launcher_status: int) -> tuple[int, int]:
    """(exit code, peak RSS bytes) of the command, as tests/launch.py wrote
    them; when it wrote nothing, the launcher's own exit code and 0."""
    try:
        status, maxrss_kib = map(int, report.read_text().split())
    except (OSError, ValueError):
        return os.waitstatus_to_exitcode(launcher_status), 0
    return os.waitstatus_to_exitcode(status), maxrss_kib * 1024


def session_rss(sid: int) -> int:
    """The resident bytes of every live process of session ``sid``."""
    total = 0
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_bytes().rsplit(b")", 1)[1].split()
            if int(fields[3]) == sid:
                total += int((d / "statm").read_text().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            continue
    return total


def _kill_session(sid: int) -> None:
    try:
        os.killpg(sid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def main(jobs: int = 2, times: bool = False) -> None:
    """Run every case of tests/test_hostile.py, ``jobs`` at a time; a line
    per case that did not end clean, then the counts."""
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    sys.path.insert(0, str(Path(__file__).parent))
    from test_hostile import CASES

    with tempfile.TemporaryDirectory() as tmp:
        def one(i: int) -> tuple[str, list[str] | None, float]:
            case = CASES[i]
            work = Path(tmp) / f"c{i}"
            work.mkdir()
            if case.needs == "mknod" and not can_mknod(work):
                return case.name, None, 0.0
            t0 = time.monotonic()
            problems = judge(case, work)
            return case.name, problems, time.monotonic() - t0
        with ThreadPoolExecutor(jobs) as pool:
            results = list(pool.map(one, range(len(CASES))))
    bad = skipped = 0
    for name, problems, secs in results:
        if times:
            print(f"{secs:6.1f} s  {name}")
        if problems is None:
            skipped += 1
            print(f"SKIP {name}: no CAP_MKNOD")
        elif problems:
            bad += 1
            print(f"FAIL {name}: " + "; ".join(problems))
    print(f"{len(results) - bad - skipped} of {len(results)} cases ended clean, {bad} did not, "
          f"{skipped} skipped")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2, "--times" in sys.argv)
