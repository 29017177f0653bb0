"""Hostile input, kept (issue 26): every output option of every command
aimed at what is not a regular file, every reader handed what never ends,
every numeric option and TCSMT_* variable given nonsense, work too large
for the machine, SIGTERM. Each case must end with exit 0, 1 or 2 as
documented, one error line on stderr, no traceback, within its seconds and
memory, leaving every file around it as it was (type, inode, bytes) but
what it may write. tests/hostile.py runs and judges a case.

Cases that make character devices need CAP_MKNOD (root outside a user
namespace); where it is missing they skip, saying so: the same targets are
also reached through links to the real /dev/null, /dev/full and /dev/zero,
which need nothing.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import stat
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from checkout import HWDATA, RESULTS
from hostile import Case, can_mknod, judge

V100 = str(HWDATA / "V100")
SPACE = 'base = "volta-fp16-fp32"\n[axes]\nalign_bits = [0, 1]\nfinal_rounding = ["rz", "rne"]\n'


# ---------------------------------------------------------------------------
# What a case finds around it
# ---------------------------------------------------------------------------

def chardev(name: str, minor: int):
    """A character device made with mknod: minor 3 behaves as /dev/null,
    5 as /dev/zero, 7 as /dev/full."""
    def make(d: Path):
        os.mknod(d / name, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    return make


def fifo(name: str):
    return lambda d: os.mkfifo(d / name)


def sock(name: str):
    def make(d: Path):
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(d / name))
        s.close()                       # the socket file stays
    return make


def link(name: str, target: str):
    return lambda d: os.symlink(target, d / name)


def folder(name: str):
    return lambda d: (d / name).mkdir()


def sparse(name: str, size: int, head: bytes = b""):
    def make(d: Path):
        with open(d / name, "wb") as f:
            f.write(head)
            f.truncate(size)
    return make


def npy_header(name: str, shape: tuple, dtype: str = "<f2"):
    """A .npy file whose header says ``shape`` and whose data are a hole
    of that size (a sparse file: no disk used)."""
    def make(d: Path):
        header = f"{{'descr': '{dtype}', 'fortran_order': False, 'shape': {shape}, }}".encode()
        header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
        head = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header
        count = int(np.prod(shape)) * np.dtype(dtype).itemsize
        sparse(name, len(head) + count, head)(d)
    return make


def arrays(d: Path):
    np.save(d / "A.npy", np.ones((2, 4), np.float16))
    np.save(d / "B.npy", np.ones((4, 2), np.float16))


def space_file(d: Path):
    (d / "space.toml").write_text(SPACE)


def both(*setups):
    def make(d: Path):
        for s in setups:
            s(d)
    return make


# ---------------------------------------------------------------------------
# Output paths: every command's every output option, at what is not a file
# ---------------------------------------------------------------------------

# command -> (argv with OUT for the output path, suffix the path needs, setup, files it may also write)
OUTPUTS = {
    "error --json": (["error", "volta", "--m", "2", "--n", "2", "--k", "4", "--dist", "normal",
                      "--format", "csv", "--json", "OUT"], ".json", None, ()),
    "error --plot": (["error", "volta", "--m", "2", "--n", "2", "--k", "4", "--dist", "normal",
                      "--format", "csv", "--plot", "OUT"], ".png", None, ()),
    "gemm -o": (["gemm", "A.npy", "B.npy", "-o", "OUT", "--arch", "volta", "--backend", "numpy"],
                ".npy", arrays, ()),
    "find -o": (["find", "rounding", "--arch", "volta", "-o", "OUT"], ".json", None, ()),
    "prove -o": (["prove", "carry-bits", "--arch", "volta", "-o", "OUT"], ".json", None, ()),
    "diff -o": (["diff", "volta", "ampere", "--k", "2", "--force", "-o", "OUT"], ".json", None, ()),
    "diff --emit-smt2": (["diff", "volta", "ampere", "--k", "2", "--emit-smt2", "OUT", "-o", "d.json"],
                         ".smt2", None, ("d.json",)),
    "equiv -o": (["equiv", "volta", "--force", "-o", "OUT"], ".json", None, ()),
    "conformance --json": (["conformance", V100, "--limit", "10", "--json", "OUT"], ".json", None, ()),
    "harness -o": (["harness", "fp16-fp32", "-o", "OUT"], ".cu", None, ()),
    "model save -o": (["model", "save", "m", "--arch", "volta", "--set", "align_bits=1", "-o", "OUT"],
                      ".toml", None, ()),
    "identify -o": (["identify", "--device", "sim:volta", "--no-prove", "-o", "OUT"], ".json", None,
                    ("identified-sim-volta-fp16-fp32.toml",)),     # the model file it writes by default
    "plan -o": (["plan", "--space", "space.toml", "--candidates", "50", "--solver-budget", "2", "-o", "OUT"],
                ".json", space_file, ()),
    "coverage --output": (["coverage", "fasi-v100", "--no-generate", "--output", "OUT"], ".json", None, ()),
    "agreement -o": (["agreement", "volta-fp16-fp32", "--vectors", "10", "-o", "OUT"], ".json", None,
                     ("out.md",)),
}

# target kind -> (setup of a path NAME, exits allowed, paths outside the folder to keep)
TARGETS = {
    "a character device": (lambda n: chardev(n, 3), (0, 2), ()),
    "a full device": (lambda n: chardev(n, 7), (2,), ()),
    "a link to /dev/null": (lambda n: link(n, "/dev/null"), (0, 2), ("/dev/null",)),
    "a link to /dev/full": (lambda n: link(n, "/dev/full"), (2,), ("/dev/full",)),
    "a pipe no one reads": (fifo, (2,), ()),
    "a socket": (sock, (2,), ()),
    "a folder": (folder, (2,), ()),
    "a link to a folder": (lambda n: both(folder("real"), link(n, "real")), (2,), ()),
}


CHEAP_OUTPUTS = ("model save -o", "harness -o")
"""Commands quick enough to meet every target in the default run; each other
command meets one target there (CORE_TARGET: the long ones a target refused
before the work), all of them under the slow marker."""
CORE_TARGET = {"error --json": "a full device", "error --plot": "a link to /dev/null",
               "gemm -o": "a character device", "find -o": "a socket", "prove -o": "a folder",
               "diff -o": "a pipe no one reads", "diff --emit-smt2": "a link to /dev/full",
               "equiv -o": "a character device", "conformance --json": "a link to a folder",
               "identify -o": "a socket", "plan -o": "a pipe no one reads", "coverage --output": "a folder",
               "agreement -o": "a link to a folder"}


def output_cases() -> list[Case]:
    cases = []
    for cmd, (argv, suffix, setup, also) in OUTPUTS.items():
        for kind, (make, exits, outside) in TARGETS.items():
            name = "out" + suffix
            mknod = "device" in kind
            core = cmd in CHEAP_OUTPUTS or kind == CORE_TARGET[cmd]
            cases.append(Case(f"{cmd} at {kind}", [name if a == "OUT" else a for a in argv], exits,
                              setup=both(*(s for s in (setup, make(name)) if s)), writes=also,
                              outside=outside, needs="mknod" if mknod else "", seconds=60, core=core))
    return cases


def _stdout_holds(text: str):
    def check(d: Path, out: str, err: str) -> list[str]:
        return [] if text in out else [f"stdout does not hold {text!r}"]
    return check


def _file_holds(name: str, text: str):
    def check(d: Path, out: str, err: str) -> list[str]:
        p = d / name
        if not p.is_file():
            return [f"{name} is not a file"]
        return [] if text in p.read_text(errors="replace") else [f"{name} does not hold {text!r}"]
    return check


WRITE_THROUGH = [
    Case("error --json /proc/self/fd/1 writes to stdout",
         ["error", "volta", "--m", "2", "--n", "2", "--k", "4", "--dist", "normal", "--format", "csv",
          "--json", "/proc/self/fd/1"], (0,), after=_stdout_holds('"schema": "tcsmt-error/1"')),
    Case("harness -o a link to /dev/stdout writes to stdout", ["harness", "fp16-fp32", "-o", "out.cu"], (0,),
         setup=link("out.cu", "/dev/stdout"), after=_stdout_holds("mma.sync")),
    Case("model save -o a link to a file replaces the file, keeps the link",
         ["model", "save", "m", "--arch", "volta", "--set", "align_bits=1", "-o", "out.toml"], (0,),
         setup=both(lambda d: (d / "real.toml").write_text("old\n"), link("out.toml", "real.toml")),
         writes=("real.toml",), after=_file_holds("real.toml", "align_bits")),
    Case("model save -o a dangling link creates its target",
         ["model", "save", "m", "--arch", "volta", "--set", "align_bits=1", "-o", "out.toml"], (0,),
         setup=link("out.toml", "made.toml"), writes=("made.toml",),
         after=_file_holds("made.toml", "align_bits")),
    Case("harness -o a pipe no one reads: refused at once", ["harness", "fp16-fp32", "-o", "p.cu"], (2,),
         words=("pipe",), setup=fifo("p.cu"), seconds=20),
    Case("regen --root a file", ["regen", "volta", "--property", "rounding", "--root", "r"], (2,),
         setup=lambda d: (d / "r").write_text("x")),
    Case("regen --root a character device", ["regen", "volta", "--property", "rounding", "--root", "r"],
         (2,), setup=chardev("r", 3), needs="mknod"),
    Case("model save into a missing folder's place held by a device",
         ["model", "save", "m", "--arch", "volta", "--set", "align_bits=1", "-o", "dev/m.toml"], (2,),
         setup=chardev("dev", 3), needs="mknod"),
]


# ---------------------------------------------------------------------------
# Readers: what never ends, what is huge, what is not a file
# ---------------------------------------------------------------------------

# reader -> argv with IN for the path read, suffix, setup of the other files
READERS = {
    "replay": (["replay", "IN"], ".json", None),
    "check": (["check", "IN", "--arch", "volta"], ".json", None),
    "identify": (["identify", "IN"], ".json", None),
    "harness": (["harness", "IN", "-o", "h.cu"], ".json", None),
    "simulate --arch FILE": (["simulate", "--arch", "IN", "--a", "1", "--b", "1"], ".toml", None),
    "gemm A": (["gemm", "IN", "B.npy", "-o", "D.npy", "--arch", "volta"], ".npy", arrays),
    "error --a": (["error", "volta", "--a", "IN", "--b", "B.npy"], ".npy", arrays),
    "plan --space": (["plan", "--space", "IN", "-o", "p.json"], ".toml", None),
    "identify --plan": (["identify", f"{V100}/fp16", "--limit", "5", "--plan", "IN"], ".json", None),
    "coverage SUITE": (["coverage", "IN", "--no-generate", "--output", "c.json"], ".json", None),
    "find's earlier result": (["find", "rounding", "--arch", "volta", "-o", "IN"], ".json", None),
}

SOURCES = {
    "endless zeros": (lambda n: chardev(n, 5), "mknod"),
    "a link to /dev/zero": (lambda n: link(n, "/dev/zero"), ""),
    "a pipe no one writes": (fifo, ""),
    "a 3 GB sparse file": (lambda n: sparse(n, 3 << 30, b"{"), ""),
    "a folder": (folder, ""),
    "/dev/stdin at end": (lambda n: link(n, "/dev/stdin"), ""),
}


CHEAP_READERS = ("replay", "check", "simulate --arch FILE", "gemm A")


def reader_cases() -> list[Case]:
    """Every reader handed every source (a pipe no one writes is waited on
    for TCSMT_PIPE_WAIT = 2 s here; one case keeps the default). find's
    earlier result is also its output: the result may go there (written
    through a device, replacing a file too large to be a result). The
    quick readers meet every source in the default run, the others one each."""
    cases = []
    kinds = list(SOURCES)
    for n, (cmd, (argv, suffix, setup)) in enumerate(READERS.items()):
        output = cmd == "find's earlier result"
        for kind, (make, needs) in SOURCES.items():
            name = "in" + suffix
            core = cmd in CHEAP_READERS or kind == kinds[n % len(kinds)]
            cases.append(Case(f"{cmd} reads {kind}", [name if a == "IN" else a for a in argv],
                              (0, 2) if output else (2,), writes=(name,) if output else (),
                              setup=both(*(s for s in (setup, make(name)) if s)), needs=needs,
                              env={"TCSMT_PIPE_WAIT": "2"}, seconds=45, memory=1024 << 20, core=core))
    cases.append(Case("replay waits 30 s at most for a pipe no one writes", ["replay", "in.json"], (2,),
                      words=("nothing came for 30 s",), setup=fifo("in.json"), seconds=60, core=False))
    return cases


# ---------------------------------------------------------------------------
# Numbers and environment
# ---------------------------------------------------------------------------

NUMBERS = [
    # (option's command line with X for the value, values refused)
    (["find", "rounding", "--arch", "volta", "-o", "f.json", "--timeout", "X"],
     ["nan", "inf", "-1", "0", "1e400"]),
    (["prove", "carry-bits", "--arch", "volta", "-o", "p.json", "--timeout", "X"], ["nan", "inf"]),
    (["diff", "volta", "ampere", "-o", "d.json", "--timeout", "X"], ["nan", "-inf"]),
    (["equiv", "volta", "ampere", "-o", "e.json", "--timeout", "X"], ["nan"]),
    (["regen", "volta", "--root", "r", "--timeout", "X"], ["nan", "inf", "-1"]),
    (["regen", "volta", "--root", "r", "--jobs", "X"], ["99999999999", "0", "-2"]),
    (["identify", "--device", "sim:volta", "--timeout", "X"], ["nan", "inf", "-5"]),
    (["identify", f"{V100}/fp16", "--limit", "X"], ["-5", "0", "nan"]),
    (["plan", "--space", "space.toml", "-o", "p.json", "--solver-budget", "X"], ["nan", "-1", "inf"]),
    (["plan", "--space", "space.toml", "-o", "p.json", "--candidates", "X"], ["-5", "0", "1e12"]),
    (["plan", "--space", "space.toml", "-o", "p.json", "--seed", "X"], ["-1", "99999999999999999999999"]),
    (["error", "volta", "--k", "4", "--m", "2", "--n", "2", "--seed", "X"],
     ["-1", "99999999999999999999999"]),
    (["error", "volta", "--m", "2", "--n", "2", "--k", "X"], ["99999999999999999999", "0", "-3", "4,nan"]),
    (["error", "volta", "--m", "X", "--n", "2", "--k", "4"], ["0", "1e8", "99999999999999999999"]),
    (["coverage", "fasi-v100", "--output", "c.json", "--budget", "X"], ["nan", "inf"]),
    (["coverage", "fasi-v100", "--output", "c.json", "--timeout", "X"], ["nan"]),
    (["compare-algorithms", "markidis", "ootomo-yokota", "--arch", "volta", "--output", "c.json",
      "--timeout", "X"], ["nan", "-1"]),
    (["agreement", "volta-fp16-fp32", "-o", "a.json", "--vectors", "X"], ["0", "1e15", "99999999999999"]),
    (["agreement", "volta-fp16-fp32", "-o", "a.json", "--seed", "X"], ["-1"]),
    (["check", f"{V100}/fp16", "--arch", "volta", "--show", "X"], ["-1", "99999999999999999999"]),
    (["conformance", V100, "--limit", "X"], ["0", "-1"]),
    (["diff", "volta", "ampere", "-o", "d.json", "--count", "X"], ["0", "nan"]),
    (["simulate", "--arch", "volta", "--a", "1", "--b", "1", "--c", "X"], ["nan(5)", "1e99999999"]),
    (["diff", "volta", "ampere", "-o", "d.json", "--exp-range", "X"],
     ["99999999999:99999999999999", "1:nan"]),
    (["diff", "volta", "ampere", "-o", "d.json", "--c-exp-range", "X"], ["-999999999999:5"]),
    (["diff", "volta", "ampere", "-o", "d.json", "--nonzero", "X"], ["99999999999"]),
]


def number_cases() -> list[Case]:
    """Each option's values; the first of each in the default run."""
    cases = []
    for argv, values in NUMBERS:
        opt = argv[argv.index("X") - 1]
        for i, v in enumerate(values):
            cases.append(Case(f"{argv[0]} {opt} {v}", [v if a == "X" else a for a in argv], (2,),
                              setup=space_file, seconds=40, core=i == 0))
    return cases


