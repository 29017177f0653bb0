"""Hardware probes: instruction layouts, the CUDA program, the observation schema.

The CUDA programs are compiled (not run) where nvcc exists; running them
needs a GPU, which CI does not have. Their output shape is checked through
``simulated_observations``, which writes the same JSON from a model.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tcsmt.errors import UserError
from tcsmt.hardware.cuda import MAIN
from tcsmt.hardware.harness import (
    cuda_program,
    observations_from_hwdata,
    parse_vectors,
    random_vectors,
    read_vectors,
    simulated_observations,
    write_probe,
)
from tcsmt.hardware.instructions import (
    BY_NAME,
    DEFAULTS,
    INSTRUCTIONS,
    Instruction,
    check_layout,
    choose_instruction,
)
from tcsmt.hardware.observations import compare, parse_observations, read_observations
from tcsmt.model.formats import get_format
from tcsmt.sim.dot import dot_bits, model

ROOT = Path(__file__).resolve().parent.parent
MMA = [i for i in INSTRUCTIONS if i.api == "mma"]


def _ids(instrs):
    return [i.name for i in instrs]


def vectors_file(tmp_path, ins: Instruction, n=6, seed=3, short=False) -> Path:
    data = random_vectors(ins.formats(), ins.k // 2 if short else ins.k, n, seed)
    data["instruction"] = ins.name
    path = tmp_path / "vectors.json"
    path.write_text(json.dumps(data))
    return path


# ---------------------------------------------------------------------------
# Fragment layouts
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("ins", MMA, ids=_ids(MMA))
def test_layouts_cover_each_matrix_once(ins):
    sizes = ins.layout_sizes()
    check_layout(ins.a_layout, ins.a_elems, *sizes["a"])
    check_layout(ins.b_layout, ins.b_elems, *sizes["b"])
    check_layout(ins.c_layout, ins.c_elems, *sizes["c"])


def test_layout_check_refuses_a_wrong_layout():
    with pytest.raises(ValueError, match="both hold"):
        check_layout(lambda lane, i: (lane >> 2, 2 * (lane & 3)), 2, 8, 8)
    with pytest.raises(ValueError, match="outside"):
        check_layout(lambda lane, i: (lane, i), 1, 16, 1)


# Single entries typed from the PTX ISA tables (groupID = lane >> 2, t = lane % 4).
PTX_SPOT_CHECKS = [
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "a", 5, 6, (9, 10)),   # g=1 t=1 a6: g+8, 2t+8
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "b", 7, 3, (15, 1)),   # g=1 t=3 b3: 2t+1+8
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "c", 30, 3, (15, 5)),  # g=7 t=2 c3
    ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "a", 6, 1, (9, 2)),   # a1: g+8, t
    ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "a", 6, 2, (1, 6)),   # a2: g, t+4
    ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "b", 6, 1, (6, 1)),   # b1: t+4
    ("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", "b", 3, 1, (7, 0)),     # 2t+i
    ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", "a", 1, 13, (8, 21)),  # a13: g+8, 4t+1+16
    ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", "b", 2, 6, (26, 0)),   # b6: 4t+2+16
    ("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32", "a", 17, 2, (5, 2)),      # high group: +4
    ("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32", "c", 3, 6, (3, 6)),       # X=1+2, (4)+(2)+0
    ("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32", "c", 4, 0, (8, 0)),       # quad pair 1
]


@pytest.mark.parametrize("name,which,lane,i,want", PTX_SPOT_CHECKS)
def test_layouts_match_ptx_entries(name, which, lane, i, want):
    ins = BY_NAME[name]
    assert getattr(ins, f"{which}_layout")(lane, i) == want


@pytest.mark.parametrize("ins", MMA, ids=_ids(MMA))
def test_d00_is_lane_0_element_0(ins):
    holders = [(lane, i) for lane in range(32) for i in range(ins.c_elems)
               if ins.c_layout(lane, i) == (0, 0)]
    assert holders == [(0, 0)]


# ---------------------------------------------------------------------------
# Choosing instructions
# ---------------------------------------------------------------------------

def test_defaults_and_aliases():
    f16, f32 = "float16", "float32"
    assert choose_instruction(f16, f32, f32).name == DEFAULTS[(f16, f32, f32)]
    assert choose_instruction(f16, f32, f32, "wmma").name == "wmma.m16n16k16.row.col.f32.f16.f16.f32"
    assert choose_instruction(f16, f32, f32, "m16n8k8").k == 8
    assert choose_instruction(f16, f32, f32, "mma.sync.m8n8k4").k == 4
    assert choose_instruction("tf32", f32, f32, "wmma.m16n16k8").api == "wmma"
    for (fin, fc, fout), name in DEFAULTS.items():
        assert BY_NAME[name].formats() == {"in": fin, "c": fc, "out": fout}


@pytest.mark.parametrize("args,match", [
    (("float16", "float32", "float16", None), "no supported instruction"),
    (("float16", "float32", "float32", "m16n8k32"), "unknown instruction"),
    (("float16", "float32", "float32", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
     "computes"),
])
def test_choose_instruction_errors(args, match):
    with pytest.raises(UserError, match=match) as e:
        choose_instruction(*args)
    assert "\n" not in str(e.value)


# ---------------------------------------------------------------------------
# The CUDA program
# ---------------------------------------------------------------------------

def _table(src: str, name: str) -> list[list[int]]:
    body = re.search(name + r"\[32\]\[\w+\] = \{\n(.*?)\n\};", src, re.S).group(1)
    return [[int(x) for x in re.findall(r"-?\d+", line)] for line in body.splitlines()]


def _define(src: str, name: str) -> int:
    return int(re.search(rf"#define {name} (\w+)", src).group(1), 0)


@pytest.mark.parametrize("ins", MMA, ids=_ids(MMA))
def test_fragment_tables_rebuild_a_and_b(tmp_path, ins):
    """Pack the registers as the kernel does, from the tables in the source,
    then read them back through the PTX layout: row 0 of A must be a, column
    0 of B must be b, everything else zero."""
    vs = read_vectors(vectors_file(tmp_path, ins, n=1, short=True))
    src = cuda_program(vs, ins)
    (a, b, _), = vs.padded(ins.k)
    fin = get_format(ins.in_format)
    words_a = [fin.to_storage(x) for x in a]
    words_b = [fin.to_storage(x) for x in b]
    bits = _define(src, "IN_BITS")
    per = 32 // bits
    for name, layout, words, elems, is_a in (("A_TERM", ins.a_layout, words_a, ins.a_elems, True),
                                             ("B_TERM", ins.b_layout, words_b, ins.b_elems, False)):
        table = _table(src, name)
        assert len(table) == 32 and all(len(r) == elems for r in table)
        seen = {}
        for lane in range(32):
            regs = [0] * (elems // per)
            for i in range(elems):
                t = table[lane][i]
                regs[i // per] |= (words[t] if t >= 0 else 0) << ((i % per) * bits)
            for i in range(elems):
                seen[layout(lane, i)] = (regs[i // per] >> ((i % per) * bits)) & ((1 << bits) - 1)
        for (r, col), x in seen.items():
            term = col if is_a and r == 0 else r if not is_a and col == 0 else None
            assert x == (words[term] if term is not None else 0), (name, r, col)
    # The kernel packs and unpacks with the same arithmetic as above.
    for reg, per_, bits_ in (("ra", "IN_PER_REG", "IN_BITS"), ("rb", "IN_PER_REG", "IN_BITS"),
                             ("rc", "C_PER_REG", "C_BITS")):
        assert f"{reg}[i / {per_}] |= (x & " in src
        assert src.count(f"<< ((i % {per_}) * {bits_});") >= 1
    assert "(rd[i / C_PER_REG] >> ((i % C_PER_REG) * C_BITS)) & C_MASK" in src
    assert src.count("<< ((i % IN_PER_REG) * IN_BITS);") == 2


@pytest.mark.parametrize("ins", INSTRUCTIONS, ids=_ids(INSTRUCTIONS))
def test_program_for_every_instruction(tmp_path, ins):
    path = vectors_file(tmp_path, ins, n=5, short=True)
    out = tmp_path / "probe.cu"
    got, count = write_probe(path, out)
    assert got == ins and count == 5
    src = out.read_text()
    vs = read_vectors(path)
    assert f"// Build: nvcc -O2 -arch=sm_{ins.min_sm} probe.cu -o probe" in src
    assert f"#define NVEC 5\n#define K {ins.k}\n" in src
    assert f'\\"instruction\\": \\"{ins.name}\\"' in src
    assert vs.sha256 in src
    fin = get_format(ins.in_format)
    first = f"0x{fin.to_storage(vs.vectors[0][0][0]):0{(fin.storage_bits + 3) // 4}x}u"
    assert first in src.split("h_a[NVEC * K] = {", 1)[1].split("};")[0]
    if ins.api == "mma":
        assert f'asm volatile("{ins.name} ' in src
    else:
        assert "wmma::fragment<wmma::matrix_a, M, N, K," in src and "mma_sync(" in src


def test_program_shape_matches_simulated_output(tmp_path):
    """Every key the CUDA main prints is in what simulated_observations writes."""
    printed = set(re.findall(r'\\"(\w+)\\": ', MAIN.template))
    ins = BY_NAME[DEFAULTS[("float16", "float32", "float32")]]
    sim = simulated_observations(vectors_file(tmp_path, ins), "hopper-fp16-fp32")
    row_keys = {"index", "a", "b", "c", "d"}
    assert printed >= {"schema", "device", "instruction", "formats", "k", "observations"}
    assert printed - row_keys - {"in", "out", "cuda_runtime", "cuda_driver"} <= set(sim)
    assert set(sim["observations"][0]) == row_keys


# One instruction of each family, compiled for sm_90 and for the oldest
# architecture this nvcc builds that the instruction runs on.
COMPILE = ["mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
           "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
           "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
           "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32",
           "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32",
           "wmma.m16n16k16.row.col.f16.f16.f16.f16",
           "wmma.m16n16k8.row.col.f32.tf32.tf32.f32"]


def _nvcc_archs(nvcc: str) -> list[int]:
    out = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True, check=True).stdout
    return sorted(int(m) for m in re.findall(r"compute_(\d+)", out))


def test_programs_compile_with_nvcc(tmp_path):
    nvcc = shutil.which("nvcc") or ("/usr/local/bin/nvcc" if Path("/usr/local/bin/nvcc").exists() else None)
    if nvcc is None:
        pytest.skip("nvcc not found: the generated CUDA programs are not compiled here")
    archs = _nvcc_archs(nvcc)
    jobs = []
    for name in COMPILE:
        ins = BY_NAME[name]
        lowest = min(a for a in archs if a >= ins.min_sm)   # sm_70 left CUDA 13
        src = tmp_path / (name.replace(".", "_") + ".cu")
        write_probe(vectors_file(tmp_path, ins, n=3), src)
        gencode = []
        for sm in sorted({lowest, 90}):
            gencode += ["-gencode", f"arch=compute_{sm},code=sm_{sm}"]
        cmd = [nvcc, "-O2", *gencode, "-c", str(src), "-o", str(src.with_suffix(".o"))]
        jobs.append((name, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                            text=True)))
    # One program is linked and run: with a GPU it prints observations, without
    # one it must end with a one-line CUDA error and print nothing on stdout.
    ins = BY_NAME[COMPILE[0]]
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    vpath = vectors_file(run_dir, ins, n=4)
    exe = tmp_path / "probe"
    write_probe(vpath, tmp_path / "probe.cu")
    link = subprocess.Popen([nvcc, "-O2", "-arch=sm_90", str(tmp_path / "probe.cu"), "-o", str(exe)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    failed = []
    for name, proc in jobs + [("linked probe", link)]:
        out, _ = proc.communicate(timeout=300)
        if proc.returncode != 0:
            failed.append(f"{name}:\n{out}")
    assert not failed, "\n".join(failed)
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    if run.returncode == 0:
        obs = parse_observations(json.loads(run.stdout))
        assert obs.instruction == ins.name and len(obs.rows) == 4
    else:
        assert run.stdout == "" and run.returncode == 1
        assert run.stderr.startswith("probe: ") and run.stderr.count("\n") == 1


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
    (_bad(formats={"in": "fp17", "c": "fp32", "out": "fp32"}), r"unknown float format"),
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
    assert "build: nvcc -O2 -arch=sm_75" in capsys.readouterr().err
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
    ins = BY_NAME[name]
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
    ins = BY_NAME["mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"]
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


@pytest.mark.skipif(not HW.is_dir(), reason="no recorded data in this checkout")
def test_hwdata_hopper_fp8_reads_c_as_zero():
    data = observations_from_hwdata(HW / "E4M3", "fp32", limit=60)
    assert [kp["rule"] for kp in data["known_problems"]] == ["c_zero"]
    obs = parse_observations(data)
    assert obs.k == 32 and len(obs.rows) == 60 and all(r.c == 0 for r in obs.rows)
    assert compare(obs, "hopper-e4m3-fp32").matched == 60


@pytest.mark.skipif(not HW.is_dir(), reason="no recorded data in this checkout")
def test_hwdata_fp16_output_rounds_c_to_fp16():
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
