"""identify --device sim: with the AMD models as the device, on the
committed fp16:fp32 and bf16:fp32 plans (their spaces hold the AMD parts
c-late, exact-sum and pairwise-adds), and how a device is placed in a
space."""

from __future__ import annotations

import pytest
from checkout import RESULTS

from tcsmt.identify.hypspace import HypSpace, single
from tcsmt.identify.plan import build_plan, committed_plan, read_plan
from tcsmt.identify.report import projection
from tcsmt.identify.simdevice import run_sim
from tcsmt.identify.space import Space, default_space, load_space, neutral_base
from tcsmt.model.choose import choose

_PLANS: dict = {}


def plan_of(formats: str):
    """A committed plan, read once (reading checks its space's hash)."""
    if formats not in _PLANS:
        path = committed_plan(formats)
        assert path is not None, f"no committed {formats} plan (tcsmt plan --formats {formats})"
        _PLANS[formats] = read_plan(path)
    return _PLANS[formats]


AMD = [("cdna1-fp16-fp32", "fp16:fp32", "exact-sum:"), ("cdna2-fp16-fp32", "fp16:fp32", "pairwise-adds:"),
       ("cdna3-fp16-fp32", "fp16:fp32", "c-late:"), ("cdna1-bf16-fp32", "bf16:fp32", "exact-sum:"),
       ("cdna2-bf16-fp32", "bf16:fp32", "pairwise-adds:"),
       ("cdna2-bf16-fp32-1k", "bf16:fp32", "pairwise-adds:"), ("cdna3-bf16-fp32", "bf16:fp32", "c-late:")]


SPLIT_BY_SIMULATION = {"cdna2-bf16-fp32"}
"""Its phase-1 class holds 33 hypotheses (blocks of 2 chained separately
sum each pair of products, rounded, then add it to c, as CDNA2's pairwise
additions do; the flushing variants agree on the plan's domain); no plan
candidate splits them and the solvers do not prove them equal in 20 s, but
fresh pools through the simulator (tcsmt.identify.simsplit) find rows that
split it, and the check keeps the members that give the unit's d on each
until one circuit is left."""


@pytest.mark.parametrize("name,formats,part", AMD)
def test_sim_recovers_each_amd_model(name, formats, part):
    """Each AMD fp16/bf16 -> fp32 model as the device: the plan's tree ends
    in the class of the AMD part's hypothesis with the model's values, the
    device builds that hypothesis's circuit, and the class is proved one
    behaviour (one circuit); for SPLIT_BY_SIMULATION only after rows the
    simulator found split its class."""
    plan = plan_of(formats)
    rec = run_sim(name, None, plan, prove=True, timeout=60, confirm=False)   # wall s: a loaded machine
    c = rec["check"]
    assert c["space_hypothesis"].startswith(part) and c["outside_the_space"] == {}
    assert c["phase1_class_holds_unit"] and rec["phase1"]["runs"] <= plan.stats["worst_case_runs"]
    assert c["unit_proof"]["verdict"] == "unsat", c
    assert c["phase1_verdict"] == "recovered" and c["class_proof"]["verdict"] == "unsat", c
    if name in SPLIT_BY_SIMULATION:        # the check refined phase 1's open class to one circuit
        p1 = rec["phase1"]
        assert p1["class_status"] == "open" and len(c["class_left"]) < p1["class_size"], c


def test_cli_identifies_cdna1_and_cdna2(capsys, tmp_path, monkeypatch):
    """tcsmt identify --device sim:cdna1 / sim:cdna2 (their default models,
    fp16 -> fp32) as a user runs it: both phases, identified as the shipped
    model itself, which the check after the verdict finds right; the model
    file written where the user stands."""
    from tcsmt.cli.main import main
    monkeypatch.chdir(tmp_path)
    for arch in ("cdna1", "cdna2"):
        try:
            main(["identify", "--device", f"sim:{arch}"])
            code = 0
        except SystemExit as e:
            code = e.code or 0
        out = capsys.readouterr().out
        assert code == 0, out
        assert f"verdict: identified: {arch}-fp16-fp32 (" in out, out
        assert "phase 1's class holds the unit's values" in out and "the verdict is right" in out
        assert (tmp_path / f"identified-sim-{arch}-fp16-fp32.toml").exists()

SMALL = """
base = "hopper-fp16-fp32"
[axes]
block_size = [4, 8, 16]
align_bits = [0, 1, 2]
final_rounding = ["rz", "rne"]
subnormals = ["keep", "flush_outputs"]
"""