ENVIRONMENT = {
    "TCSMT_WORKERS": ["abc", "-1", "0", "99999999", "1e3", "nan"],
    "TCSMT_SCHEDULER": ["garbage", "tcp://", "tcp://127.0.0.1:1", "http://[::1", "tcp://h:99999",
                        "{silent}", "{http}"],
    "TCSMT_MEMORY": ["abc", "-1", "0", "nan", "1e999", "5XB", "12"],
    "TCSMT_PIPE_WAIT": ["abc", "0", "-1", "inf", "1e9"],
    "TCSMT_KERNEL_CACHE": ["./a-file", "/proc/version/x"],
}
ENV_COMMAND = {
    "TCSMT_MEMORY": ["error", "volta", "--m", "2", "--n", "2", "--k", "4"],
    "TCSMT_PIPE_WAIT": ["check", "fifo.json"],
    "TCSMT_KERNEL_CACHE": ["gemm", "A.npy", "B.npy", "-o", "D.npy", "--arch", "volta", "--backend", "cpu"],
}
REGEN = ["regen", "volta", "--property", "rounding", "--root", "r"]


def env_cases() -> list[Case]:
    """Each variable given nonsense, on a command that reads it. {silent} is
    a TCP port that accepts and says nothing, {http} one that answers as a
    web server (a Dask dashboard's port): neither is a scheduler."""
    def setup(d: Path):
        arrays(d)
        (d / "a-file").write_text("x")
        os.mkfifo(d / "fifo.json")
    cases = [Case(f"{var}={v}", ENV_COMMAND.get(var, REGEN), (2,), setup=setup, env={var: v}, seconds=40)
             for var, values in ENVIRONMENT.items() for v in values]
    cases.append(Case("TCSMT_KERNEL_CACHE=a missing folder is made", ENV_COMMAND["TCSMT_KERNEL_CACHE"], (0,),
                      setup=arrays, env={"TCSMT_KERNEL_CACHE": "./made/here"}, writes=("made", "D.npy"),
                      seconds=240, core=False))
    return cases


