"""Every file the tool reads, fuzzed: whatever bytes a model file, a result
file, observations, a space file, a recorded folder or a .npy holds, the
command ends with exit 0, 1 or 2 (4: a probe that followed no hypothesis)
and no traceback (never 3, the exit of an internal error).

Each case starts from a real file of the checkout, cut short, with bytes
changed, or replaced by random bytes (Hypothesis), and runs the command in
this process. The default run tries a few cases per reader; `-m slow` many.
"""

from __future__ import annotations

import gzip
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from checkout import ROOT
from cli_run import run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

MODEL = ROOT / "models" / "ampere-fp16-fp32.toml"
RESULT = ROOT / "results" / "volta" / "rounding.json"
OBSERVATIONS = ROOT / "results" / "hardware" / "H100" / "mma-f16-f32.json"
RECORDED = ROOT / "data" / "hwdata" / "A100" / "fp16"


def mangled(original: bytes):
    """The file cut short, with a few bytes changed, or random bytes."""
    n = len(original)
    cut = st.integers(0, n).map(lambda i: original[:i])
    changed = st.lists(st.tuples(st.integers(0, max(n - 1, 0)), st.integers(0, 255)), min_size=1,
                       max_size=8).map(lambda edits: _edit(original, edits))
    return st.one_of(cut, changed, st.binary(max_size=600))


def _edit(data: bytes, edits) -> bytes:
    b = bytearray(data)
    for i, v in edits:
        if i < len(b):
            b[i] = v
    return bytes(b)


def judged(argv) -> None:
    r = run(argv)
    assert r.exit_code in (0, 1, 2, 4), (r.exit_code, r.output[-2000:])
    assert "Traceback" not in r.output, r.output[-2000:]


FEW = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck),
               derandomize=True)


def file_with(data: bytes, name: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="tcsmt-fuzz-"))
    path = folder / name
    path.write_bytes(data)
    return path


@FEW
@given(mangled(MODEL.read_bytes()))
def test_a_model_file(data):
    path = file_with(data, "m.toml")
    judged(["simulate", "--arch", path, "--a", "1", "--b", "1", "--c", "0"])
    shutil.rmtree(path.parent)


@FEW
@given(mangled(RESULT.read_bytes()))
def test_a_result_file(data):
    path = file_with(data, "r.json")
    judged(["replay", path])
    shutil.rmtree(path.parent)


@FEW
@given(mangled(OBSERVATIONS.read_bytes()[:4000]))
def test_observations(data):
    path = file_with(data, "obs.json")
    judged(["check", path, "--arch", "hopper"])
    judged(["harness", path, "-o", path.parent / "probe.cu"])
    shutil.rmtree(path.parent)


@FEW
@given(st.sampled_from(["a", "d"]), mangled(gzip.decompress((RECORDED / "d_A100_fp32.txt.gz")
                                                            .read_bytes())[:3000]),
       st.booleans())
def test_a_recorded_folder(which, data, compressed):
    folder = Path(tempfile.mkdtemp(prefix="tcsmt-fuzz-")) / "A100" / "fp16"
    shutil.copytree(RECORDED, folder)
    target = next(folder.glob(f"{which}_A100_fp{'16' if which == 'a' else '32'}.txt.gz"))
    target.write_bytes(gzip.compress(data) if compressed else data)
    judged(["conformance", folder.parent.parent])
    shutil.rmtree(folder.parent.parent)


def _npy(x: np.ndarray) -> bytes:
    import io
    buf = io.BytesIO()
    np.save(buf, x)
    return buf.getvalue()


NPY = _npy(np.ones((4, 8), np.float16))


@FEW
@given(mangled(NPY))
def test_a_npy_operand(data):
    path = file_with(data, "A.npy")
    b = path.parent / "B.npy"
    b.write_bytes(_npy(np.ones((8, 4), np.float16)))
    judged(["gemm", path, b, "--arch", "ampere", "--formats", "fp16:fp16", "-o", path.parent / "D.npy"])
    shutil.rmtree(path.parent)


SPACE = ROOT / "benchmarks" / "plan-space.toml"


@FEW
@given(mangled(SPACE.read_bytes()))
def test_a_space_file(data):
    """What identify and plan read with --space: a space, or one line
    (UserError), also for each of its first hypotheses."""
    from tcsmt.errors import UserError
    from tcsmt.identify.space import load_space
    path = file_with(data, "space.toml")
    try:
        space = load_space(path)
        for _, combo in zip(range(8), space.combinations()):
            space.model(combo)
    except UserError as e:
        assert "\n" not in str(e)
    finally:
        shutil.rmtree(path.parent)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(["model", "result", "obs"]), st.binary(max_size=4000))
def test_many_random_files(kind, data):
    name, argv = {"model": ("m.toml", ["simulate", "--arch", "{}", "--a", "1", "--b", "1", "--c", "0"]),
                  "result": ("r.json", ["replay", "{}"]),
                  "obs": ("obs.json", ["check", "{}", "--arch", "hopper"])}[kind]
    path = file_with(data, name)
    judged([str(path) if a == "{}" else a for a in argv])
    shutil.rmtree(path.parent)
