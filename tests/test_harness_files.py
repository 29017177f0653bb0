"""tcsmt harness on every file tcsmt writes that holds vectors, shipped plans
by name, and --expect: the probe carries each model's outputs and prints
PASS or FAIL per vector and in total (run here on the host with a runtime
that returns a table, and compiled by nvcc for sm_80, sm_89 and sm_90a
where nvcc is installed)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_run import run
from test_probe_programs import _host_run

from tcsmt.errors import UserError
from tcsmt.instructions.table import instruction_by_name
from tcsmt.model.formats import get_format
from tcsmt.observed.vectors import read_vectors
from tcsmt.probes.calibration import calibration_vectors
from tcsmt.probes.harness import add_model_hypothesis
from tcsmt.sim.dot import dot_bits, model

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"
MMA_F16 = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"


@pytest.mark.parametrize("path,vectors,hypotheses", [
    ("ampere/rounding.json", 2, ["truncate", "rz", "rne", "ru", "rd"]),     # find
    ("ampere/carry-bits-proof.json", 1, None),                               # prove
    ("ampere/monotonicity.json", 2, ["model"]),
    ("hardware/H100/mma-bf16-f32.json", 2000, ["observed"]),                 # observations
    ("plans/tf32-fp32.json", None, []),                                      # plan
])
def test_every_kind_of_file_is_read(path, vectors, hypotheses):
    data = json.loads((RESULTS / path).read_text())
    vs = read_vectors(RESULTS / path)
    want = vectors or len(data["vectors"])
    assert len(vs.vectors) == want and len(vs.expected) == want
    if hypotheses is not None:
        assert [h for h, _ in vs.hypotheses] == hypotheses
    if path.startswith("hardware"):                 # the device's d is the expectation
        assert vs.expected[5]["observed"] == int(data["observations"][5]["d"], 16)


def test_result_outputs_come_along_as_hypotheses():
    vs = read_vectors(RESULTS / "ampere" / "rounding.json")
    data = json.loads((RESULTS / "ampere" / "rounding.json").read_text())
    for v, e in zip(data["vectors"], vs.expected):
        assert {h: f"0x{x:08x}" for h, x in e.items()} == {h: o["hex"] for h, o in v["outputs"].items()}


def test_shipped_plans_by_name_and_coverage_by_formats():
    assert len(read_vectors("fp16-fp32").vectors) == len(read_vectors("fp16:fp32").vectors) > 100
    with pytest.raises(UserError, match="several formats.*--formats"):
        read_vectors(RESULTS / "coverage" / "fasi-a100.json")
    vs = read_vectors(RESULTS / "coverage" / "fasi-a100.json", "bf16:fp32")
    assert vs.fin.name == "bfloat16" and vs.vectors
    with pytest.raises(UserError, match="no shipped plan of that name"):
        read_vectors("fp17-fp32")


def test_expect_embeds_each_models_outputs():
    vs = read_vectors(RESULTS / "ampere" / "rounding.json")
    ins = instruction_by_name(MMA_F16)
    add_model_hypothesis(vs, ins, "hopper")                 # an architecture
    add_model_hypothesis(vs, ins, "volta-fp16-fp32")        # a model name
    p = model("hopper-fp16-fp32")
    for (a, b, c), e in zip(vs.padded(ins.k), vs.expected):
        assert e["hopper-fp16-fp32"] == dot_bits(p, a, b, c)
    with pytest.raises(UserError, match="given twice"):
        add_model_hypothesis(vs, ins, "hopper-fp16-fp32")


def test_probe_prints_pass_and_fail_per_vector_and_in_total(tmp_path):
    """The host side with a 'device' that computes ampere's outputs: ampere
    PASSes every vector, volta FAILs where it differs."""
    vs = read_vectors("fp16-fp32")
    vs.vectors, vs.expected = vs.vectors[:12], vs.expected[:12]
    ins = instruction_by_name(MMA_F16)
    for m in ("ampere", "volta"):
        add_model_hypothesis(vs, ins, m)
    device = [e["ampere-fp16-fp32"] for e in vs.expected]
    fout = get_format(ins.out_format)
    r = _host_run(tmp_path, vs, ins, device + [fout.to_storage(x.d) for x in calibration_vectors(ins)])
    assert r.returncode == 0, r.stderr
    per_vector = [ln for ln in r.stderr.splitlines() if ln.startswith("probe: vector ")]
    assert len(per_vector) == 12 and all("PASS ampere-fp16-fp32" in ln for ln in per_vector)
    volta_fails = sum(e["volta-fp16-fp32"] != e["ampere-fp16-fp32"] for e in vs.expected)
    assert sum("FAIL volta-fp16-fp32" in ln for ln in per_vector) == volta_fails > 0
    assert "probe: PASS ampere-fp16-fp32 (ampere-fp16-fp32): the device gave its d on 12 of 12" \
        in r.stderr
    assert f"probe: FAIL volta-fp16-fp32 (volta-fp16-fp32): the device gave its d on " \
           f"{12 - volta_fails} of 12" in r.stderr
    # a device that follows neither: exit status 4, after the JSON
    r = _host_run(tmp_path, vs, ins, [0] * 12 + [fout.to_storage(x.d) for x in calibration_vectors(ins)])
    assert r.returncode == 4 and json.loads(r.stdout)["observations"]


def _nvcc():
    return shutil.which("nvcc") or ("/usr/local/bin/nvcc" if Path("/usr/local/bin/nvcc").exists() else None)


@pytest.mark.parametrize("source,extra,arch", [
    ("fp16-fp32", ["--expect", "hopper", "--expect", "ampere"], "80"),
    (str(RESULTS / "ada" / "rounding.json"), ["--expect", "ada"], "89"),
    (str(RESULTS / "hopper" / "final-rounding.json"), ["--instruction", "wgmma", "--expect", "hopper"],
     "90a"),
])
def test_probes_with_expectations_compile_with_nvcc(tmp_path, source, extra, arch):
    src = tmp_path / "probe.cu"
    r = run(["harness", source, "-o", src, *extra])
    assert r.exit_code == 0, r.output
    text = src.read_text()
    assert "PASS" in text and "#define NHYP 0" not in text
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found: the probe is not compiled here")
    out = subprocess.run([nvcc, "-O2", "-gencode", f"arch=compute_{arch},code=sm_{arch}", "-c",
                          str(src), "-o", str(tmp_path / "probe.o")],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr


def test_harness_one_line_errors(tmp_path):
    r = run(["harness", RESULTS / "compare-algorithms" / "ampere-k4.json", "-o", tmp_path / "x.cu"])
    assert r.exit_code == 2 and "not operands of one matrix instruction" in r.output
    r = run(["harness", "fp16-fp32", "-o", tmp_path / "x.cu", "--expect", "hopper-e4m3-fp32"])
    assert r.exit_code == 2 and "is for float8_e4m3fn" in r.output
    assert not (tmp_path / "x.cu").exists()


@pytest.mark.slow
def test_shipped_plan_is_found_after_a_plain_install(tmp_path):
    """pip install . (not editable) into a folder, then from outside the
    checkout: the plan's name is enough."""
    import sys
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--no-build-isolation", "--target", str(target), str(ROOT)],
                   check=True, capture_output=True, timeout=900)
    code = ("from tcsmt.observed.vectors import read_vectors; import tcsmt; "
            "print(len(read_vectors('fp16-fp32').vectors), tcsmt.__file__)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"}, timeout=300)
    assert out.returncode == 0, out.stderr
    count, where = out.stdout.split()
    assert int(count) > 100 and where.startswith(str(target))
