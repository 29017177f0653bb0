"""tcsmt plan and tcsmt identify: plans, identification, the simulated loop.

Fast tests use the committed plans (results/plans/) and small spaces built
here; building the default plans and the solver proofs are marked slow.
Nothing is mocked: every output comes from running the models.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np
import pytest

from tcsmt.cli.main import main
from tcsmt.errors import UserError
from tcsmt.identify.hypspace import identification_space, single, space_for
from tcsmt.identify.narrow import identify
from tcsmt.identify.plan import build_plan, committed_plan, read_plan, write_plan
from tcsmt.identify.plantree import leaves
from tcsmt.identify.report import projection
from tcsmt.identify.simdevice import run_sim
from tcsmt.identify.space import load_space
from tcsmt.model.catalogue import all_models, load_model
from tcsmt.model.choose import choose
from tcsmt.model.modelfile import KEY_ORDER
from tcsmt.model.params import LATER_DEFAULTS
from tcsmt.observed.observations import parse_observations
from tcsmt.probes.harness import observations_from_hwdata, read_vectors, simulated_observations
from tcsmt.sim.batch import dot_batch
from tcsmt.sim.evaluate import evaluate

ROOT = Path(__file__).resolve().parent.parent
HWDATA = ROOT / "data" / "hwdata"
H100 = ROOT / "results" / "hardware" / "H100"
DEFAULT_ARCHS = ["volta", "turing", "ampere", "ada", "hopper", "blackwell", "cdna3"]

SMALL = """
base = "hopper-fp16-fp32"
[axes]
block_size = [4, 8, 16]
align_bits = [0, 1, 2]
final_rounding = ["rz", "rne"]
subnormals = ["keep", "flush_outputs"]
"""


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A plan over 36 hypotheses (k = 16), built here without the solvers."""
    d = tmp_path_factory.mktemp("plan")
    (d / "small.toml").write_text(SMALL)
    space = single(load_space(d / "small.toml"))
    plan = build_plan(space, pool_size=600, solver_budget=0)
    path = d / "small-plan.json"
    write_plan(path, plan)
    return path, read_plan(path)


_PLANS: dict = {}


def cached_plan(formats: str):
    """A committed plan, read once per test session (reading checks the hash
    of its 15456 hypotheses: a few seconds). FORMATS may end in
    @SCALE/BLOCK for a block-scaled plan."""
    if formats not in _PLANS:
        fmts, _, scales = formats.partition("@")
        path = committed_plan(fmts, scales or None)
        assert path is not None, f"no committed plan for {formats} (tcsmt plan --formats {formats})"
        _PLANS[formats] = read_plan(path)
    return _PLANS[formats]


@pytest.fixture(scope="module")
def fp16_plan():
    return cached_plan("fp16:fp32")


def run_cli(capsys, *args) -> tuple[int, str]:
    """The tcsmt command line as a user runs it: (exit status, stdout + stderr)."""
    try:
        main(list(args))
        code = 0
    except SystemExit as e:
        code = e.code or 0
    out = capsys.readouterr()
    return code, out.out + out.err


def observations_of(plan_path: Path, model) -> dict:
    return simulated_observations(plan_path, model)


# ---------------------------------------------------------------------------
# The evaluator and the plan
# ---------------------------------------------------------------------------

def test_space_evaluation_equals_the_batch_simulator():
    models = identification_space("fp16:fp32").models()[::997]
    rng = np.random.default_rng(5)
    a = rng.integers(0, 0x7c00, size=(64, 16), dtype=np.uint64)
    b = (rng.integers(0, 0x7c00, size=(64, 16), dtype=np.uint64)
         | (rng.integers(0, 2, (64, 16), dtype=np.uint64) << np.uint64(15)))
    c = rng.integers(0, 0x7f000000, size=64, dtype=np.uint64)
    ev = evaluate(models, a, b, c, workers=1)
    for i, m in enumerate(models):
        assert (ev.outputs[i] == dot_batch(m, a, b, c)).all(), m.name


