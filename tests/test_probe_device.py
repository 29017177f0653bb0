"""Real devices through compiled probes: identify --device cuda|hip and
check --device (tcsmt.probes.device, tcsmt.identify.ondevice).

No GPU is lent to this machine. The loop runs end to end anyway through
--device cuda-host:MODEL and hip-host:MODEL: every probe is written, built
by nvcc (hipcc) for its instruction's architecture, and run as a process in
its host mode (./probe --host-d FILE), which reads the d a model computed
instead of launching its kernel; its JSON is read back and checked, the
rows kept in the observations file, which is then replayed offline. Only
the kernel launch is missing. Without a GPU, --device cuda and hip end with
one line naming what is missing (here: the driver, the GPU).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_run import tcsmt

from tcsmt import schemas
from tcsmt.errors import DeviceMissing, OutputRefused, UserError
from tcsmt.identify.loop import ModelDevice, walk_plan
from tcsmt.identify.ondevice import device_instruction
from tcsmt.identify.plan import committed_plan, read_plan
from tcsmt.instructions.table import instruction_by_name
from tcsmt.model.choose import choose
from tcsmt.probes.device import DeviceSpec, ProbeDevice, parse_device_spec
from tcsmt.probes.toolchain import Toolchain, arch_flags, device_info

ROOT = Path(__file__).resolve().parent.parent
NVCC = shutil.which("nvcc")
HIPCC = shutil.which("hipcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
needs_hipcc = pytest.mark.skipif(HIPCC is None, reason="hipcc could not be installed (.ci/run tries)")


def run_cli(capsys, *args) -> tuple[int, str, str]:
    return tcsmt(args, capsys)


@pytest.fixture(scope="module")
def fp16_plan():
    return read_plan(committed_plan("fp16:fp32"))


# ---------------------------------------------------------------------------
# What a device is, and what is missing
# ---------------------------------------------------------------------------

def test_device_specs():
    assert parse_device_spec("cuda") == DeviceSpec("cuda", 0)
    assert parse_device_spec("hip:3") == DeviceSpec("hip", 3)
    assert parse_device_spec("cuda-host:hopper") == DeviceSpec("cuda", None, "hopper")
    assert parse_device_spec("hip-host:cdna3").text == "hip-host:cdna3"
    for bad in ("cuda:x", "gpu", "cuda-host:", "hip:-1"):
        with pytest.raises(UserError, match="expected cuda"):
            parse_device_spec(bad)


def test_no_compiler_is_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    for device, name in (("cuda", "nvcc"), ("hip:1", "hipcc"), ("cuda-host:hopper", "nvcc")):
        code, out, err = run_cli(capsys, "identify", "--device", device, "--formats", "fp16:fp32")
        assert code == 2 and out == ""
        assert err.startswith(f"error: no {device[:4].rstrip(':-').upper()} compiler: {name} is not on PATH")
        assert err.count("\n") == 1


@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_the_device_says_what_it_is_or_what_is_missing(tmp_path, target):
    """The runtime's own answer: a GPU's name and architecture, or one line
    naming the missing driver or GPU (as on this machine)."""
    if shutil.which({"cuda": "nvcc", "hip": "hipcc"}[target]) is None:
        pytest.skip(f"no {target} compiler installed")
    try:
        tc = device_info(target, 0, tmp_path)
    except DeviceMissing as e:
        text = str(e)
        assert "\n" not in text and text.startswith("no ")
        assert ("driver" in text or "GPU" in text or "device" in text), text
        return
    assert tc.device and tc.arch and tc.runtime and tc.compiler_version.startswith(("nvcc", "hipcc"))


def _gpu(target: str, arch: str) -> Toolchain:
    return Toolchain(target, f"/usr/bin/{'nvcc' if target == 'cuda' else 'hipcc'}", "x", 0, "GPU", arch)


def test_architecture_flags_follow_the_device():
    mma = instruction_by_name("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
    wgmma = instruction_by_name("wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3")
    assert arch_flags(_gpu("cuda", "9.0"), mma) == [["-gencode", "arch=compute_90,code=sm_90"]]
    assert arch_flags(_gpu("cuda", "9.0"), wgmma) == [["-gencode", "arch=compute_90a,code=sm_90a"]]
    with pytest.raises(DeviceMissing, match="needs exactly sm_90a"):
        arch_flags(_gpu("cuda", "10.0"), wgmma)
    with pytest.raises(DeviceMissing, match="needs sm_80 or newer"):
        arch_flags(_gpu("cuda", "7.5"), mma)
    mfma = instruction_by_name("v_mfma_f32_16x16x32_fp8_bf8")
    assert arch_flags(_gpu("hip", "gfx942:sramecc+:xnack-"), mfma) == [["--offload-arch=gfx942"]]
    with pytest.raises(DeviceMissing, match="cannot run v_mfma_f32_16x16x32_fp8_bf8"):
        arch_flags(_gpu("hip", "gfx90a"), mfma)


def test_the_instruction_follows_the_target(fp16_plan):
    assert device_instruction(fp16_plan, None, "cuda").name == fp16_plan.instruction
    hip = device_instruction(fp16_plan, None, "hip")
    assert hip.api == "mfma" and hip.k == fp16_plan.k == 16
    assert device_instruction(fp16_plan, "wmma", "cuda").k == 16
    with pytest.raises(UserError, match="takes k = 8"):
        device_instruction(fp16_plan, "m16n8k8", "cuda")


# ---------------------------------------------------------------------------
# The loop through compiled probes
# ---------------------------------------------------------------------------

@needs_nvcc
def test_identify_on_cuda_probes_end_to_end(capsys, monkeypatch, tmp_path, fp16_plan):
    """nvcc builds the probes, they run as processes, their JSON is read;
    the loop ends where the same model as a simulated device ends, the
    observations replay offline to the same class, and check accepts them."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, "identify", "--device", "cuda-host:hopper", "--formats", "fp16:fp32",
                             "--no-confirm", "-o", "report.json")
    assert code == 0, err
    rec = json.loads(Path("report.json").read_text())
    sim = walk_plan(fp16_plan, ModelDevice(choose("hopper"), "sim:hopper"), "one")
    assert [s["d"] for s in rec["steps"]] == [s["d"] for s in sim.steps]
    assert rec["cls"] == sim.node["class"] and rec["verdict"] == "identified"
    assert rec["runs"] == 5 and rec["launches"] == 2 and rec["vectors_run"] == rec["rows_observed"]
    assert "runs needed: 5 (on the plan's path; 2 launches ran" in out
    assert "launch 1 on cuda-host:hopper" in err and "built in" in err
    obs = json.loads(Path(rec["observations"]).read_text())
    assert obs["source"] == "host" and obs["host_model"] == "hopper-fp16-fp32"
    assert obs["toolchain"]["compiler"].startswith("nvcc: Cuda compilation tools")
    assert [x["build"].split()[:4] for x in obs["launches"]] == \
        [["nvcc", "-O2", "-gencode", "arch=compute_80,code=sm_80"]] * 2
    assert len(obs["observations"]) == rec["vectors_run"]
    assert Path(rec["model_file"]).is_file()
    # offline: the same class from the file alone, and the model checks every row
    code, out, err = run_cli(capsys, "identify", rec["observations"], "--no-model-file", "-o", "again.json")
    again = json.loads(Path("again.json").read_text())
    assert code == 0 and again["verdict"] == "identified"
    assert sorted(again["consistent"]["names"]) == sorted(rec["members"])
    code, out, err = run_cli(capsys, "check", rec["observations"])
    assert code == 0 and f"{len(obs['observations'])}/{len(obs['observations'])} rows match" in out