# ---------------------------------------------------------------------------
# Work too large for the machine
# ---------------------------------------------------------------------------

MEMORY = [
    Case("gemm with K = 3e9 (sparse arrays)", ["gemm", "A.npy", "B.npy", "-o", "D.npy", "--arch", "volta"],
         (2,), words=("memory",), setup=both(npy_header("A.npy", (1, 3_000_000_000)),
                                             npy_header("B.npy", (3_000_000_000, 1))), seconds=30),
    Case("gemm with M = N = 2e6", ["gemm", "A.npy", "B.npy", "-o", "D.npy", "--arch", "volta"],
         (2,), words=("memory",), setup=both(npy_header("A.npy", (2_000_000, 4)),
                                             npy_header("B.npy", (4, 2_000_000))), seconds=30),
    Case("gemm with K = 1e6 runs (nothing grows with K)", ["gemm", "A.npy", "B.npy", "-o", "D.npy",
                                                          "--arch", "volta"],
         (0,), writes=("D.npy",), setup=both(npy_header("A.npy", (1, 1_000_000)),
                                            npy_header("B.npy", (1_000_000, 1))), seconds=60),
    Case("error --m 1e8 --n 1e8", ["error", "volta", "--m", "100000000", "--n", "100000000", "--k", "16"],
         (2,), words=("memory",), seconds=30),
    Case("error --k 1e9", ["error", "volta", "--m", "1", "--n", "1", "--k", "1000000000"],
         (2,), words=("memory",), seconds=30),
    Case("error --m 1e5 --n 1e5 within TCSMT_MEMORY=1G",
         ["error", "volta", "--m", "100000", "--n", "100000", "--k", "16"], (2,), words=("memory",),
         env={"TCSMT_MEMORY": "1G"}, seconds=30),
    Case("plan --candidates 1e9", ["plan", "--space", "space.toml", "-o", "p.json", "--candidates",
                                   "1000000000"], (2,), words=("memory",), setup=space_file, seconds=30),
    Case("agreement --vectors 1e8", ["agreement", "volta-fp16-fp32", "--vectors", "100000000",
                                     "-o", "a.json"], (2,), words=("memory",), seconds=120, core=False),
    Case("gemm within TCSMT_MEMORY=1M", ["gemm", "A.npy", "B.npy", "-o", "D.npy", "--arch", "volta"],
         (2,), words=("memory",),
         setup=both(npy_header("A.npy", (256, 256)), npy_header("B.npy", (256, 256))),
         env={"TCSMT_MEMORY": "1M"}, seconds=30),
]