def test_plan_separates_every_class_and_is_a_vectors_file(small):
    path, plan = small
    assert sorted(j for j, _ in leaves(plan.tree)) == list(range(len(plan.classes)))
    assert sorted(i for cl in plan.classes for i in cl.members) == list(range(plan.space.size))
    vs = read_vectors(path)                       # what tcsmt harness reads
    assert vs.fin.name == "float16" and len(vs.vectors) == len(plan.vectors)
    assert plan.stats["worst_case_runs"] == max(d for _, d in leaves(plan.tree))
    # the tree's branch for each class is that class's output, recomputed here
    models = plan.models()
    for j, _depth in leaves(plan.tree):
        node, m = plan.tree, models[plan.classes[j].members[0]]
        while "vector" in node:
            v = plan.vectors[node["vector"]]
            d = int(dot_batch(m, np.array([v.a]), np.array([v.b]), np.array([v.c]))[0])
            node = node["outputs"][plan.fout.hex(d)]
        assert node == {"class": j}


def _committed_formats() -> list[str]:
    """fp16:fp32 (required), and every other committed plan of an
    identification space (not those built from a space file): IN-OUT.json,
    or IN-OUT-SCALExBLOCK.json as IN:OUT@SCALE/BLOCK."""
    found = {"fp16:fp32"}
    for p in sorted((ROOT / "results" / "plans").glob("*.json")):
        if json.loads(p.read_text())["space"]["name"].startswith(("identify-", "default-")):
            fin, fout, *scaled = p.stem.split("-")
            found.add(f"{fin}:{fout}" + ("@" + scaled[0].replace("x", "/") if scaled else ""))
    return sorted(found)


@pytest.mark.parametrize("formats", _committed_formats())
def test_committed_plans_cover_their_space(formats):
    plan = cached_plan(formats)
    fmts, _, scales = formats.partition("@")
    assert plan.space.digest() == space_for(fmts, None, scales or None).digest()
    assert plan.stats["worst_case_runs"] <= 12
    assert sorted(j for j, _ in leaves(plan.tree)) == list(range(len(plan.classes)))
    assert sorted(i for cl in plan.classes for i in cl.members) == list(range(plan.space.size))
    assert plan.stats["worst_case_runs"] == max(d for _, d in leaves(plan.tree))


