"""Rows of a second k on a real device: a probe of an instruction of that k.

Blind identification runs rows at a second k when rivals differ only
there (tcsmt.identify.blind). A GPU runs them through an instruction of
exactly that k with the same formats, on the same architecture, that
computes what the probe's own instruction computes there
(tcsmt.identify.otherk); otherwise the rows are refused with one line.
Here the probes are built by nvcc and run in host mode
(--device cuda-host:MODEL), as in tests/test_probe_device.py; the
observations file names each launch's instruction and k, and replays
offline with every row judged at its own k.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_run import tcsmt

from tcsmt.identify.otherk import instruction_for_k
from tcsmt.instructions.table import instruction_by_name
from tcsmt.model.choose import choose

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
needs_hipcc = pytest.mark.skipif(shutil.which("hipcc") is None,
                                 reason="hipcc could not be installed (.ci/run tries)")
FP16_K16 = "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"
FP16_K8 = "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16"
UNIT = 'base = "ampere-fp16-fp16"\nname = "unit"\nchaining = "separate"\n'


def test_the_instruction_of_another_k_is_of_that_k_and_the_same_unit():
    """Of that k, the same formats, run by the GPU, and the same model in
    MMA-Sim's map; else a one-line reason (the ks the table has, or the
    model the other instruction computes)."""
    k16 = instruction_by_name(FP16_K16)
    got = instruction_for_k(k16, 8, "sm_80")
    assert not isinstance(got, str) and got.name == FP16_K8 and got.key() == k16.key() and got.k == 8
    assert instruction_for_k(k16, 16, "sm_80") is k16
    wide = instruction_by_name("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
    assert instruction_for_k(wide, 32, "sm_90") == (
        f"the table holds no instruction of k = 32 for {wide.name}'s formats on sm_90 (it has k = 4, 8, 16)")
    turing = instruction_for_k(instruction_by_name(FP16_K8), 4, "sm_75")
    assert isinstance(turing, str) and "turing-fp16-fp16-m8n8k4, not turing-fp16-fp16" in turing
    wgmma = instruction_by_name("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16")
    wg = instruction_for_k(wgmma, 8, "sm_90a")
    assert not isinstance(wg, str) and wg.name == "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32"
    cdna3 = instruction_for_k(instruction_by_name("v_mfma_f32_32x32x8f16"), 16, "gfx942")
    assert not isinstance(cdna3, str) and cdna3.name == "v_mfma_f32_16x16x16f16"
    cdna2 = instruction_for_k(instruction_by_name("v_mfma_f32_32x32x8bf16_1k"), 4, "gfx90a")
    assert isinstance(cdna2, str) and "cdna2-bf16-fp32, not cdna2-bf16-fp32-1k" in cdna2


@needs_nvcc
def test_rivals_at_the_second_k_are_decided_through_its_probe(tmp_path, capsys, monkeypatch):
    """Ampere's fp16 -> fp16 unit chained separately and the same with
    every zero d +0 agree on rows of 16 products and differ on a lone
    block of 8: confirmation runs rows of 8 through a probe of
    mma.sync m16n8k8 (built by nvcc, run in host mode) and the rival is
    ruled out. The observations file names both instructions; replayed
    offline (identify, check), the rows of 8 are judged at k = 8 and leave
    the unit alone, while the same file without them leaves both."""
    from tcsmt.identify.blind import Confirmation
    from tcsmt.identify.confirm import random_probe
    from tcsmt.identify.device import Seen
    from tcsmt.identify.explain import explaining
    from tcsmt.probes.device import ProbeDevice, parse_device_spec
    (tmp_path / "unit.toml").write_text(UNIT)
    unit = choose(str(tmp_path / "unit.toml"))
    rival = unit.replace(zero_sign="all_positive", name="rival")
    path = tmp_path / "obs.json"
    spec = parse_device_spec(f"cuda-host:{tmp_path / 'unit.toml'}")
    with ProbeDevice(spec, instruction_by_name(FP16_K16), path, other_k=instruction_for_k) as dev:
        seen = Seen(dev, 16)
        seen.run_rows(*random_probe(unit, 16, 3, 64), "at 16")
        assert explaining([unit, rival], seen) == [0, 1]
        seen.phase = 2
        conf = Confirmation(seen, [unit], [unit], unit)
        assert conf._other_k(unit, [rival]) is True
    assert seen.ks() == [16, 8] and explaining([unit, rival], seen) == [0]
    assert conf.events[-1]["k"] == 8 and conf.events[-1]["split"] == "rivals at k = 8"
    doc = json.loads(path.read_text())
    assert [(x["instruction"], x["k"]) for x in doc["launches"]] == [(FP16_K16, 16), (FP16_K8, 8)]
    assert doc["instruction"] == FP16_K16 and doc["k"] == 16
    first, end = doc["launches"][1]["rows"]
    assert all(r["k"] == 8 and len(r["a"]) == 8 for r in doc["observations"][first:end])
    assert all("k" not in r and len(r["a"]) == 16 for r in doc["observations"][:first])
    space = tmp_path / "space.toml"
    space.write_text(f'base = "{tmp_path / "unit.toml"}"\n[axes]\nzero_sign = ["positive", "all_positive"]\n')
    code, out, err = tcsmt(["identify", str(path), "--space", str(space), "--no-model-file", "--no-prove"],
                           capsys)
    assert code == 0, err
    assert f"{first} rows, k = 16; {end - first} rows at k = 8" in out and "zero_sign: positive" in out
    assert "consistent: 1 hypothesis" in out
    code, out, err = tcsmt(["check", str(path), "--arch", str(tmp_path / "unit.toml")], capsys)
    assert code == 0 and f"instruction {FP16_K8}" in out and f"{end - first}/{end - first} rows match" in out
    # a space of the rival alone: the rows of 16 leave it, the row of 8 it misses is named
    rival_space = tmp_path / "rival.toml"
    rival_space.write_text(f'base = "{tmp_path / "unit.toml"}"\n[axes]\nzero_sign = ["all_positive"]\n')
    code, out, err = tcsmt(["identify", str(path), "--space", str(rival_space), "--no-model-file"], capsys)
    missed = next(r for r in doc["observations"][first:end] if r["d"] == "0x8000")     # -0; the rival: +0
    assert code == 2 and f"no hypothesis in the space explains observation {missed['index']}" in out, out
    assert "up to 0 ulp and 1 bit off" in out
    # an older file: launches without instruction or k, and no row of another k
    old = dict(doc, observations=doc["observations"][:first],
               launches=[{key: v for key, v in x.items() if key not in ("instruction", "k")}
                         for x in doc["launches"][:1]])
    (tmp_path / "old.json").write_text(json.dumps(old))
    code, out, err = tcsmt(["identify", str(tmp_path / "old.json"), "--space", str(space),
                            "--no-model-file", "--no-prove"], capsys)
    assert code == 0, err
    assert "consistent: 2 hypotheses" in out and "zero_sign: positive, all_positive" in out


@needs_nvcc
def test_no_instruction_of_the_second_k_is_a_one_line_refusal(tmp_path):
    """Hopper's fp16 -> fp32 unit and a rival of blocks of 32 differ only
    at k = 32: no fp16 instruction sums 32 products, so no row is run and
    the rival stays undecided, the verdict saying why in one line (the ks
    the table has)."""
    from tcsmt.identify.blind import Confirmation
    from tcsmt.identify.device import Seen
    from tcsmt.identify.verdict import _event, _settled_lines
    from tcsmt.probes.device import ProbeDevice, parse_device_spec
    h = choose("hopper-fp16-fp32")
    rival = h.replace(block_size=32, name="rival")
    ins = instruction_by_name("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
    with ProbeDevice(parse_device_spec("cuda-host:hopper"), ins, tmp_path / "obs.json",
                     other_k=instruction_for_k) as dev:
        conf = Confirmation(Seen(dev, 16), [h], [h], h)
        assert conf._other_k(h, [rival]) is False and len(conf.seen) == 0
    undecided = list(conf.settled.values())
    assert [u["k"] for u in undecided] == [32] and undecided[0]["verdict"] == "unknown"
    text = _settled_lines({"same_behaviour": [], "undecided": undecided})
    assert len(text) == 1 and text[0].startswith("not ruled out at k = 32 (the table holds no instruction "
                                                 "of k = 32")
    assert "(it has k = 4, 8, 16)" in text[0] and "\n" not in text[0]
    assert "rivals differ only at k = 32" in _event(conf.events[0])
    assert not Path(tmp_path / "obs.json").exists()


@needs_nvcc
@pytest.mark.slow
def test_identify_on_cuda_probes_runs_the_second_k_through_its_instruction(tmp_path, capsys, monkeypatch):
    """tcsmt identify --device cuda-host:ampere --formats fp16:fp16 end to
    end: the rivals phase 2 leaves that differ only at k = 8 (a lone block
    of Ampere's 8) are split by a launch of mma.sync m16n8k8, built by nvcc
    beside the m16n8k16 probes, not refused; the unit ends identified, and
    the model file written reproduces every row at its own k, and the file
    replays through the plan to the same verdict. Slow: 25 to 51 s at a load
    of 4 to 6 (about 18 CPU-s: three nvcc builds, phase 2's search)."""
    monkeypatch.chdir(tmp_path)
    code, out, err = tcsmt(["identify", "--device", "cuda-host:ampere", "--formats", "fp16:fp16",
                            "--batch", "plan", "--no-prove", "--model-file", "found.toml",
                            "--observations", "obs.json", "-o", "report.json"], capsys)
    assert code == 0, err
    rec = json.loads(Path("report.json").read_text())
    assert rec["verdict"] == "identified" and rec["phase2"]["model"]["differs"] == {}
    at8 = [e for e in rec["phase2"]["events"] if e.get("k") == 8]
    assert at8 and at8[0]["split"] == "rivals at k = 8" and not any("refused" in e for e in at8)
    assert "at k = 8" in out and f"rows of k = 8 through {FP16_K8}" in out
    assert rec["instructions_at_other_k"] == [{"instruction": FP16_K8, "k": 8}]
    doc = json.loads(Path("obs.json").read_text())
    assert {(x["instruction"], x["k"]) for x in doc["launches"]} == {(FP16_K16, 16), (FP16_K8, 8)}
    assert any(r.get("k") == 8 for r in doc["observations"])
    code, out, err = tcsmt(["check", "obs.json", "--arch", "found.toml"], capsys)
    assert code == 0 and out.count("(every row matches)") == 2, out
    code, out, err = tcsmt(["identify", "obs.json", "--plan", rec["plan"], "--no-prove", "--no-model-file"],
                           capsys)
    assert code == 0 and "verdict: identified" in out and "rows at k = 8" in out, out


@needs_hipcc
def test_a_second_k_on_mfma_runs_another_mfma_shape(tmp_path):
    """CDNA3's fp16 unit (blocks of 8) run through v_mfma_f32_32x32x8f16
    (k = 8): a rival of blocks of 16 agrees on every row of 8 and is split
    by rows of 16 through v_mfma_f32_16x16x16f16 (built by hipcc, run in
    host mode), which MMA-Sim's map says computes the same model on gfx942."""
    from tcsmt.identify.blind import Confirmation
    from tcsmt.identify.confirm import random_probe
    from tcsmt.identify.device import Seen
    from tcsmt.identify.explain import explaining
    from tcsmt.probes.device import ProbeDevice, parse_device_spec
    unit = choose("cdna3-fp16-fp32")
    rival = unit.replace(block_size=16, name="rival")
    with ProbeDevice(parse_device_spec("hip-host:cdna3"), instruction_by_name("v_mfma_f32_32x32x8f16"),
                     tmp_path / "obs.json", other_k=instruction_for_k) as dev:
        seen = Seen(dev, 8)
        seen.run_rows(*random_probe(unit, 8, 3, 64), "at 8")
        assert explaining([unit, rival], seen) == [0, 1] and dev.arch == "gfx942"
        seen.phase = 2
        assert Confirmation(seen, [unit], [unit], unit)._other_k(unit, [rival]) is True
    assert seen.ks() == [8, 16] and explaining([unit, rival], seen) == [0]
    doc = json.loads((tmp_path / "obs.json").read_text())
    assert [(x["instruction"], x["k"]) for x in doc["launches"]] == [
        ("v_mfma_f32_32x32x8f16", 8), ("v_mfma_f32_16x16x16f16", 16)]


def test_one_reading_of_an_nvidia_architecture():
    from tcsmt.instructions.nvidia import compute_capability
    assert [compute_capability(a) for a in ("sm_80", "sm_90a", "SM_100f", " sm_120a ")] == [80, 90, 100, 120]
    assert [compute_capability(a) for a in ("gfx90a", "80", "sm_", "sm_9x")] == [None] * 4
