"""The same jobs on a real Dask cluster: a scheduler and two worker
processes on this machine (tests/dask_cluster.py). regen of one
architecture and a small plan give the files a local run gives; a worker
killed mid-job does not lose its job."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from functools import partial
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")

from cli_run import script  # noqa: E402
from dask_cluster import LocalCluster, slow_square, wait_to_be_killed  # noqa: E402
from procs import sigint_as_in_a_terminal  # noqa: E402

from tcsmt import runner  # noqa: E402
from tcsmt.model.formats import get_format  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
QUICK = ["align-bits", "rounding", "chaining", "carry-bits-proof"]    # volta: about 20 s of queries


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = LocalCluster(tmp_path_factory.mktemp("dask")).start()
    try:
        yield c
    finally:
        c.stop()


def test_jobs_on_the_cluster_give_what_local_processes_give(cluster):
    tasks = [runner.Task(f"t{i}", partial(slow_square, i)) for i in range(6)]
    seen = []
    away = runner.run(tasks, scheduler=cluster.address, progress=lambda *a: seen.append(a))
    here = runner.run(tasks, workers=2)
    assert [d.result()[0] for d in away] == [d.result()[0] for d in here] == [i * i for i in range(6)]
    assert len({d.worker for d in away}) == 2                       # both workers took jobs
    assert seen[0] == ("", 0, 6) and seen[-1][1:] == (6, 6)
    ok, bad = runner.run([runner.Task("ok", partial(divmod, 7)), runner.Task("bad", partial(divmod, 7))],
                         shared=0, scheduler=cluster.address)
    assert ok.failure == bad.failure == "crash" and "ZeroDivisionError" in ok.error
    twice = runner.run([runner.Task(str(i), partial(divmod, 7)) for i in range(2)], shared=3,
                       scheduler=cluster.address)
    assert [d.result() for d in twice] == [(2, 1), (2, 1)]             # shared data, sent once


def test_a_killed_worker_does_not_lose_its_job(cluster, tmp_path):
    marker = tmp_path / "running"

    def kill_when_running():
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.3)
        os.kill(int(marker.read_text()), signal.SIGKILL)      # a worker process (its nanny stays)

    killer = threading.Thread(target=kill_when_running)
    killer.start()
    tasks = [runner.Task("victim", partial(wait_to_be_killed, str(marker), 42))] + \
        [runner.Task(f"t{i}", partial(slow_square, i, 0.2)) for i in range(4)]
    done = runner.run(tasks, scheduler=cluster.address)
    killer.join()
    assert [d.result() if d.name == "victim" else d.result()[0] for d in done] == [42, 0, 1, 4, 9], \
        cluster.log()
    cluster.client.wait_for_workers(2, timeout=90)          # the nanny restarted the worker


def regen(root: Path, *args: str) -> subprocess.CompletedProcess:
    r = subprocess.run([script(), "regen", "volta", "--root", str(root), *args],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def committed(root: Path) -> Path:
    """A results root holding the committed volta results (the searches
    start from their vectors, as regen in the repository does)."""
    shutil.copytree(ROOT / "results" / "volta", root / "volta")
    return root


def same_files(a: Path, b: Path) -> None:
    names = sorted(p.relative_to(a).as_posix() for p in a.rglob("*.json") if ".cache" not in p.parts)
    assert names == sorted(p.relative_to(b).as_posix() for p in b.rglob("*.json") if ".cache" not in p.parts)
    for n in names:
        assert (a / n).read_bytes() == (b / n).read_bytes(), n
    keys = [{Path(k).relative_to(r).as_posix(): v for k, v in json.loads((r / ".cache/regen-keys.json")
                                                                     .read_text()).items()} for r in (a, b)]
    assert keys[0] == keys[1]


def test_regen_on_the_cluster_writes_the_files_of_a_local_run(cluster, tmp_path):
    props = [a for p in QUICK for a in ("--property", p)]
    here = committed(tmp_path / "here")
    away = committed(tmp_path / "away")
    regen(here, *props, "--force")
    r = regen(away, *props, "--force", "--scheduler", cluster.address)
    assert f"{len(QUICK)} unchanged" in r.stdout, r.stdout
    same_files(here, away)
    for n in QUICK:
        assert (away / "volta" / f"{n}.json").read_bytes() == \
            (ROOT / "results" / "volta" / f"{n}.json").read_bytes()
    r = regen(away, *props, "--scheduler", cluster.address)          # the cache keys hold
    assert f"{len(QUICK)} cached" in r.stdout, r.stdout


def test_an_interrupted_regen_on_the_cluster_leaves_files_old_or_new(cluster, tmp_path):
    root = tmp_path / "results"
    args = [script(), "regen", "volta", "--root", str(root), "--scheduler", cluster.address]
    for n in QUICK + ["nan-inf", "normalisation", "subnormals"]:
        args += ["--property", n]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=sigint_as_in_a_terminal)
    deadline = time.monotonic() + 120
    while not list(root.glob("volta/*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "interrupted:" in err and "Traceback" not in err, out + err
    written = list(root.glob("volta/*.json"))
    told = int(err.split("interrupted: ")[1].split()[0])
    assert written and len(written) == told
    for path in written:
        assert json.loads(path.read_text())["schema"] == "tcsmt-result/2"      # whole: new, never half


def test_a_small_plan_on_the_cluster_is_the_local_plan(cluster, tmp_path, monkeypatch):
    from distributed import get_task_stream

    from tcsmt.identify.hypspace import single
    from tcsmt.identify.plan import build_plan, plan_record
    from tcsmt.identify.space import load_space
    from tcsmt.sim import evaluate
    monkeypatch.setattr(evaluate, "BATCH", 8)             # 36 hypotheses: several batches, several jobs
    (tmp_path / "small.toml").write_text(SMALL)
    space = single(load_space(tmp_path / "small.toml"))
    here = plan_record(build_plan(space, pool_size=600, solver_budget=0))
    runner.use_scheduler(cluster.address)
    try:
        with get_task_stream(client=cluster.client) as stream:
            away = plan_record(build_plan(space, pool_size=600, solver_budget=0))
    finally:
        runner.use_scheduler(None)
    assert len([t for t in stream.data if t["key"].startswith("tcsmt-")]) >= 5
    for rec in (here, away):
        del rec["created"]
        rec["stats"] = {k: v for k, v in rec["stats"].items() if "seconds" not in k}
    assert away == here


SMALL = """
base = "hopper-fp16-fp32"
[axes]
block_size = [4, 8, 16]
align_bits = [0, 1, 2]
final_rounding = ["rz", "rne"]
subnormals = ["keep", "flush_outputs"]
"""


def test_gemm_tiles_on_the_cluster(cluster, tmp_path):
    from cli_run import tcsmt

    from tcsmt.sim.npio import from_bits
    rng = np.random.default_rng(2)
    shapes = {"A": (64, 1100), "B": (1100, 48), "C": (64, 48)}      # K in 3 parts: 3 chained tasks
    for name, shape in shapes.items():
        bits = rng.integers(0, 0x7c00, size=shape, dtype=np.uint64)     # finite fp16 and binary32 values
        x = from_bits(bits, get_format("float16")) if name != "C" else \
            from_bits(bits << np.uint64(13), get_format("float32"))
        np.save(tmp_path / f"{name}.npy", x)
    files = [tmp_path / f"{n}.npy" for n in shapes]
    gemm = ["gemm", "--arch", "ampere", *files, "--backend", "numpy", "-o"]
    assert tcsmt([*gemm, tmp_path / "here.npy"])[0] == 0
    assert tcsmt([*gemm, tmp_path / "away.npy", "--scheduler", cluster.address])[0] == 0
    assert np.load(tmp_path / "away.npy").tobytes() == np.load(tmp_path / "here.npy").tobytes()


@pytest.mark.slow
def test_regen_of_a_whole_architecture_on_the_cluster(cluster, tmp_path):
    here, away = committed(tmp_path / "here"), committed(tmp_path / "away")
    for name in ("compare-algorithms", "coverage"):
        for r in (here, away):
            shutil.copytree(ROOT / "results" / name, r / name)
    regen(here, "--force")
    regen(away, "--force", "--scheduler", cluster.address)
    same_files(here, away)