# ---------------------------------------------------------------------------
# Small things a user types
# ---------------------------------------------------------------------------

MISC = [
    Case('model save ""', ["model", "save", "", "--arch", "volta", "--set", "align_bits=1"], (2,)),
    Case("model save a/b", ["model", "save", "a/b", "--arch", "volta", "--set", "align_bits=1"], (2,)),
    Case("model save ../x", ["model", "save", "../x", "--arch", "volta", "--set", "align_bits=1"], (2,),
         outside=("{d}/../x.toml",)),
    Case("--scheduler garbage", ["regen", "volta", "--root", "r", "--scheduler", "garbage"], (2,),
         words=("scheduler",), seconds=30),
    Case("gemm -o a file that is also A", ["gemm", "A.npy", "B.npy", "-o", "A.npy", "--arch", "volta"],
         (2,), setup=arrays),
]


# ---------------------------------------------------------------------------
# Answers, signals, pipes that stay open
# ---------------------------------------------------------------------------

ROUNDINGS = ("rounding", "final-rounding", "block-rounding")


def committed(d: Path):
    """Volta's committed rounding results under r/ (each holds a vector for
    every pair and a proof that no one vector separates them all)."""
    (d / "r" / "volta").mkdir(parents=True)
    for name in ROUNDINGS:
        shutil.copy(RESULTS / "volta" / f"{name}.json", d / "r" / "volta" / f"{name}.json")
    shutil.copy(RESULTS / "volta" / "rounding.json", d / "kept.json")


