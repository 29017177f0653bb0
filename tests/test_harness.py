"""Hardware probes: vectors files, choosing instructions, the observation schema.

The layouts are tested in test_probe_layouts.py and the programs (generated,
compiled, their host side run) in test_probe_programs.py. Running a probe
needs a GPU, which CI does not have; its output shape is checked through
``simulated_observations``, which writes the same JSON from a model.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from checkout import hwdata_dir

from tcsmt.errors import UserError
from tcsmt.instructions.instruction import Instruction
from tcsmt.instructions.nvidia import DEFAULTS
from tcsmt.instructions.table import choose_instruction, instruction_by_name
from tcsmt.model.formats import get_format
from tcsmt.observed.observations import compare, parse_observations, read_observations
from tcsmt.probes.harness import (
    observations_from_hwdata,
    parse_vectors,
    random_vectors,
    read_vectors,
    simulated_observations,
    write_probe,
)
from tcsmt.probes.program import MAIN
from tcsmt.sim.dot import dot_bits, model

ROOT = Path(__file__).resolve().parent.parent


def vectors_file(tmp_path, ins: Instruction, n=6, seed=3, short=False) -> Path:
    data = random_vectors(ins.formats(), ins.k // 2 if short else ins.k, n, seed)
    data["instruction"] = ins.name
    path = tmp_path / "vectors.json"
    path.write_text(json.dumps(data))
    return path


# ---------------------------------------------------------------------------
# Choosing instructions
# ---------------------------------------------------------------------------

def test_defaults_and_aliases():
    f16, f32 = "float16", "float32"
    e4m3, e5m2 = "float8_e4m3fn", "float8_e5m2"
    assert choose_instruction(f16, f32, f32).name == DEFAULTS[(f16, f16, f32, f32, "", 0, "")]
    assert choose_instruction("int8", "int32", "int32", fb="uint8").name == \
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32"          # the wrapping form
    assert choose_instruction("int8", "int32", "int32", "mma.sync.aligned.m16n8k32.row.col.satfinite"
                              ".s32.s8.s8.s32").satfinite
    assert choose_instruction(f16, f32, f32, sparsity="2:4").name.startswith("mma.sp::ordered_metadata")
    assert choose_instruction(f16, f32, f32, "wmma").name == "wmma.m16n16k16.row.col.f32.f16.f16.f32"
    assert choose_instruction(f16, f32, f32, "m16n8k8").k == 8
    assert choose_instruction(f16, f32, f32, "mma.sync.m8n8k4").k == 4
    assert choose_instruction("tf32", f32, f32, "wmma.m16n16k8").api == "wmma"
    assert choose_instruction(e4m3, f32, f32, "wgmma").name == \
        "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3"
    assert choose_instruction(e4m3, f16, f16, "sm_90a", fb=e5m2).name == \
        "wgmma.mma_async.sync.aligned.m64n8k32.f16.e4m3.e5m2"
    assert choose_instruction(e4m3, f32, f32, "sm_120a").name == \
        "mma.sync.aligned.kind::f8f6f4.m16n8k32.row.col.f32.e4m3.e4m3.f32"
    assert choose_instruction(e4m3, f32, f32, "tcgen05").name == \
        "tcgen05.mma.cta_group::1.kind::f8f6f4.f32.e4m3.e4m3"
    assert choose_instruction(f16, f32, f32, target="hip").name == "v_mfma_f32_32x32x8f16"
    assert choose_instruction(f16, f32, f32, "gfx90a", target="hip").archs[0] == "gfx908"
    for (fa, fb, fc, fout, scale, block, sparsity), name in DEFAULTS.items():
        assert instruction_by_name(name).key() == (fa, fb, fc, fout, scale, block, sparsity)


@pytest.mark.parametrize("args,match", [
    (("float16", "float32", "float16", None), "no supported instruction"),
    (("float16", "float32", "float32", "m16n8k32"), "unknown instruction"),
    (("float16", "float32", "float32", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
     "computes"),
    (("float64", "float64", "float64", "gfx908"), "unknown instruction"),
])
def test_choose_instruction_errors(args, match):
    with pytest.raises(UserError, match=match) as e:
        choose_instruction(*args)
    assert "\n" not in str(e.value)


# ---------------------------------------------------------------------------
# The observation keys
# ---------------------------------------------------------------------------

def test_program_shape_matches_simulated_output(tmp_path):
    """Every key the probe's main prints is in what simulated_observations writes."""
    printed = set(re.findall(r'\\"(\w+)\\": ', MAIN.template))
    ins = instruction_by_name(DEFAULTS[("float16", "float16", "float32", "float32", "", 0, "")])
    sim = simulated_observations(vectors_file(tmp_path, ins), "hopper-fp16-fp32")
    row_keys = {"index", "a", "b", "c", "d"}
    optional = {"scale_a", "scale_b", "mask", "matches", "hypotheses", "id", "label", "matched",
                "host_d"}               # the probe's host mode: where it read d
    assert printed >= {"schema", "device", "instruction", "formats", "k", "observations"}
    assert printed - row_keys - optional <= set(sim)
    assert set(sim["observations"][0]) == row_keys