def test_committed_plan_branches_are_the_hypotheses_outputs(fp16_plan):
    """Spot check of the fp16:fp32 plan: for some classes, the outputs of
    every member (recomputed here with the batch simulator) lead the tree to
    that class."""
    plan = fp16_plan
    models = plan.models()
    a = np.array([v.a for v in plan.vectors], dtype=np.uint64)
    b = np.array([v.b for v in plan.vectors], dtype=np.uint64)
    c = np.array([v.c for v in plan.vectors], dtype=np.uint64)
    for j in range(0, len(plan.classes), max(1, len(plan.classes) // 12)):
        for i in plan.classes[j].members[:3]:
            d = dot_batch(models[i], a, b, c)
            node = plan.tree
            while "vector" in node:
                node = node["outputs"][plan.fout.hex(int(d[node["vector"]]))]
            assert node == {"class": j}, models[i].name


def _nvcc():
    import shutil
    return shutil.which("nvcc") or ("/usr/local/bin/nvcc" if Path("/usr/local/bin/nvcc").exists() else None)


def test_probe_of_the_committed_plan_compiles_with_nvcc(tmp_path, capsys):
    """tcsmt harness on the plan writes a CUDA program that nvcc compiles."""
    import subprocess
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found: the probe is not compiled here")
    path = committed_plan("fp16:fp32")
    src = tmp_path / "probe.cu"
    code, out = run_cli(capsys, "harness", str(path), "--target", "cuda", "-o", str(src))
    assert code == 0, out
    text = src.read_text()
    assert f"#define NVEC {len(cached_plan('fp16:fp32').vectors)}" in text
    r = subprocess.run([nvcc, "-O2", "-gencode", "arch=compute_80,code=sm_80", "-c", str(src),
                        "-o", str(tmp_path / "probe.o")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_simulated_probe_output_identifies_with_the_committed_plan(tmp_path, capsys, fp16_plan):
    """What the probe prints (here from the ampere model: the same JSON)
    read by tcsmt identify: one class, the one holding ampere's values."""
    path = committed_plan("fp16:fp32")
    obs_path = tmp_path / "obs.json"
    obs_path.write_text(json.dumps(simulated_observations(path, "ampere-fp16-fp32")))
    code, out = run_cli(capsys, "identify", str(obs_path), "--no-model-file", "-o", str(tmp_path / "r.json"))
    assert code == 0, out
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["verdict"] == "identified", out
    plan = fp16_plan
    idx, _ = projection(plan.space, choose("ampere-fp16-fp32"))
    assert plan.models()[idx].name in rep["consistent"]["names"] or rep["consistent"]["hypotheses"] > 40
    assert rep["consistent"]["parameters"]["block_size"] == [8]
    assert rep["plan_rows_walked"] >= 1


# ---------------------------------------------------------------------------
# The simulated device
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("arch", DEFAULT_ARCHS)
def test_sim_recovers_every_default_model(arch, fp16_plan):
    """Phase 1 alone (the plan's adaptive search) ends in the class that
    holds the model's values on the space's axes (the proof that the class
    is the model is slow, below)."""
    p = choose(arch)
    plan = fp16_plan
    rec = run_sim(arch, None, plan, prove=False, confirm=False)
    assert rec["verdict"] == "narrowed" and rec["phase1"]["runs"] == len(rec["phase1"]["steps"])
    assert rec["phase1"]["runs"] <= plan.stats["worst_case_runs"] and rec["launches"]["phase2"] == 0
    assert rec["check"]["phase1_class_holds_unit"], rec["check"]
    members = [plan.models()[i] for i in plan.classes[rec["phase1"]["class"]].members]
    idx, outside = projection(plan.space, p)
    assert plan.models()[idx] in members
    assert set(outside) <= {"min_exponent", "carry_bits"}


def test_sim_recovers_cdna3_in_the_late_c_part(fp16_plan):
    p = choose("cdna3")
    rec = run_sim("cdna3", None, fp16_plan, prove=False, confirm=False)
    c = rec["check"]
    assert c["outside_the_space"] == {} and c["phase1_class_holds_unit"], c
    assert c["space_hypothesis"].startswith("c-late:")
    assert p.c_placement == "late"


def test_sim_device_outside_the_space_is_named(small):
    """A device the small space cannot explain (IEEE rounding of the
    aligned terms): the plan's search stops at the run whose output no
    branch holds."""
    _, plan = small
    dev = choose("hopper-fp16-fp32").replace(align_rounding="rne", name="odd")
    rec = run_sim(dev, None, plan, prove=False, confirm=False)
    assert rec["verdict"] == "outside the plan's space", rec
    assert rec["phase1"]["failure"]["run"] == rec["phase1"]["runs"]
    assert rec["check"]["outside_the_space"] == {"align_rounding": "rne"}


PROVE_FAST = ["volta", "hopper", "cdna3"]   # carry bits and a floor; a floor; the late-c part


@pytest.mark.parametrize("arch", [a if a in PROVE_FAST else pytest.param(a, marks=pytest.mark.slow)
                                  for a in DEFAULT_ARCHS])
def test_sim_proves_the_class_is_the_model(arch, fp16_plan):
    """After phase 1, the check with the model's own parameters: the class
    is one behaviour and the model is it, the parameters outside the space
    proved irrelevant by lemmas, then the same circuit."""
    rec = run_sim(arch, None, fp16_plan, prove=True, timeout=300, confirm=False)
    c = rec["check"]
    assert c["phase1_verdict"] == "recovered", c
    assert c["class_proof"]["verdict"] == "unsat" and c["unit_proof"]["verdict"] == "unsat"
    for lem in c["unit_proof"]["lemmas"]:
        assert lem["verdict"] == "unsat" and lem["parameter"] in ("min_exponent", "carry_bits")
        if lem["parameter"] == "min_exponent":
            assert len(lem["proved_by"]) >= 2


@pytest.mark.parametrize("arch", ["hopper", "cdna3", pytest.param("ampere", marks=pytest.mark.slow),
                                  pytest.param("ada", marks=pytest.mark.slow),
                                  pytest.param("blackwell", marks=pytest.mark.slow)])
def test_sim_recovers_bf16_models(arch):
    path = committed_plan("bf16:fp32")
    if path is None:
        pytest.skip("no committed bf16:fp32 plan")
    plan = cached_plan("bf16:fp32")
    rec = run_sim(arch, "bf16:fp32", plan, prove=True, timeout=300, confirm=False)
    if arch == "hopper":
        # Hopper's bf16 unit returns +0 for a sum that rounds to zero (an
        # H100's rows): zero_sign = all_positive lies outside the plan's
        # space, whose hypotheses keep the sign; no lemma settles it, and
        # confirmation (phase 2) is what finds it
        assert rec["check"]["outside_the_space"]["zero_sign"] == "all_positive"
        assert rec["check"]["phase1_verdict"] == "recovered, not proved", rec["check"]
        assert rec["check"]["phase1_class_holds_unit"]
    else:
        assert rec["check"]["phase1_verdict"] == "recovered", rec["check"]
    assert rec["phase1"]["runs"] <= plan.stats["worst_case_runs"]


def test_floor_lemma_finds_a_floor_that_acts():
    """The lemma is not always UNSAT: a floor at -20 moves the alignment
    point of small products."""
    from tcsmt.identify.lemmas import floor_lemma
    from tcsmt.identify.plan import plan_domain
    p = choose("ampere").replace(min_exponent=-20)
    assert floor_lemma(p, 16, plan_domain(p.fin, p.fout), 60)["verdict"] == "sat"


def test_floor_lemma_covers_exact_groups():
    """With exact groups (NVFP4's reading by MMA-Sim: groups of 16, and 4)
    the lemma's terms are the groups' sums, each times a free scale pair,
    as the block register takes them: the floor e_zero = -139 is below any
    group a finite input makes; a floor at -10 is not (a group of 0.25 with
    scales 2^-9 and 2^-9 lies at 2^-20). Hypotheses that differ only in
    their roundings ask one formula, solved once."""
    from tcsmt.identify import lemmas
    from tcsmt.identify.plan import plan_domain
    base = choose("blackwell-nvfp4")
    dom = plan_domain(base.fin, base.fout)
    for g in (16, 4):
        p = base.replace(group_size=g)
        rec = lemmas.floor_lemma(p, 64, dom, 60)
        assert rec["verdict"] == "unsat" and len(rec["proved_by"]) >= 2, rec
        assert f"exact groups of {g}" in rec["how"]
        assert len(rec["sha256"]) == len(lemmas.c_formats(p, 64))
        assert lemmas.floor_lemma(p.replace(min_exponent=-10), 64, dom, 60)["verdict"] == "sat"
    p = base.replace(group_size=4)
    q = p.replace(name="other rounding", final_rounding="rne" if p.final_rounding != "rne" else "rz")
    fp, fq = (lemmas.floor_formula(m, 64, dom) for m in (p, q))
    assert fp.sha256 != fq.sha256 and lemmas._question(fp) == lemmas._question(fq)


def test_floor_lemma_reads_b_in_its_own_format():
    """A unit with e2m1 a and e4m3 b (8-bit b words): the lemma unpacks b
    as e4m3 (it once read both as e2m1), and a floor below every term's
    exponent never acts."""
    from tcsmt.identify.lemmas import floor_lemma
    from tcsmt.search.domain import Domain
    p = choose("rtx-blackwell-e2m1-e4m3-fp32")
    assert p.fb.bits == 8 and p.fin.bits == 4
    assert floor_lemma(p.replace(min_exponent=-200), 16, Domain(), 60)["verdict"] == "unsat"
    assert floor_lemma(p.replace(min_exponent=4), 16, Domain(), 60)["verdict"] == "sat"



def test_floor_lemma_counts_block_scales():
    """Block scales take products far below their unscaled range. On
    blackwell-mxf8f6f4-e2m1-e5m2-sftensor a floor at -151 acts on a row
    whose scales (2^-127 and 2^-42, one pair for the block of 32) bring
    eight products 4 x 2^15 to 2^-152 and one, -0.5 x 2^-7, to -2^-177:
    the floor's cut drops it, no floor keeps it, and the sum, 2^-149 less
    or not, rounds toward zero to 0 or 2^-149. The lemma, which once left
    the scales out and proved that floor moot, gives each product a scale
    pair of its own and does not prove it."""
    import ml_dtypes

    from tcsmt.identify.lemmas import floor_lemma
    from tcsmt.search.domain import Domain
    from tcsmt.sim.batch import dot_batch
    free = choose("blackwell-mxf8f6f4-e2m1-e5m2-sftensor")
    floored = free.replace(min_exponent=-151)

    def word(dtype, v, mask):
        return int(np.array([v], dtype=dtype).view(np.uint8)[0]) & mask
    a = [word(ml_dtypes.float4_e2m1fn, 4.0, 0xF)] * 8 + [word(ml_dtypes.float4_e2m1fn, -0.5, 0xF)] + [0] * 23
    b = [word(ml_dtypes.float8_e5m2, 2.0 ** 15, 0xFF)] * 8 + [word(ml_dtypes.float8_e5m2, 2.0 ** -7, 0xFF)] \
        + [0] * 23
    rows = dict(a_bits=np.array([a], dtype=np.uint64), b_bits=np.array([b], dtype=np.uint64),
                c_bits=np.zeros(1, dtype=np.uint64), sa_bits=np.array([[127 - 127]], dtype=np.uint64),
                sb_bits=np.array([[127 - 42]], dtype=np.uint64))
    assert int(dot_batch(free, **rows)[0]) == 0
    assert int(dot_batch(floored, **rows)[0]) == 1          # 2^-149
    assert floor_lemma(floored, 32, Domain(), 60)["verdict"] == "sat"
    # the unscaled unit of these formats (products stop at 2^-17): that floor never acts
    plain = choose("blackwell-e2m1-e5m2-fp32").replace(min_exponent=-151)
    assert plain.fscale is None
    assert floor_lemma(plain, 32, Domain(), 60)["verdict"] == "unsat"

def test_cli_sim_prints_runs(capsys):
    code, out = run_cli(capsys, "identify", "--device", "sim:ampere", "--no-prove", "--no-confirm")
    assert code == 0, out
    assert "phase 1, the plan's adaptive search (a run is one vector on the plan's path):" in out
    assert "  run 1:" in out and "  4 runs in 4 launches of 4 vectors" in out
    assert "launches of the unit: 4 (4 in phase 1, 0 in phase 2); 4 vectors in all" in out


# ---------------------------------------------------------------------------
# Observations in, identification out
# ---------------------------------------------------------------------------

def test_harness_observations_round_trip(small, tmp_path):
    path, plan = small
    data = observations_of(path, "hopper-fp16-fp32")
    obs_path = tmp_path / "obs.json"
    obs_path.write_text(json.dumps(data))
    obs = parse_observations(json.loads(obs_path.read_text()))
    res = identify(obs, plan.space, plan)
    assert res.verdict == "identified"
    names = {plan.models()[i].name for i in res.consistent}
    assert "block_size=16,align_bits=2,final_rounding=rz,subnormals=keep" in names
    assert res.walked                           # read along the tree, not only evaluated


def test_identify_writes_a_model_file(small, tmp_path, capsys):
    path, plan = small
    obs_path = tmp_path / "obs.json"
    obs_path.write_text(json.dumps(observations_of(path, "hopper-fp16-fp32")))
    out = tmp_path / "found.toml"
    code, text = run_cli(capsys, "identify", str(obs_path), "--plan", str(path),
                         "--model-file", str(out), "-o", str(tmp_path / "rep.json"))
    assert code == 0, text
    p = load_model(out)
    assert (p.block_size, p.align_bits, p.final_rounding) == (16, 2, "rz")
    text = out.read_text()
    keys = list(tomllib.loads(text))
    shipped_keys = set()
    for m in (ROOT / "models").glob("*.toml"):
        shipped_keys |= set(tomllib.loads(m.read_text()))
    later = set(LATER_DEFAULTS)
    assert set(keys) == set(KEY_ORDER) - later
    # shipped files that start from another (base = ...) list only what differs
    assert shipped_keys - {"base"} - later <= set(KEY_ORDER) - later
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if "=" in line and not line.startswith("#"):
            assert lines[n - 1].startswith("# source: "), line
    rep = json.loads((tmp_path / "rep.json").read_text())
    assert rep["verdict"] == "identified"


def test_a_wrong_observation_names_the_row_and_the_closest(small, tmp_path, capsys):
    path, plan = small
    data = observations_of(path, "hopper-fp16-fp32")
    row = data["observations"][1]
    row["d"] = "0x" + format(int(row["d"], 16) ^ 0x4, "08x")        # two ulps off, say
    obs_path = tmp_path / "bad.json"
    obs_path.write_text(json.dumps(data))
    code, out = run_cli(capsys, "identify", str(obs_path), "--plan", str(path), "--no-model-file")
    assert code == 2
    assert "no hypothesis in the space explains observation 1" in out
    assert "closest hypotheses" in out and "ulp" in out
    assert out.strip().splitlines()[-1] == "error: no hypothesis in the space explains observation 1"


def test_observations_off_the_plan_are_evaluated(small):
    """Rows that are not plan vectors: every hypothesis is run on them."""
    _, plan = small
    p = choose("hopper-fp16-fp32")
    from tcsmt.probes.harness import random_vectors
    vec = random_vectors({"in": "float16", "c": "float32", "out": "float32"}, 16, 40, 9)
    rows = []
    for n, v in enumerate(vec["vectors"]):
        a = [int(x, 16) for x in v["a"]]
        b = [int(x, 16) for x in v["b"]]
        c = int(v["c"], 16)
        d = int(dot_batch(p, np.array([a]), np.array([b]), np.array([c]))[0])
        rows.append({"index": n, "a": v["a"], "b": v["b"], "c": v["c"], "d": f"0x{d:08x}"})
    obs = parse_observations({"schema": "tcsmt-observations/1", "device": "test", "compute_capability": "-",
                              "instruction": "-", "formats": vec["formats"], "k": 16, "observations": rows})
    res = identify(obs, plan.space, plan)
    idx, _ = projection(plan.space, p)
    assert idx in res.consistent and not res.walked


def test_bad_shapes_are_one_line_errors(small, tmp_path, capsys):
    path, _ = small
    data = observations_of(path, "hopper-fp16-fp32")
    data["observations"][0]["a"] = data["observations"][0]["a"][:3]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    code, out = run_cli(capsys, "identify", str(bad), "--plan", str(path))
    assert code == 2 and "expected a list of k = 16" in out and len(out.strip().splitlines()) == 1
    data = observations_of(path, "hopper-fp16-fp32")
    data["formats"] = {"in": "bfloat16", "c": "float32", "out": "float32"}
    for row in data["observations"]:
        row["d"] = row["d"]
    bad.write_text(json.dumps(data))
    with pytest.raises(UserError, match="the observations are bfloat16"):
        from tcsmt.observed.observations import read_observations
        identify(read_observations(bad), read_plan(path).space, read_plan(path))
    code, out = run_cli(capsys, "identify", "--device", "gpu0")
    assert code == 2 and "sim:ARCH" in out


# ---------------------------------------------------------------------------
# Recorded data
# ---------------------------------------------------------------------------

def test_recorded_folder_narrows_to_a_set_with_the_shipped_model(tmp_path):
    space_file = tmp_path / "a100.toml"
    space_file.write_text(SMALL.replace("hopper", "ampere"))
    space = single(load_space(space_file))
    obs = parse_observations(observations_from_hwdata(HWDATA / "A100" / "fp16", limit=300))
    res = identify(obs, space, None)
    idx, outside = projection(space, choose("ampere-fp16-fp32"))
    assert idx in res.consistent and outside == []
    assert len(res.consistent) < space.size


def test_cli_on_a_recorded_folder(tmp_path, capsys):
    space_file = tmp_path / "v100.toml"
    space_file.write_text(SMALL.replace("hopper", "volta"))
    code, out = run_cli(capsys, "identify", str(HWDATA / "V100" / "fp16"), "--space", str(space_file),
                        "--limit", "200", "--no-model-file")
    assert code == 0, out
    assert "shipped model volta-fp16-fp32: reproduces 200/200 rows" in out


@pytest.mark.slow
@pytest.mark.parametrize("folder,model", [("A100/fp16", "ampere-fp16-fp32"),
                                          ("H100/bf16", "hopper-bf16-fp32")])
def test_recorded_folder_in_the_default_space(folder, model):
    obs = parse_observations(observations_from_hwdata(HWDATA / folder))
    space = identification_space(f"{obs.fin.name}:fp32")
    res = identify(obs, space, None)
    idx, _ = projection(space, choose(model))
    assert idx in res.consistent


def test_all_models_have_a_known_key_set():
    for m in all_models():
        assert set(m.as_dict()) - {"source_file"} <= set(KEY_ORDER)


def test_recorded_fp8_folder_applies_the_known_problem(tmp_path, capsys):
    """Hopper fp8 rows were recorded with the accumulator at zero: the
    c_zero rule is applied (the shipped model then reproduces every row)
    and the report says so."""
    space_file = tmp_path / "h100-e4m3.toml"
    space_file.write_text('base = "hopper-e4m3-fp32"\n[axes]\nblock_size = [16, 32]\nalign_bits = [0, 1]\n')
    code, out = run_cli(capsys, "identify", str(HWDATA / "H100" / "E4M3"), "--space", str(space_file),
                        "--limit", "100", "--no-model-file")
    assert code == 0, out
    assert "known problem of the recording (c_zero)" in out
    assert "shipped model hopper-e4m3-fp32: reproduces 100/100 rows" in out


def test_a_unit_of_formats_no_instruction_table_holds_takes_its_shipped_block():
    """Turing's m8n8k4 unit with an fp16 c and an fp32 d has no entry in
    the instruction tables (they hold m8n8k4 with c and d of one type);
    blind identification takes k from its shipped model's block instead
    of failing, and the tables' error names only instructions of the same
    a format."""
    from tcsmt.identify.setting import setting
    from tcsmt.instructions.table import choose_instruction
    p = choose("turing-fp16-fp32-cfp16-m8n8k4").replace(min_exponent=-8)
    st = setting(p)
    assert st.k == 4 and st.plan is None and st.shipped
    with pytest.raises(UserError) as e:
        choose_instruction("float16", "float16", "float32")
    msg = str(e.value)
    assert "with a float16" in msg and "e4m3" not in msg and "\n" not in msg


@pytest.mark.parametrize("formats", ["e4m3:fp32", "fp16:fp32", "e2m1:fp32"])
def test_space_models_are_what_model_makes_of_each_combination(formats):
    """Space.models builds its hypotheses without dataclasses.replace: the
    same fields, names and origins as Space.model gives each combination."""
    from tcsmt.identify.hypspace import space_for
    scales = "ue4m3/16" if formats.startswith("e2m1") else None
    sp = space_for(formats, None, scales) if scales else space_for(formats, None)
    for part in sp.parts[:2]:
        pre = f"{part.name}:"
        fast = part.models(pre)
        slow = [part.model(v, pre) for v in part.combinations()]
        assert len(fast) == part.size and fast == slow
        assert [m.__dict__ for m in fast] == [m.__dict__ for m in slow]
        assert [hash(m) for m in fast[:50]] == [hash(m) for m in slow[:50]]


@pytest.mark.parametrize("axes, message", [
    ({"block_size": [8, "x"]}, "space bad: block_size=x: key 'block_size': 'x' is not an integer"),
    ({"align_bits": [1, 99]}, "space bad: align_bits=99: key 'align_bits': 99 is not an integer in 0..64"),
    ({"colour": [1]}, "space bad: colour=1: key 'colour': unknown key"),
])
def test_a_bad_axis_value_names_the_first_combination_holding_it(axes, message):
    from tcsmt.errors import ModelFileError
    from tcsmt.identify.space import Space, neutral_base
    with pytest.raises(ModelFileError) as e:
        Space(neutral_base("fp16:fp32"), axes, "bad").models()
    assert str(e.value) == message