def _lost_or_unchanged(d: Path, out: str, err: str) -> list[str]:
    """A run that could not answer in time says "lost" (exit 1); one that
    did says "unchanged": either way the files are as they were."""
    return [] if "lost" in out + err or "unchanged" in out + err else ["neither lost nor unchanged"]


def silent_writer(name: str, hold: float = 20.0):
    """A named pipe whose writer opens it as soon as a reader does and then
    sends nothing for ``hold`` seconds."""
    def make(d: Path):
        path = d / name
        os.mkfifo(path)

        def hold_open():
            end = time.monotonic() + 60
            while time.monotonic() < end:
                try:
                    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
                except OSError:
                    time.sleep(0.05)
                    continue
                time.sleep(hold)
                os.close(fd)
                return
        threading.Thread(target=hold_open, daemon=True).start()
    return make


def _interrupted_count(d: Path, out: str, err: str) -> list[str]:
    m = re.search(r"interrupted: (\d+) file\(s\) written", err)
    if not m:
        return ["no count of the files written"]
    files = sorted((d / "r").rglob("*.json")) if (d / "r").exists() else []
    files = [f for f in files if ".cache" not in f.parts]
    return [] if int(m.group(1)) == len(files) else [f"said {m.group(1)} files, {len(files)} there"]