# ---------------------------------------------------------------------------
# Vectors files: one-line errors
# ---------------------------------------------------------------------------

GOOD = {"formats": {"in": "fp16", "c": "fp32", "out": "fp32"},
        "vectors": [{"a": ["0x3c00"], "b": ["0x3c00"], "c": "0x3f800000"}]}


def _bad(**change):
    data = json.loads(json.dumps(GOOD))
    for key, value in change.items():
        if key == "vec":
            data["vectors"][0].update(value)
        else:
            data[key] = value
    return data


@pytest.mark.parametrize("data,match", [
    (_bad(vec={"a": ["3c00"]}), r"vectors\[0\]\.a\[0\]: .*not a hex bit pattern"),
    (_bad(vec={"a": ["0x3c0g"]}), r"not a hex bit pattern"),
    (_bad(vec={"b": ["0x3f800000"]}), r"vectors\[0\]\.b\[0\]: .*more than 16 bits"),
    (_bad(vec={"c": "0x3c00000000"}), r"vectors\[0\]\.c: .*more than 32 bits"),
    (_bad(vec={"a": ["0x3c00", "0x3c00"]}), r"a has 2 terms and b has 1"),
    (_bad(vec={"a": []}), r"non-empty list"),
    (_bad(formats={"in": "fp16", "c": "fp32"}), r"formats"),
    (_bad(formats={"in": "fp17", "c": "fp32", "out": "fp32"}), r"unknown format"),
    (_bad(vectors=[]), r"non-empty list"),
    ([1, 2], r"expected a JSON object"),
])
def test_vector_errors(data, match):
    with pytest.raises(UserError, match=match) as e:
        parse_vectors(data, "v.json")
    assert "\n" not in str(e.value)


def test_tf32_low_bits_and_too_many_terms(tmp_path):
    data = _bad(formats={"in": "tf32", "c": "fp32", "out": "fp32"},
                vec={"a": ["0x3f801000"], "b": ["0x3f800000"]})
    with pytest.raises(UserError, match="low 13 bits must be zero"):
        parse_vectors(data, "v.json")
    data = _bad(vec={"a": ["0x3c00"] * 17, "b": ["0x3c00"] * 17})
    path = tmp_path / "v.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UserError, match="17 terms; the instruction takes at most k = 16"):
        write_probe(path, tmp_path / "p.cu")
    data = _bad(formats={"in": "fp16", "c": "fp32", "out": "fp16"})
    path.write_text(json.dumps(data))
    with pytest.raises(UserError, match="no supported instruction"):
        write_probe(path, tmp_path / "p.cu")
    with pytest.raises(UserError, match="unknown target"):
        write_probe(path, tmp_path / "p.cu", target="metal")
    assert not (tmp_path / "p.cu").exists()


def test_file_instruction_and_option_must_agree(tmp_path):
    data = dict(GOOD, instruction="wmma")
    path = tmp_path / "v.json"
    path.write_text(json.dumps(data))
    ins, _ = write_probe(path, tmp_path / "p.cu")
    assert ins.api == "wmma"
    with pytest.raises(UserError, match="differs from the file's instruction"):
        write_probe(path, tmp_path / "p.cu", instruction="m16n8k16")