@needs_nvcc
def test_both_phases_on_cuda_probes_end_to_end(capsys, monkeypatch, tmp_path):
    """Phase 2 through the probes: the confirming vectors (property vectors,
    random rows, the rows that split the neighbours) are written into
    probes, built by nvcc, run in host mode and read back like the plan's;
    the verdict and the model file come from those rows alone, every row is
    in the observations file, and the model checks every one of them."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, "identify", "--device", "cuda-host:hopper", "--formats", "fp16:fp32",
                             "--batch", "plan", "--no-prove", "--model-file", "found.toml",
                             "-o", "report.json")
    assert code == 0, err
    rec = json.loads(Path("report.json").read_text())
    assert rec["schema"] == "tcsmt-identify-blind/1" and rec["verdict"] == "identified"
    assert rec["launches"]["phase1"] == 1 and rec["launches"]["phase2"] >= 1
    assert rec["phase2"]["events"] and "phase 2, confirmation" in out
    assert rec["rows_observed"] == rec["launches"]["vectors"] == len(rec["observations"])
    obs = json.loads(Path(rec["observations_file"]).read_text())
    assert len(obs["launches"]) == rec["launches"]["phase1"] + rec["launches"]["phase2"]
    assert all(x["build"].startswith("nvcc -O2") for x in obs["launches"])
    assert [r["d"] for r in obs["observations"]] == [r["d"] for r in rec["observations"]]
    assert rec["model_file"] == "found.toml" and "model file: found.toml" in out
    code, out, err = run_cli(capsys, "check", rec["observations_file"], "--arch", "found.toml")
    assert code == 0 and f"{len(obs['observations'])}/{len(obs['observations'])} rows match" in out, out


@needs_nvcc
def test_the_whole_plan_in_one_launch(fp16_plan, tmp_path):
    with ProbeDevice(parse_device_spec("cuda-host:ampere"), instruction_by_name(fp16_plan.instruction),
                     tmp_path / "obs.json") as dev:
        w = walk_plan(fp16_plan, dev, "plan")
    sim = walk_plan(fp16_plan, ModelDevice(choose("ampere"), "sim:ampere"), "one")
    assert w.steps == sim.steps and w.launches == 1 and w.vectors_run == len(fp16_plan.vectors)
    doc = json.loads((tmp_path / "obs.json").read_text())
    assert doc["launches"][0]["rows"] == [0, len(fp16_plan.vectors)]
    assert [r["index"] for r in doc["observations"]] == list(range(len(fp16_plan.vectors)))


@needs_hipcc
def test_identify_on_hip_probes_end_to_end(capsys, monkeypatch, tmp_path):
    """hipcc builds the MFMA probes (HIP_PLATFORM=amd), they run in host
    mode: CDNA3's fp8 x bf8 unit recovered from its plan."""
    monkeypatch.chdir(tmp_path)
    plan = ROOT / "results" / "plans" / "e4m3fnuz-e5m2fnuz-fp32.json"
    code, out, err = run_cli(capsys, "identify", "--device", "hip-host:cdna3", "--plan", str(plan),
                             "--batch", "plan", "--no-confirm", "-o", "report.json", "--no-model-file")
    assert code == 0, err
    rec = json.loads(Path("report.json").read_text())
    assert rec["verdict"] == "identified" and rec["launches"] == 1
    assert rec["instruction"] == "v_mfma_f32_16x16x32_fp8_bf8"
    obs = json.loads(Path(rec["observations"]).read_text())
    assert obs["launches"][0]["build"].startswith("hipcc -O2 --offload-arch=gfx94")
    sim = walk_plan(read_plan(plan), ModelDevice(choose("cdna3-e4m3fnuz-e5m2fnuz-fp32"), "sim"), "one")
    assert rec["cls"] == sim.node["class"]