ANSWERS = [
    Case("regen --timeout 0.1 --force keeps every answer", ["regen", "volta", *sum(
        (["--property", p] for p in ROUNDINGS), []), "--timeout", "0.1", "--force", "--root", "r"], (0, 1),
         setup=committed, writes=("r/.cache",), seconds=180, after=_lost_or_unchanged),
    Case("find --timeout 0.1 over an answered file keeps it", ["find", "rounding", "--arch", "volta",
                                                               "-o", "kept.json", "--timeout", "0.1"],
         (0, 1), setup=committed, seconds=120, after=_lost_or_unchanged),
    Case("check reads a pipe whose writer says nothing", ["check", "p.json"], (2,), words=("nothing came",),
         setup=silent_writer("p.json"), env={"TCSMT_PIPE_WAIT": "2"}, seconds=30),
    Case("regen over a results folder whose file is a pipe", ["regen", "volta", "--property", "rounding",
                                                             "--property", "final-rounding", "--root", "r"],
         (1,), setup=lambda d: ((d / "r" / "volta").mkdir(parents=True),
                                os.mkfifo(d / "r" / "volta" / "rounding.json")),
         writes=("r/.cache", "r/volta/final-rounding.json"), seconds=120, core=False,
         after=lambda d, out, err: [] if "failed" in out and "named pipe" in out else ["not failed"]),
    Case("SIGTERM ends regen with the count of files written",
         ["regen", "volta", "--jobs", "2", "--timeout", "30", "--root", "r"], (2,), writes=("r",),
         signal_after=20.0, seconds=90, after=_interrupted_count),
]