def test_cli_writes_the_program(tmp_path, capsys):
    from tcsmt.cli.main import main
    path = tmp_path / "v.json"
    path.write_text(json.dumps(GOOD))
    out = tmp_path / "probe.cu"
    main(["harness", str(path), "--target", "cuda", "-o", str(out), "--instruction", "m16n8k8"])
    assert "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32" in out.read_text()
    err = capsys.readouterr().err
    assert "build: nvcc -O2 -arch=sm_75" in err and ": 1 vector, mma.sync" in err
    with pytest.raises(SystemExit) as e:
        main(["harness", str(path), "-o", str(out), "--instruction", "m16n8k32"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown instruction") and err.count("\n") == 1


# ---------------------------------------------------------------------------
# Observations: simulated runs round-trip; validation
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name,model_name", [
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "hopper-fp16-fp32"),
    ("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", "hopper-fp16-fp16"),
    ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "hopper-tf32-fp32"),
    ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", "hopper-e4m3-fp32"),
])
def test_simulated_observations_round_trip(tmp_path, name, model_name):
    ins = instruction_by_name(name)
    vpath = vectors_file(tmp_path, ins, n=8, short=True)
    sim = simulated_observations(vpath, model_name)
    opath = tmp_path / "obs.json"
    opath.write_text(json.dumps(sim, indent=2))
    obs = read_observations(opath)
    assert obs.instruction == ins.name and obs.k == ins.k and len(obs.rows) == 8
    assert obs.formats() == ins.formats()
    p = model(model_name)
    for row, (a, b, c) in zip(obs.rows, read_vectors(vpath).padded(ins.k)):
        assert list(row.a) == a and list(row.b) == b and row.c == c
        assert row.d == dot_bits(p, a, b, c)
    assert compare(obs, model_name).matched == 8