@needs_hipcc
def test_a_cuda_plan_runs_on_mfma_with_its_k(fp16_plan, tmp_path):
    ins = device_instruction(fp16_plan, None, "hip")
    with ProbeDevice(parse_device_spec("hip-host:cdna3"), ins, tmp_path / "o.json") as dev:
        w = walk_plan(fp16_plan, dev, "plan")
    sim = walk_plan(fp16_plan, ModelDevice(choose("cdna3"), "sim:cdna3"), "one")
    assert w.steps == sim.steps and w.launches == 1


class _BadCalibration(ProbeDevice):
    """The d file with calibration vector 'term 3' zeroed: what a wrong
    operand layout gives."""

    def _host_file(self, vs, n, ins):
        path = super()._host_file(vs, n, ins)
        words = path.read_text().split("\n")
        words[len(vs.vectors) + 3] = "0x0"
        path.write_text("\n".join(words))
        return path


@needs_nvcc
def test_a_failed_layout_check_stops_the_run_and_keeps_the_probe_output(tmp_path, fp16_plan):
    dev = _BadCalibration(parse_device_spec("cuda-host:hopper"), instruction_by_name(fp16_plan.instruction),
                          tmp_path / "obs.json")
    with dev, pytest.raises(UserError, match="layout check failed.*the first \\(term 3\\) gave 0x0"):
        walk_plan(fp16_plan, dev, "one")
    kept = json.loads((tmp_path / "obs.layout-failed-1.json").read_text())
    assert kept["layout_check"].startswith("failed") and not (tmp_path / "obs.json").exists()


