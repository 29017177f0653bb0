"""results/blackwell-readings: the diffs between MMA-Sim's and sf-tensor's
readings of B200's block-scaled kinds, and the sm_100a probe made from
them, which says which reading the device follows (its host side run here
against a table of d; its device code compiled with nvcc for sm_100a)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from test_probe_programs import _host_run, _nvcc

from tcsmt.model.formats import get_format
from tcsmt.observed.vectors import read_vectors
from tcsmt.probes.calibration import calibration_vectors
from tcsmt.probes.harness import program, write_probe
from tcsmt.report import results

FOLDER = Path(__file__).resolve().parent.parent / "results" / "blackwell-readings"
KINDS = ["mxf4", "mxf4nvf4-b32", "mxf4nvf4-b16", "nvfp4", "mxf8f6f4-e4m3"]


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_has_a_replaying_diff_of_the_two_readings(kind):
    doc = results.load(FOLDER / f"{kind}.json")
    assert doc["verdict"] == "sat" and doc["vectors"]
    assert [h["label"] for h in doc["hypotheses"]] == [f"blackwell-{kind}", f"blackwell-{kind}-sftensor"]
    assert all(v["separates"] == [["A", "B"]] and "scale_a" in v for v in doc["vectors"])
    assert results.replay(FOLDER / f"{kind}.json").ok


@pytest.mark.parametrize("device", ["A", "B"])
def test_probe_says_which_reading_the_device_follows(tmp_path, device):
    """A device that gives reading B's d on the diff's vectors is reported
    as following B (and the same for A)."""
    vs = read_vectors(FOLDER / "nvfp4.json")
    ins = vs.pick_instruction("tcgen05", "cuda")
    assert ins.arch == "sm_100a" and ins.scale_format == "ue4m3"
    fout = get_format(ins.out_format)
    d = [e[device] for e in vs.expected] + [fout.to_storage(x.d) for x in calibration_vectors(ins)]
    run = _host_run(tmp_path, vs, ins, d)
    assert run.returncode == 0, run.stderr
    label = dict(vs.hypotheses)[device]
    assert f"the device follows {device} ({label}), not the other 1" in run.stderr
    out = json.loads(run.stdout)
    assert {h["id"]: h["matched"] for h in out["hypotheses"]}[device] == len(vs.vectors)


def test_the_readings_probe_compiles_for_sm_100a(tmp_path):
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found")
    src = tmp_path / "b200.cu"
    ins, n = write_probe(FOLDER / "mxf4.json", src, "tcgen05")
    assert n >= 1 and "tcgen05.mma" in src.read_text()
    assert program(read_vectors(FOLDER / "mxf4.json"), ins, "b200.cu") == src.read_text()
    subprocess.run([nvcc, "-O2", "-gencode", "arch=compute_100a,code=sm_100a", "-c", str(src),
                    "-o", str(tmp_path / "b200.o")], check=True, capture_output=True, timeout=600)
    assert shutil.which(nvcc)