def test_compare_finds_a_different_model(tmp_path):
    ins = instruction_by_name("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
    data = random_vectors(ins.formats(), 16, 40, 11, exp_range=(-12, 3))
    path = tmp_path / "v.json"
    path.write_text(json.dumps(data))
    obs = parse_observations(simulated_observations(path, "hopper-fp16-fp32"))
    assert compare(obs, "hopper-fp16-fp32").matched == 40
    assert compare(obs, "ampere-fp16-fp32").matched < 40
    with pytest.raises(UserError, match="computes"):
        compare(obs, "hopper-bf16-fp32")


def _obs_data():
    return {"schema": "tcsmt-observations/1", "device": "X", "compute_capability": "9.0",
            "instruction": "mma", "formats": {"in": "fp16", "c": "fp32", "out": "fp32"}, "k": 2,
            "observations": [{"index": 0, "a": ["0x3c00", "0x0000"], "b": ["0x3c00", "0x0000"],
                              "c": "0x00000000", "d": "0x3f800000"}]}


@pytest.mark.parametrize("change,match", [
    ({"schema": "other/1"}, "schema"),
    ({"device": ""}, "device"),
    ({"k": 0}, "positive integer"),
    ({"layout_check": "failed: 3 other elements"}, "layout check failed"),
    ({"observations": []}, "non-empty"),
    ({"formats": {"in": "fp16", "c": "fp32"}}, "formats"),
    ({"row": {"a": ["0x3c00"]}}, r"observations\[0\]\.a: expected a list of k = 2"),
    ({"row": {"d": "0x3c00000000"}}, r"observations\[0\]\.d: .*more than 32 bits"),
    ({"row": {"c": 0}}, r"observations\[0\]\.c: expected a hex string"),
])
def test_observation_errors(tmp_path, change, match):
    data = _obs_data()
    for key, value in change.items():
        if key == "row":
            data["observations"][0].update(value)
        else:
            data[key] = value
    path = tmp_path / "o.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UserError, match=match) as e:
        read_observations(path)
    assert "\n" not in str(e.value) and str(path) in str(e.value)


def test_observation_file_errors(tmp_path):
    with pytest.raises(UserError, match="cannot read"):
        read_observations(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(UserError, match="not JSON"):
        read_observations(bad)


# ---------------------------------------------------------------------------
# Recorded data as observations
# ---------------------------------------------------------------------------

HW = ROOT / "data" / "hwdata" / "H100"


def test_hwdata_hopper_fp8_reads_c_as_zero():
    hwdata_dir()
    data = observations_from_hwdata(HW / "E4M3", "fp32", limit=60)
    assert [kp["rule"] for kp in data["known_problems"]] == ["c_zero"]
    obs = parse_observations(data)
    assert obs.k == 32 and len(obs.rows) == 60 and all(r.c == 0 for r in obs.rows)
    assert compare(obs, "hopper-e4m3-fp32").matched == 60


def test_hwdata_fp16_output_rounds_c_to_fp16():
    hwdata_dir()
    data = observations_from_hwdata(HW / "fp16", "fp16", limit=40)
    obs = parse_observations(data)
    assert obs.formats() == {"in": "float16", "c": "float16", "out": "float16"}
    assert data["known_problems"] == []
    assert compare(obs, "hopper-fp16-fp16").matched == 40
    with pytest.raises(UserError, match="fp32 or fp16"):
        observations_from_hwdata(HW / "fp16", "bf16")


# ---------------------------------------------------------------------------
# The committed H100 observations agree with the shipped Hopper models
# ---------------------------------------------------------------------------

H100_RUNS = ROOT / "results" / "hardware" / "H100"
AGREE = [("mma-f16-f32.json", "hopper-fp16-fp32", None),
         ("mma-f16-f16.json", "hopper-fp16-fp16", None),
         ("mma-bf16-f32.json", "hopper-bf16-fp32", None),
         ("mma-tf32-f32.json", "hopper-tf32-fp32", None),
         ("wmma-tf32-f32.json", "hopper-tf32-fp32", ["block_size=4"])]


@pytest.mark.parametrize("name,model_name,sets", AGREE)
def test_h100_observations_match_models(name, model_name, sets):
    path = H100_RUNS / name
    if not path.exists():
        pytest.skip(f"{path} is not in this checkout")
    obs = read_observations(path)
    assert obs.device.startswith("NVIDIA H100") and obs.compute_capability == "9.0"
    obs.rows = obs.rows[:150]
    assert compare(obs, model(model_name, overrides=sets)).matched == 150


def test_h100_mma_fp8_is_two_fp16_blocks_then_c_rne():
    """The reading of results/hardware/H100/README.md: two blocks of 16 with
    the Hopper fp16 datapath over k mod 4 in {0, 1}, then {2, 3}, from zero;
    c added last with one binary32 round to nearest even."""
    f32 = get_format("float32")
    for fmt in ("e4m3", "e5m2"):
        path = H100_RUNS / f"mma-{fmt}-f32.json"
        if not path.exists():
            pytest.skip(f"{path} is not in this checkout")
        obs = read_observations(path)
        obs.rows = obs.rows[:120]
        p = model(f"hopper-{fmt}-fp32", overrides=["block_size=16", "acc_format=float32",
                                                   "align_bits=2", "final_frac_bits=none"])
        first = [k for k in range(32) if k % 4 < 2]
        second = [k for k in range(32) if k % 4 >= 2]
        for row in obs.rows:
            s = dot_bits(p, [row.a[k] for k in first], [row.b[k] for k in first], 0)
            s = dot_bits(p, [row.a[k] for k in second], [row.b[k] for k in second], s)
            assert f32.round_value(f32.value(row.c) + f32.value(s), "rne") == row.d, row.index
        assert compare(obs, f"hopper-{fmt}-fp32").matched < 20   # not the wgmma model


def test_mixed_formats_round_trip(tmp_path):
    """e4m3 x e5m2 through wgmma: vectors, simulated observations and the
    comparison all carry A's and B's formats."""
    ins = instruction_by_name("wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e5m2")
    assert ins.formats() == {"a": "float8_e4m3fn", "b": "float8_e5m2", "c": "float32",
                             "out": "float32"}
    path = vectors_file(tmp_path, ins, n=12, short=True)
    p = model("hopper-e4m3-fp32", overrides=["b_format=float8_e5m2"])
    sim = simulated_observations(path, p)
    assert sim["formats"] == ins.formats() and sim["instruction"] == ins.name
    obs = parse_observations(sim)
    assert obs.fb.name == "float8_e5m2" and obs.formats() == ins.formats()
    e5m2 = get_format("float8_e5m2")
    for row, (a, b, c) in zip(obs.rows, read_vectors(path).padded(32)):
        assert list(row.b) == b and row.d == dot_bits(p, a, b, c)
        assert all(e5m2.hex(x) == h for x, h in zip(b, sim["observations"][row.index]["b"]))
    assert compare(obs, p).matched == 12
    with pytest.raises(UserError, match="float8_e4m3fn x float8_e5m2"):
        compare(obs, "hopper-e4m3-fp32")
    with pytest.raises(UserError, match="the vectors are"):
        simulated_observations(path, "hopper-e4m3-fp32")


def test_scaled_observations_parse_and_refuse_unscaled_models():
    data = {"schema": "tcsmt-observations/1", "device": "X", "compute_capability": "10.0",
            "instruction": "tcgen05", "formats": {"in": "e2m1", "c": "fp32", "out": "fp32",
                                                  "scale": "ue8m0"},
            "scale_block": 2, "k": 4,
            "observations": [{"a": ["0x2", "0x2", "0x0", "0x0"], "b": ["0x2", "0x2", "0x0", "0x0"],
                              "c": "0x00000000", "scale_a": ["0x7f", "0x80"],
                              "scale_b": ["0x7f", "0x7f"], "d": "0x40000000"}]}
    obs = parse_observations(data)
    assert obs.rows[0].scale_a == (0x7F, 0x80) and obs.scale_block == 2
    assert obs.formats()["scale"] == "float8_e8m0fnu"
    bad = json.loads(json.dumps(data))
    bad["observations"][0]["scale_b"] = ["0x7f"]
    with pytest.raises(UserError, match=r"scale_b: expected a list of 2 hex patterns"):
        parse_observations(bad)
    bad["scale_block"] = 3
    with pytest.raises(UserError, match="scale_block"):
        parse_observations(bad)
    del data["formats"]["scale"]
    with pytest.raises(UserError, match="without a scale format"):
        parse_observations(data)


def test_scaled_vectors_round_trip(tmp_path):
    """NVFP4 (e2m1 with ue4m3 scales per 16 terms) through tcgen05: the
    vectors, simulated observations and the comparison carry the scales."""
    ins = instruction_by_name(
        "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.ue4m3")
    data = random_vectors(ins.formats(), 48, 10, 4, exp_range=(-1, 2), scale_block=16)
    path = tmp_path / "v.json"
    path.write_text(json.dumps(data))
    p = model("blackwell-e4m3-fp32", overrides=["in_format=float4_e2m1fn", "scale_format=ue4m3",
                                                "scale_block=16"])
    sim = simulated_observations(path, p)
    assert sim["scale_block"] == 16 and sim["formats"]["scale"] == "ue4m3"
    obs = parse_observations(sim)
    vs = read_vectors(path)
    for row, (a, b, c), (sa, sb) in zip(obs.rows, vs.padded(64), vs.padded_scales(64)):
        assert list(row.scale_a) == sa and list(row.scale_b) == sb and len(sa) == 4
        assert sa[3] == 0x38 and row.d == dot_bits(p, a, b, c, sa, sb)   # padded with 1
    assert compare(obs, p).matched == 10
    with pytest.raises(UserError, match="has no scale factors; the observations have ue4m3 per 16"):
        compare(obs, model("blackwell-e4m3-fp32", overrides=["in_format=float4_e2m1fn"]))
    other = model("blackwell-e4m3-fp32", overrides=["in_format=float4_e2m1fn", "scale_format=ue8m0",
                                                    "scale_block=16"])
    with pytest.raises(UserError, match="float8_e8m0fnu per 16 terms; the vectors have ue4m3"):
        simulated_observations(path, other)


def test_a_result_file_gives_the_probe_its_hypotheses(tmp_path):
    """A committed result file runs as it is: the probe embeds every
    hypothesis's expected d, and the observations of a device that computes
    one of them say so vector by vector."""
    path = ROOT / "results" / "hopper" / "align-bits.json"
    vs = read_vectors(path)
    doc = json.loads(path.read_text())
    assert [h for h, _ in vs.hypotheses] == [h["id"] for h in doc["hypotheses"]]
    assert vs.formats() == {"in": "float16", "c": "float32", "out": "float32"}
    for v, want in zip(doc["vectors"], vs.expected):
        assert {i: get_format("float32").hex(d) for i, d in want.items()} == \
            {i: o["hex"] for i, o in v["outputs"].items()}
    out = tmp_path / "probe.cu"
    ins, count = write_probe(path, out)
    src = out.read_text()
    assert count == len(doc["vectors"]) and f"#define NHYP {len(vs.hypotheses)}" in src
    assert all(f'"{label}"' in src for _, label in vs.hypotheses)
    bad = dict(doc, hypotheses=doc["hypotheses"][:1] + [dict(doc["hypotheses"][1], parameters=dict(
        doc["hypotheses"][1]["parameters"], out_format="float16"))])
    with pytest.raises(UserError, match="share one out format"):
        parse_vectors(bad, "r.json")