def test_no_prove_never_says_recovered_for_a_device_off_its_class(tmp_path):
    """A device whose values are in no hypothesis of the class it ends in
    (subnormal inputs flushed: no axis value of the space) may follow the
    plan's tree to a class; without a proof that is not a recovery."""
    (tmp_path / "small.toml").write_text(SMALL)
    plan = build_plan(single(load_space(tmp_path / "small.toml")), pool_size=600, solver_budget=0)
    dev = choose("hopper-fp16-fp32").replace(subnormals="flush_inputs", name="flushing")
    rec = run_sim(dev, None, plan, prove=False, confirm=False)
    c = rec["check"]
    assert "class" in rec["phase1"], rec                       # the walk reaches a class
    assert not c["phase1_class_holds_unit"]
    assert not c["phase1_verdict"].startswith("recovered"), c
    assert c["outside_the_space"] == {"subnormals": "flush_inputs"}


def test_projection_is_the_closest_part_not_the_one_with_fewest_axes():
    """CDNA2 (pairwise IEEE additions, flushing at every step) against the
    default axes and the c-late part: the default part varies its
    align_rounding and normalisation, so those are not outside the space;
    what is outside is what no part holds (its subnormals, its add_order)."""
    base = neutral_base("fp16:fp32")
    late = Space(base.replace(c_placement="late", late_frac_bits=31, zero_sign="ieee",
                              product_overflow="inf"),
                 {"block_size": [4, 8], "final_rounding": ["rz", "rne"]}, name="c-late")
    space = HypSpace([default_space("fp16:fp32"), late])
    idx, outside = projection(space, choose("cdna2-fp16-fp32"))
    assert idx is None
    assert "subnormals" in outside and "add_order" in outside
    assert "align_rounding" not in outside and "normalisation" not in outside
    assert "c_placement" not in outside
    idx, outside = projection(space, choose("cdna3-fp16-fp32"))
    assert space.models()[idx].name.startswith("c-late:") and outside == []


def test_candidates_tell_flushing_at_every_step_from_flushing():
    """CDNA2 reads a -0 input as +0; a unit that flushes only subnormals
    keeps it. Only zeros of both signs tell them apart (products of one
    sign and c = -0): the candidates hold such rows, none for fnuz inputs,
    which have no -0."""
    from tcsmt.identify.hypspace import amd_parts
    from tcsmt.identify.plan import plan_domain
    from tcsmt.model.formats import get_format
    from tcsmt.search.candidates import candidate_vectors
    from tcsmt.sim.batch import dot_batch
    part = amd_parts(neutral_base("fp16:fp32"))[2]
    ms = {m.name: m for m in part.models()}
    p = ms["block_size=4,add_order=pairwise,subnormals=flush_every_step"]
    q = ms["block_size=4,add_order=pairwise,subnormals=flush"]
    a, b, c = candidate_vectors(p.fin, p.fc, 16, plan_domain(p.fin, p.fout), 1000)
    differ = dot_batch(p, a, b, c) != dot_batch(q, a, b, c)
    assert differ.any()
    assert ((a[differ] == 0x8000) | (b[differ] == 0x8000)).any(axis=1).all()
    fnuz = get_format("float8_e4m3fnuz")
    a8, b8, _ = candidate_vectors(fnuz, get_format("float32"), 32, plan_domain(fnuz, p.fout), 500)
    assert not ((a8 == 0x80) | (b8 == 0x80)).any()


FP8_SPACE = RESULTS / "plans" / "cdna3-fp8-bf8-space.toml"
FP8_PLAN = RESULTS / "plans" / "e4m3fnuz-e5m2fnuz-fp32.json"


@pytest.fixture(scope="module")
def fp8_plan():
    return read_plan(FP8_PLAN)


def test_fp8_plan_is_built_from_its_space_file(fp8_plan):
    """The committed CDNA3 fp8 x bf8 plan holds the space of its file and
    runs on the 16x16x32 instruction (k = 32: two of CDNA3's blocks)."""
    assert fp8_plan.space.digest() == single(load_space(FP8_SPACE)).digest()
    assert fp8_plan.instruction == "v_mfma_f32_16x16x32_fp8_bf8" and fp8_plan.k == 32
    assert (fp8_plan.fin.name, fp8_plan.fb.name) == ("float8_e4m3fnuz", "float8_e5m2fnuz")
    assert sorted(i for cl in fp8_plan.classes for i in cl.members) == list(range(fp8_plan.space.size))


def test_sim_recovers_cdna3_fp8_pair(fp8_plan):
    """CDNA3's fp8 x bf8 model as the device: the tree ends in the class of
    its values, and the class is proved one behaviour."""
    rec = run_sim("cdna3-e4m3fnuz-e5m2fnuz-fp32", None, fp8_plan, prove=True, timeout=120, confirm=False)
    c = rec["check"]
    assert c["phase1_verdict"] == "recovered", c
    assert c["phase1_class_holds_unit"] and c["outside_the_space"] == {}
    assert rec["phase1"]["runs"] <= fp8_plan.stats["worst_case_runs"]