# ---------------------------------------------------------------------------
# An output that is one of the command's inputs
# ---------------------------------------------------------------------------

def result_copy(d: Path):
    shutil.copy(RESULTS / "volta" / "rounding.json", d / "r.json")


def recorded_copy(d: Path):
    shutil.copytree(HWDATA / "V100", d / "V100")


def model_file(d: Path):
    (d / "m.toml").write_text('# source: test\nbase = "volta-fp16-fp32"\n# source: test\nalign_bits = 1\n')


INPUTS_AS_OUTPUTS = [
    Case("harness -o its own vectors file", ["harness", "r.json", "-o", "r.json"], (2,),
         words=("reads",), setup=result_copy),
    Case("conformance --json over a recorded file it reads",
         ["conformance", "V100", "--limit", "5", "--json", "V100/fp16/a_V100_fp16.txt.gz"], (2,),
         words=("reads",), setup=recorded_copy),
    Case("model save -o its base model file", ["model", "save", "m2", "--arch", "m.toml", "--set",
                                               "align_bits=2", "-o", "m.toml"], (2,),
         words=("reads",), setup=model_file),
    Case("plan -o its space file", ["plan", "--space", "space.toml", "-o", "space.toml", "--candidates",
                                    "20", "--solver-budget", "0"], (2,), words=("reads",), setup=space_file),
    Case("error --json over its operand A", ["error", "volta", "--a", "A.npy", "--b", "B.npy", "--json",
                                             "A.npy"], (2,), words=("reads",), setup=arrays),
    Case("harness --expect a model file, -o a link to it",
         ["harness", "fp16-fp32", "--expect", "link.toml", "-o", "link.toml"], (2,), words=("reads",),
         setup=both(model_file, link("link.toml", "m.toml"))),
]


CASES: list[Case] = (output_cases() + WRITE_THROUGH + reader_cases() + number_cases() + env_cases()
                     + MEMORY + MISC + ANSWERS + INPUTS_AS_OUTPUTS)


@pytest.mark.parametrize("case", [pytest.param(c, marks=() if c.core else pytest.mark.slow) for c in CASES],
                         ids=[c.name for c in CASES])
def test_hostile(case: Case, tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    if case.needs == "mknod" and not can_mknod(work):
        pytest.skip("making a character device needs CAP_MKNOD (root outside a user namespace); "
                    "the same targets are reached through links to /dev/null, /dev/full, /dev/zero")
    problems = judge(case, work)
    assert not problems, "\n".join(problems)


_BIG_PARENT = """
import os, resource, sys, tempfile
from pathlib import Path
from hostile import MiB, run_bounded
held = bytearray(b"1") * (2 << 30)                     # 2 GiB written, so resident
own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
with tempfile.TemporaryDirectory() as t:
    work = Path(t) / "w"
    work.mkdir()
    peaks = [run_bounded([sys.executable, "-c", code], work, dict(os.environ), 60)[2]
             for code in ("pass", "x = bytearray(b'1') * (300 << 20)")]
print(own // MiB, *(p // MiB for p in peaks))
"""


def test_the_peak_memory_is_the_commands_own_whatever_the_size_of_the_runner():
    """A case judged from a test worker that has grown to 2 GiB measures the
    command's peak, not the worker's: an empty Python stays under 64 MiB,
    one that writes 300 MiB peaks between 300 and 364 MiB."""
    import subprocess
    import sys
    ran = subprocess.run([sys.executable, "-c", _BIG_PARENT], cwd=Path(__file__).parent,
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    own, empty, grown = map(int, ran.stdout.split())
    assert own >= 2048
    assert empty < 64
    assert 300 <= grown < 364


def test_results_are_untouched_by_the_cases():
    """No case above names a path under the checkout's results/."""
    assert all(str(RESULTS) not in " ".join(c.argv) for c in CASES)