@needs_nvcc
def test_check_on_a_device_keeps_every_observation(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    vectors = str(ROOT / "results" / "ampere" / "rounding.json")
    for name in ("observed-host-rounding.json", "observed-host-rounding-2.json"):
        code, out, err = run_cli(capsys, "check", "--device", "cuda-host:ampere", vectors)
        assert code == 0, err
        assert f"wrote {name}: " in err and "ampere-fp16-fp32: 2/2 rows match" in out
    # the JSON document names the observations file and meets its schema
    code, out, err = run_cli(capsys, "check", "--device", "cuda-host:ampere", vectors, "--format", "json",
                             "--observations", "kept.json")
    doc = json.loads(out)
    assert code == 0 and doc["observations_file"] == "kept.json" and Path("kept.json").is_file()
    assert schemas.problem(doc, "check") is None
    code, out, err = run_cli(capsys, "check", "--device", "cuda-host:volta", vectors,
                             "--observations", "observed-host-rounding.json")
    assert code == 2 and err.startswith("error: observed-host-rounding.json exists")
    with pytest.raises(OutputRefused):
        ProbeDevice(parse_device_spec("cuda-host:volta"), instruction_by_name(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"), "observed-host-rounding.json")
    # the rows of a unit that is not the model asked for: a mismatch, exit 1
    code, out, err = run_cli(capsys, "check", "--device", "cuda-host:volta", vectors, "--arch", "ampere")
    assert code == 1 and "ampere-fp16-fp32 (for ampere): 1/2 rows match (MISMATCH)" in out


def test_host_mode_d_is_the_model_s(tmp_path):
    """The host mode's d (the batch simulator where it runs the model) bit
    for bit the scalar model's, scaled instructions included."""
    from tcsmt.observed.vectors import random_vectors, read_vectors
    from tcsmt.probes.harness import model_outputs
    from tcsmt.sim.dot import dot_bits
    for name, arch in (("wgmma.mma_async.sync.aligned.m64n8k32.f16.e5m2.e4m3", "hopper"),
                       ("tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.ue4m3",
                        "blackwell"), ("v_mfma_f32_16x16x32_fp8_bf8", "cdna3")):
        ins = instruction_by_name(name)
        path = tmp_path / "v.json"
        data = random_vectors(ins.formats(), ins.k, 200, 5, scale_block=ins.scale_block)
        path.write_text(json.dumps({**data, "instruction": ins.name}))
        vs = read_vectors(path)
        p, outs = model_outputs(vs, ins, arch)
        scales = vs.padded_scales(ins.k) if vs.scale_block else [(None, None)] * len(outs)
        assert outs == [dot_bits(p, a, b, c, *sc) for (a, b, c), sc in zip(vs.padded(ins.k), scales)]


def _campaign(*args, cwd=None):
    import subprocess
    import sys
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_campaign.py"), *args],
                          capture_output=True, text=True, timeout=900, cwd=cwd)


@needs_nvcc
def test_campaign_without_a_gpu_says_so(tmp_path):
    """Here: 'no GPU: <why>', exit 0. On a GPU machine, with a budget of one
    second, every step says it was skipped."""
    done = _campaign("--budget", "1", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    if done.stdout.startswith("no GPU: "):
        assert done.stdout.count("\n") == 1
    else:
        summary = json.loads((tmp_path / "campaign.json").read_text())
        assert summary["device"]["device"] and all(s["status"].startswith("skipped")
                                                   for s in summary["steps"])


@needs_nvcc
def test_campaign_steps_run_in_host_mode(tmp_path):
    """One identification step of the campaign, end to end in host mode, in
    both phases (the plan in one launch, then confirmation): its own
    process, its files, the summary."""
    done = _campaign("--device", "cuda-host:ampere", "--only", "identify-tf32", "--budget", "600",
                     "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "campaign.json").read_text())
    step, = summary["steps"]
    assert step["step"] == "identify-tf32" and step["status"] == "done", step
    assert step["verdict"] == "identified" and step["launches_phase1"] == 1 and step["launches_phase2"] >= 1
    assert step["vectors_run"] > 229 and len(step["compile_seconds"]) == 1 + step["launches_phase2"]
    assert (tmp_path / "observed-identify-tf32.json").is_file()
    assert (tmp_path / "identified-identify-tf32.toml").is_file()
    assert "identify-tf32: done" in done.stdout and done.stdout.rstrip().splitlines()[-1].startswith(
        "  identify-tf32")


SOURCE_RUN = """
import sys
sys.meta_path = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
sys.path.insert(0, ROOT)
import tcsmt
assert tcsmt.__file__.startswith(ROOT), tcsmt.__file__
from tcsmt.properties.registry import all_properties
print(len(all_properties()), sys.modules["tcsmt.queries"].__file__)
"""


def test_a_source_checkout_finds_its_queries():
    """The campaign runs from a checkout on PYTHONPATH, with no install (a
    lent GPU machine): the property queries are found in queries/ there (the
    confirmation phase failed on an H200 with "No module named
    'tcsmt.queries'"). An editable install's finder is taken away first, so
    nothing but the checkout can answer."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", f"ROOT = {str(ROOT)!r}\n" + SOURCE_RUN],
                          capture_output=True, text=True, timeout=120, cwd="/")
    assert done.returncode == 0, done.stderr[-2000:]
    count, where = done.stdout.split()
    assert int(count) >= 20 and where == str(ROOT / "queries" / "__init__.py")
