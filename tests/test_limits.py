"""The classes of issue 26, one test (or a few) each, in this process:
output paths that are not regular files, readers that never end, the
memory budget, answers a rerun leaves unknown, options and TCSMT_*
variables out of range, SIGTERM, schedulers that are not there.
tests/test_hostile.py runs the same classes through the command line."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import threading
import time
import tracemalloc
import zlib

import numpy as np
import pytest
from checkout import RESULTS
from cli_run import tcsmt
from hostile import can_mknod

from tcsmt import budget, environment, fileio
from tcsmt.errors import AnswersLost, BadFile, BadOption, BudgetExceeded, OutputRefused
from tcsmt.processes import interrupt_after, terminate_as_interrupt
from tcsmt.report.answers import lost_answers
from tcsmt.report.results import write_result

# ---------------------------------------------------------------------------
# Output paths
# ---------------------------------------------------------------------------


def test_a_character_device_is_written_through_never_replaced(tmp_path):
    if not can_mknod(tmp_path):
        pytest.skip("making a character device needs CAP_MKNOD (root outside a user namespace)")
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    full = tmp_path / "full"
    os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    fileio.write_text_atomic(null, "x" * 100_000)
    assert stat.S_ISCHR(os.lstat(null).st_mode)
    with pytest.raises(Exception, match="No space left"):
        fileio.write_text_atomic(full, "x")
    assert stat.S_ISCHR(os.lstat(full).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full", "null"]     # no temporary left


def test_links_to_devices_stay_links(tmp_path, monkeypatch):
    from tcsmt.schemas import CHECK_ENV
    monkeypatch.delenv(CHECK_ENV, raising=False)        # a document of no schema, written through
    link = tmp_path / "out.json"
    link.symlink_to("/dev/null")
    fileio.write_json_atomic(link, {"a": 1})
    assert os.readlink(link) == "/dev/null" and stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_pipe_with_no_reader_is_refused_at_once_and_one_with_a_reader_gets_the_bytes(tmp_path):
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    with pytest.raises(OutputRefused, match="no process reads"):
        fileio.write_text_atomic(fifo, "hello")
    assert time.monotonic() - t0 < 5 and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    time.sleep(0.3)                                     # the reader has the pipe open
    text = "y" * 300_000                                # more than a pipe's buffer
    fileio.write_text_atomic(fifo, text)
    reader.join(10)
    assert got == [text.encode()] and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_stream_of_this_process_is_written_through(tmp_path):
    r, w = os.pipe()
    try:
        fileio.write_text_atomic(f"/proc/self/fd/{w}", "through\n")
        assert os.read(r, 100) == b"through\n"
    finally:
        os.close(r)
        os.close(w)


@pytest.mark.parametrize("kind", ["folder", "socket", "link to a folder"])
def test_what_is_not_a_file_is_refused(tmp_path, kind):
    path = tmp_path / "out"
    if kind == "folder":
        path.mkdir()
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path))
        s.close()
    else:
        (tmp_path / "d").mkdir()
        path.symlink_to("d")
    before = os.lstat(path)
    with pytest.raises(OutputRefused):
        fileio.write_text_atomic(path, "x")
    after = os.lstat(path)
    assert (before.st_ino, before.st_mode) == (after.st_ino, after.st_mode)


def test_a_link_to_a_file_keeps_its_place_and_the_file_its_mode(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    os.chmod(real, 0o640)
    link = tmp_path / "out.json"
    link.symlink_to("real.json")
    fileio.write_text_atomic(link, "new")
    assert os.readlink(link) == "real.json" and real.read_text() == "new"
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o640


def test_no_file_a_command_reads_is_written_over(tmp_path, monkeypatch):
    monkeypatch.setattr(fileio, "_INPUTS", {})
    src = tmp_path / "in.json"
    src.write_text('{"a": 1}')
    link = tmp_path / "link.json"
    link.symlink_to("in.json")
    assert fileio.json_object_or_none(src) == {"a": 1}          # an earlier result: not an input
    fileio.write_text_atomic(src, '{"a": 2}')
    fileio.read_json(src)                                        # an input from now on
    for target in (src, link):
        with pytest.raises(OutputRefused, match="a file this command reads"):
            fileio.write_text_atomic(target, "x")
    assert src.read_text() == '{"a": 2}' and link.is_symlink()


# ---------------------------------------------------------------------------
# Readers
# ---------------------------------------------------------------------------

def test_readers_bound_what_they_read(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(fileio.DOCUMENT_LIMIT + 1)
    with pytest.raises(BadFile, match="more than the 128.0 MiB"):
        fileio.read_json(big)
    t0 = time.monotonic()
    with pytest.raises(BadFile, match="more than"):
        fileio.read_json("/dev/zero")
    assert time.monotonic() - t0 < 20
    assert fileio.json_object_or_none("/dev/zero") is None           # not even opened
    assert fileio.json_object_or_none(big) is None


def test_a_pipe_is_never_waited_on_without_end(tmp_path, monkeypatch):
    fifo = tmp_path / "p.json"
    os.mkfifo(fifo)
    monkeypatch.setenv("TCSMT_PIPE_WAIT", "0.5")
    t0 = time.monotonic()
    with pytest.raises(BadFile, match="nothing came for 0.5 s .no process writes the named pipe"):
        fileio.read_json(fifo)
    assert time.monotonic() - t0 < 10        # 0.5 s of waiting, on a machine that may be busy

    def silent():
        fd = os.open(fifo, os.O_WRONLY)
        time.sleep(3)
        os.close(fd)
    threading.Thread(target=silent, daemon=True).start()
    t0 = time.monotonic()
    with pytest.raises(BadFile, match="nothing came for 0.5 s"):
        fileio.read_json(fifo)
    assert time.monotonic() - t0 < 10


def test_a_writer_that_comes_a_moment_after_the_reader_is_read(tmp_path, monkeypatch):
    fifo = tmp_path / "p.json"
    os.mkfifo(fifo)
    monkeypatch.setenv("TCSMT_PIPE_WAIT", "10")

    def late():
        time.sleep(0.5)
        with open(fifo, "w") as f:
            f.write('{"late": true}')
    threading.Thread(target=late, daemon=True).start()
    assert fileio.read_json(fifo) == {"late": True}


def test_a_gzip_bomb_is_refused_as_it_grows(tmp_path):
    from tcsmt.observed import recorded
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = tmp_path / "a.txt.gz"
    with open(bomb, "wb") as f:
        chunk = b"3c00 " * 200_000
        for _ in range((recorded.RECORDED_LIMIT // len(chunk)) + 2):
            f.write(z.compress(chunk))
        f.write(z.flush())
    assert bomb.stat().st_size < 2 << 20
    tracemalloc.start()
    with pytest.raises(Exception, match="unzips to more than"):
        recorded._read_lines(bomb)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 4 * recorded.RECORDED_LIMIT


# ---------------------------------------------------------------------------
# Memory
# ---------------------------------------------------------------------------

def test_the_budget_comes_from_tcsmt_memory_or_the_machine(monkeypatch):
    monkeypatch.setenv("TCSMT_MEMORY", "2G")
    assert budget.available() == (2 << 30, "TCSMT_MEMORY")
    with pytest.raises(BudgetExceeded, match=r"needs about 3 GiB .* 2 GiB is available \(TCSMT_MEMORY\)"):
        budget.require(3 << 30, "this")
    monkeypatch.delenv("TCSMT_MEMORY")
    have, source = budget.available()
    assert have is not None and have > 0 and source


def test_a_gemm_too_large_is_refused_before_it_allocates():
    """A and B of 10^12 elements each (views of one zero: nothing
    allocated; D is 1 x 1): their bits alone would need 32 TB."""
    import tcsmt
    A = np.broadcast_to(np.float16(0), (1, 10 ** 12))
    B = np.broadcast_to(np.float16(0), (10 ** 12, 1))
    tracemalloc.start()
    t0 = time.monotonic()
    with pytest.raises(BudgetExceeded, match="D = C \\+ A @ B .* needs about .* available"):
        tcsmt.matmul(A, B, arch="volta")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 64 << 20 and time.monotonic() - t0 < 120


def test_an_error_study_and_a_plan_too_large_are_refused():
    import tcsmt
    from tcsmt.identify.hypspace import space_for
    from tcsmt.identify.plan import build_plan
    with pytest.raises(BudgetExceeded, match="measuring the error"):
        tcsmt.error("volta", 100_000_000, 100_000_000, [16])
    with pytest.raises(BudgetExceeded, match="a plan of 15510 hypotheses"):
        build_plan(space_for("fp16:fp32", None), pool_size=10**9)


def test_memory_error_is_the_budget_line(monkeypatch, capsys):
    from tcsmt import api

    def boom(*a, **k):
        raise MemoryError
    monkeypatch.setattr(api, "models", boom)
    code, out, err = tcsmt(["models"], capsys)
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: out of memory"), err


# ---------------------------------------------------------------------------
# Answers
# ---------------------------------------------------------------------------

def _rounding():
    return json.loads((RESULTS / "volta" / "rounding.json").read_text())


def test_every_level_of_an_answer_counts():
    old = _rounding()
    assert old["query"]["one_vector_for_all_pairs"] == "unsat"
    new = json.loads(json.dumps(old))
    new["query"]["one_vector_for_all_pairs"] = "unknown"
    assert lost_answers(old, new) == ["one vector for all pairs: unsat"]
    new = json.loads(json.dumps(old))
    pair = new["vectors"][0]["separates"][0]
    for v in new["vectors"]:
        v["separates"] = [p for p in v["separates"] if p != pair]
    new["pairs"] = [{"pair": pair, "verdict": "unknown", "same_as": None}]
    assert lost_answers(old, new) == [f"pair {'|'.join(pair)}: separated"]
    other = json.loads(json.dumps(new))
    other["query"]["k"] = 99                                     # another question
    assert lost_answers(old, other) == []


def test_a_result_that_loses_an_answer_is_not_written(tmp_path):
    path = tmp_path / "r.json"
    path.write_text((RESULTS / "volta" / "rounding.json").read_text())
    before = path.read_bytes(), path.stat().st_ino
    new = _rounding()
    new["query"]["one_vector_for_all_pairs"] = "unknown"
    with pytest.raises(AnswersLost, match="lost: .* --replace-answers"):
        write_result(path, new)
    assert (path.read_bytes(), path.stat().st_ino) == before
    write_result(path, new, replace_answers=True)
    assert json.loads(path.read_text())["query"]["one_vector_for_all_pairs"] == "unknown"


# ---------------------------------------------------------------------------
# Options, environment, signals, schedulers
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("var,value", [("TCSMT_WORKERS", "abc"), ("TCSMT_WORKERS", "0"),
                                       ("TCSMT_WORKERS", "99999999"), ("TCSMT_MEMORY", "nan"),
                                       ("TCSMT_MEMORY", "-1"), ("TCSMT_PIPE_WAIT", "inf"),
                                       ("TCSMT_SCHEDULER", "garbage")])
def test_a_bad_variable_ends_any_command_in_one_line(monkeypatch, capsys, var, value):
    monkeypatch.setenv(var, value)
    with pytest.raises(BadOption, match=var):
        environment.check_all()
    code, out, err = tcsmt(["models"], capsys)
    assert code == 2 and err.count("\n") == 1 and var in err and not out, err


@pytest.mark.parametrize("text,value", [("4G", 4 << 30), ("512M", 512 << 20), ("1e9", 10**9),
                                        ("1.5GiB", 3 << 29)])
def test_memory_sizes(text, value):
    assert environment.size(text, "x") == value


@pytest.mark.parametrize("argv", [
    ["find", "rounding", "--arch", "volta", "--timeout", "nan"],
    ["regen", "volta", "--jobs", "99999999999"],
    ["identify", "x.json", "--limit", "-5"],
    ["plan", "--solver-budget", "inf"],
    ["error", "volta", "--seed", "-1"],
    ["error", "volta", "--k", "99999999999999999999"],
])
def test_numbers_out_of_range_are_one_line(capsys, tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    code, out, err = tcsmt(argv, capsys)
    assert code == 2 and err.count("\n") == 1 and err.startswith("error:") and not os.listdir(tmp_path), err


def test_sigterm_is_held_back_like_ctrl_c_while_a_file_is_written():
    before = signal.getsignal(signal.SIGTERM)
    try:
        terminate_as_interrupt()
        done = []
        with pytest.raises(KeyboardInterrupt):
            with interrupt_after():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.1)
                done.append(1)                          # the block finishes first
        assert done == [1]
    finally:
        signal.signal(signal.SIGTERM, before)


@pytest.mark.parametrize("kind", ["silent", "http"])
def test_a_port_that_is_not_a_scheduler_is_one_line_in_bounded_time(kind):
    pytest.importorskip("distributed")
    from hostile import listener

    from tcsmt.runner import cluster
    t0 = time.monotonic()
    with pytest.raises(Exception, match="is not a Dask scheduler"):
        cluster.connect(f"tcp://127.0.0.1:{listener(kind)}")
    assert time.monotonic() - t0 < cluster.CONNECT_TIMEOUT + cluster.PROBE_WAIT + 5


def test_the_cpu_backend_without_llvmlite_names_the_extra(monkeypatch, tmp_path, capsys):
    import sys
    np.save(tmp_path / "A.npy", np.ones((2, 4), np.float16))
    np.save(tmp_path / "B.npy", np.ones((4, 2), np.float16))
    monkeypatch.setitem(sys.modules, "llvmlite", None)        # import llvmlite fails, as when absent
    code, out, err = tcsmt(["gemm", tmp_path / "A.npy", tmp_path / "B.npy", "-o", tmp_path / "D.npy",
                            "--arch", "volta", "--backend", "cpu"], capsys)
    assert code == 2 and err.count("\n") == 1 and "pip install 'tcsmt[kernels]'" in err, err
    assert not (tmp_path / "D.npy").exists()


@pytest.mark.parametrize("endless", ["/dev/zero", "/dev/full"])
def test_an_output_at_an_endless_device_is_never_read_whole(tmp_path, endless):
    """Where a result goes looks for an earlier answer at -o; a link to a
    device that never ends (coverage --output at /dev/full took 23 GB
    before this) is not a file holding one, and is not read whole."""
    from tcsmt.report.where import holds, target
    out = tmp_path / "out.json"
    out.symlink_to(endless)
    tracemalloc.start()
    try:
        assert not holds(out, {"schema": "tcsmt-coverage", "suite": "x"})
        with pytest.raises(OutputRefused):
            target("x.json", out, question={"schema": "tcsmt-coverage", "suite": "x"})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20
    assert out.is_symlink() and os.readlink(out) == endless


def test_params_sources_of_an_endless_device_are_not_read_whole(tmp_path):
    from tcsmt.model.paramdoc import file_sources
    out = tmp_path / "m.toml"
    out.symlink_to("/dev/zero")
    tracemalloc.start()
    try:
        assert file_sources(str(out)) == {}
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20
