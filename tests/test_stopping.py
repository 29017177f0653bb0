"""Stopping a command, and what it leaves: the faults of issue 12 reproduced.

Each command runs as the installed entry point in a session of its own, so
every process it starts carries that session id (tests/procs.py scans
/proc for them, as ``pgrep -s SID`` would).

- Killing regen's or find's main process ends every worker and solver
  process within seconds (they die with their parent), and nothing is
  written afterwards.
- Ctrl-C (SIGINT to the foreground process group, as a terminal sends it)
  ends regen within seconds with one line that says how many files were
  written, and that many are there; find ends with "error: interrupted".
- regen never takes a file holding an unknown for a cache hit, and never
  replaces a proof by an unknown: it keeps the proved file, reports it
  "lost" and exits 1.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time

from checkout import RESULTS
from cli_run import script
from procs import kill_session, left_after, session_processes, start, wait_until

from tcsmt.regen.jobs import has_unknown


def result_files(root) -> dict[str, bytes]:
    """Every result file under a results root (not the cache), by path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.json"))
            if ".cache" not in p.parts}


def regen_argv(root, *args: str) -> list[str]:
    return [script(), "regen", *args, "--root", str(root)]


def test_killing_regen_ends_its_workers(tmp_path):
    root = tmp_path / "results"
    p = start(regen_argv(root, "volta", "--jobs", "2", "--timeout", "30", "--force"))
    try:
        running = wait_until(lambda: len(session_processes(p.pid)) >= 3, 120)
        assert running, f"regen's workers did not start: {p.poll()} {session_processes(p.pid)}"
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=10)
        assert left_after(p.pid, 3) == []
        files = result_files(root)
        time.sleep(1.5)
        assert result_files(root) == files, "a file was written after regen was killed"
    finally:
        kill_session(p.pid)


def test_ctrl_c_on_regen_stops_at_once_and_says_what_it_wrote(tmp_path):
    root = tmp_path / "results"
    p = start(regen_argv(root, "volta", "--jobs", "2", "--timeout", "30"))
    try:
        assert wait_until(lambda: result_files(root) if root.exists() else None, 240), \
            f"no result file appeared: {p.poll()}"
        os.killpg(p.pid, signal.SIGINT)
        t0 = time.monotonic()
        out, err = p.communicate(timeout=30)
        assert time.monotonic() - t0 < 10, "regen took more than 10 s to stop after Ctrl-C"
        # the progress bar's last state may stand above the one error line
        assert p.returncode == 2 and err.splitlines()[-1].startswith("error: interrupted"), err
        assert err.count("error:") == 1 and "Traceback" not in err, err
        m = re.search(r"interrupted: (\d+) file\(s\) written", err)
        assert m, err
        assert left_after(p.pid, 3) == []
        files = result_files(root)
        assert int(m.group(1)) == len(files), (err, sorted(files))
        time.sleep(1.5)
        assert result_files(root) == files, "a file was written after regen said it stopped"
    finally:
        kill_session(p.pid)


def find_argv(tmp_path) -> list[str]:
    """A find that keeps its solvers busy for a long time (CDNA3 has no
    monotonicity witness within a minute)."""
    return [script(), "find", "monotonicity", "--arch", "cdna3", "--timeout", "120",
            "-o", str(tmp_path / "m.json")]


def test_killing_find_ends_its_solvers(tmp_path):
    p = start(find_argv(tmp_path))
    try:
        assert wait_until(lambda: len(session_processes(p.pid)) >= 2, 120), \
            f"no solver process started: {p.poll()}"
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=10)
        assert left_after(p.pid, 3) == []
        assert not (tmp_path / "m.json").exists()
    finally:
        kill_session(p.pid)


def test_ctrl_c_on_find_ends_its_solvers(tmp_path):
    p = start(find_argv(tmp_path))
    try:
        assert wait_until(lambda: len(session_processes(p.pid)) >= 2, 120), \
            f"no solver process started: {p.poll()}"
        os.killpg(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=30)
        assert p.returncode == 130 and err == "error: interrupted\n", err
        assert left_after(p.pid, 3) == []
        assert not (tmp_path / "m.json").exists()
    finally:
        kill_session(p.pid)


def regen(root, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(regen_argv(root, "hopper", "--property", "nan-inf", *args),
                          capture_output=True, text=True, timeout=600)


def test_an_unknown_is_never_a_cache_hit(tmp_path):
    """[tcsmt regen hopper --property nan-inf --timeout 0.1, twice]: the
    second run is cached only when the first one proved its answer."""
    root = tmp_path / "results"
    r = regen(root, "--timeout", "0.1")
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((root / "hopper" / "nan-inf.json").read_text())
    r = regen(root, "--timeout", "0.1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert ("1 cached" in r.stdout) == (not has_unknown(doc)), (doc["verdict"], r.stdout)


def test_a_proof_is_never_replaced_by_an_unknown(tmp_path):
    """[tcsmt regen hopper --property nan-inf --force --timeout 0.1] over the
    committed proof: the proof stays byte for byte; when the short timeout
    gives no answer, regen says "lost" and exits 1."""
    root = tmp_path / "results"
    (root / "hopper").mkdir(parents=True)
    proved = root / "hopper" / "nan-inf.json"
    shutil.copy(RESULTS / "hopper" / "nan-inf.json", proved)
    before = proved.read_bytes()
    assert json.loads(before)["verdict"] == "unsat"
    r = regen(root, "--force", "--timeout", "0.1")
    assert proved.read_bytes() == before
    if "lost" in r.stdout:
        assert r.returncode == 1 and "1 lost" in r.stdout, r.stdout
        r = regen(root, "--timeout", "0.1")       # not cached: the key was never recorded
        assert "cached" not in r.stdout and proved.read_bytes() == before, r.stdout
    else:                                         # proved again within 0.1 s
        assert r.returncode == 0 and "1 unchanged" in r.stdout, r.stdout
