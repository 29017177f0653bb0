"""Plans and identification with block scales (NVFP4), and the plans of the
fp8 and NVFP4 identification spaces.

A small scaled space is planned here without the solvers; the committed
plans (results/plans/) are replayed. Nothing is mocked: every output comes
from running the models.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tcsmt.errors import UserError
from tcsmt.identify.hypspace import identification_space, scaled_space, single, space_for
from tcsmt.identify.narrow import identify
from tcsmt.identify.plan import build_plan, committed_plan, read_plan, write_plan
from tcsmt.identify.plansearch import Search
from tcsmt.identify.simdevice import run_sim
from tcsmt.identify.space import Space, load_space, neutral_base
from tcsmt.model.choose import choose
from tcsmt.observed.observations import parse_observations
from tcsmt.observed.vectors import read_vectors
from tcsmt.probes.harness import simulated_observations
from tcsmt.search.candidates import candidate_scales, candidate_vectors
from tcsmt.search.domain import Domain
from tcsmt.sim.batch import dot_batch
from tcsmt.sim.dot import dot_bits
from tcsmt.sim.evaluate import evaluate

SMALL_SCALED = """
base = "blackwell-nvfp4"
[axes]
group_size = [4, 16]
align_bits = [11, 12]
zero_sign = ["all_positive", "keep_c"]
"""

FP8_DEFAULTS = ["ada", "hopper", "blackwell"]


@pytest.fixture(scope="module")
def scaled(tmp_path_factory):
    """A plan over 8 NVFP4 hypotheses (k = 64, ue4m3 scales per 16), built
    here without the solvers."""
    d = tmp_path_factory.mktemp("scaled")
    (d / "nvfp4.toml").write_text(SMALL_SCALED)
    space = single(load_space(d / "nvfp4.toml"))
    plan = build_plan(space, "tcgen05", pool_size=300, solver_budget=0)
    path = d / "nvfp4-plan.json"
    write_plan(path, plan)
    return path, plan


def test_scaled_plan_holds_its_scales_and_reads_back(scaled):
    path, plan = scaled
    data = json.loads(path.read_text())
    assert data["formats"]["scale"] == "ue4m3" and data["scale_block"] == 16 and data["k"] == 64
    assert all(len(v["scale_a"]) == 4 == len(v["scale_b"]) for v in data["vectors"])
    back = read_plan(path)
    assert back.vectors == plan.vectors and back.scale_block == 16
    assert all(len(v.sa) == 4 for v in back.vectors)
    vs = read_vectors(path)          # a vectors file for tcsmt harness
    assert vs.scale_block == 16 and [list(s) for s in vs.scales[0]] == [list(plan.vectors[0].sa),
                                                                          list(plan.vectors[0].sb)]


def test_scaled_plan_branches_are_the_hypotheses_outputs(scaled):
    """Every branch of the tree is the d its classes' first member gives on
    the node's vector with the vector's scales."""
    _, plan = scaled
    models = plan.models()

    def check(node, classes):
        if "class" in node:
            return
        v = plan.vectors[node["vector"]]
        for h, child in node["outputs"].items():
            from tcsmt.identify.narrow import classes_under
            for j in classes_under(child):
                m = models[plan.classes[j].members[0]]
                assert plan.fout.hex(dot_bits(m, list(v.a), list(v.b), v.c, *v.scales())) == h
            check(child, classes)
    check(plan.tree, None)


@pytest.mark.parametrize("model", ["blackwell-nvfp4", "rtx-blackwell-nvfp4"])
def test_scaled_observations_identify_the_model(scaled, model, tmp_path):
    """The probe's output (simulated: the model's d on the plan's vectors,
    with their scales) leaves the class that holds the model's values."""
    path, plan = scaled
    data = simulated_observations(path, model, instruction="tcgen05")
    assert all("scale_a" in row for row in data["observations"])
    obs = parse_observations(json.loads(json.dumps(data)))
    res = identify(obs, plan.space, plan)
    p = choose(model)
    names = {plan.models()[i].name for i in res.consistent}
    assert res.verdict == "identified" and f"group_size=16,align_bits=12,zero_sign={p.zero_sign}" in names
    rec = run_sim(model, None, plan, prove=False, confirm=False)
    assert rec["check"]["phase1_class_holds_unit"] and rec["check"]["outside_the_space"] == {}, rec
    assert all("scale_a" in s for s in rec["phase1"]["steps"])


def test_a_wrong_scale_is_seen(scaled):
    """Changing one scale of one observed row changes what is consistent:
    the scales are read, not dropped."""
    path, plan = scaled
    data = simulated_observations(path, "blackwell-nvfp4", instruction="tcgen05")
    rows = data["observations"]
    p = choose("blackwell-nvfp4")
    for row in rows:     # the first row whose d moves when scale_a[0] doubles
        sa = [int(x, 16) for x in row["scale_a"]]
        new = [sa[0] + (1 << p.fscale.frac_bits)] + sa[1:]
        if p.fscale.classify(new[0]) == "nan":
            continue
        d = dot_bits(p, [int(x, 16) for x in row["a"]], [int(x, 16) for x in row["b"]],
                     int(row["c"], 16), new, [int(x, 16) for x in row["scale_b"]])
        if p.fout.hex(d) != row["d"]:
            row["scale_a"] = [p.fscale.hex(x) for x in new]
            break
    else:
        pytest.fail("no row's d depends on its first scale")
    res = identify(parse_observations(data), plan.space, plan)
    assert res.verdict == "none"


def test_scaled_space_evaluation_equals_the_batch_simulator():
    """The NVFP4 space's hypotheses run together (one shared graph, scales
    as inputs) give dot_batch's bits for each alone."""
    space = scaled_space("e2m1:fp32", "ue4m3/16")
    models = space.models()[::37]
    p = models[0]
    a, b, c = candidate_vectors(p.fin, p.fc, 64, Domain(), 120, seed=3)
    sa = candidate_scales(p.fscale, a.shape[0], 4, seed=1)
    sb = candidate_scales(p.fscale, a.shape[0], 4, seed=2)
    ev = evaluate(models, a, b, c, workers=1, sa=sa, sb=sb)
    assert not ev.unsupported
    for i, m in enumerate(models):
        assert np.array_equal(ev.outputs[i], dot_batch(m, a, b, c, sa_bits=sa, sb_bits=sb)), m.name


def test_evaluation_refuses_models_with_other_scales():
    ms = [choose("blackwell-nvfp4"), choose("blackwell-mxf4nvf4-b16")]
    a = np.zeros((1, 64), dtype=np.uint64)
    with pytest.raises(UserError, match="share their formats and scales"):
        evaluate(ms, a, a, np.zeros(1, dtype=np.uint64), sa=np.zeros((1, 4)), sb=np.zeros((1, 4)))
    with pytest.raises(UserError, match="give the scales"):
        evaluate(ms[:1], a, a, np.zeros(1, dtype=np.uint64))


def test_scales_option_is_checked():
    with pytest.raises(UserError, match="FORMAT/BLOCK"):
        space_for("e2m1:fp32", None, "ue4m3")
    with pytest.raises(UserError, match="no identification space"):
        space_for("e2m1:fp32", None, "ue8m0/32")


@pytest.mark.parametrize("witnesses", [50, 3])
def test_witness_outputs_skip_twins_and_equal_a_full_run(witnesses):
    """The solver search runs its witnesses on one hypothesis per circuit of
    an open class and copies the result to the twins: the same outputs as
    running every member (through the batch simulator, and for a few
    witnesses the scalar interpreter)."""
    axes = {"block_size": [8, 16, 32], "chaining": ["recursive", "separate"],
            "final_rounding": ["rz", "rne"]}
    models = Space(neutral_base("fp16:fp32"), axes).models()
    a, b, c = candidate_vectors(models[0].fin, models[0].fc, 16, Domain(), 200, seed=4)
    ev = evaluate(models, a[:150], b[:150], c[:150], workers=1)
    rest = evaluate(models, a[150:], b[150:], c[150:], workers=1).outputs
    apart = [150 + n for n in np.nonzero((rest != rest[0][None, :]).any(axis=0))[0]]
    rows = (apart + [n for n in range(150, 200) if n not in apart])[:witnesses]   # splitting first
    from tcsmt.identify.classes import PlanClass
    from tcsmt.search.vectors import Vector
    search = Search(models, ev.shape, 16, Domain(), 0.0, None)
    open_class = search.mark(PlanClass(list(range(len(models)))))
    assert open_class.status == "open" and len(search.circuits(open_class.members)) < len(models)
    vecs = [Vector(tuple(int(x) for x in a[n]), tuple(int(x) for x in b[n]), int(c[n])) for n in rows]
    got = search.outputs_on(vecs, [open_class])
    want = evaluate(models, a[rows], b[rows], c[rows], workers=1).outputs
    assert len(set(map(bytes, want))) > 1      # the witnesses tell some members apart
    assert np.array_equal(got, want)


def _pool_space():
    """A small fp16 space and its outputs on 12 candidates (classes left open
    for the fresh pools of Search.simulate)."""
    axes = {"block_size": [4, 16], "align_bits": [0, 1, 2], "final_rounding": ["rz", "rne"],
            "chaining": ["recursive", "separate"]}
    models = Space(neutral_base("fp16:fp32"), axes).models()
    a, b, c = candidate_vectors(models[0].fin, models[0].fc, 16, Domain(), 12, seed=4)
    return models, evaluate(models, a, b, c, workers=1)


def _pool_search(models, ev):
    from tcsmt.identify.classes import PlanClass, classes_of
    search = Search(models, ev.shape, 16, Domain(), 0.0, None)
    return search, [search.mark(PlanClass(g)) for g in classes_of(ev.outputs, list(range(len(models))))]


def test_fresh_pools_evaluated_together_find_the_rows_each_pool_finds_alone(monkeypatch):
    """Search.simulate evaluates several pools at once: the same rows, pools
    and vectors as one pool at a time."""
    import tcsmt.identify.plansearch as PS
    models, ev = _pool_space()
    runs = {}
    for group in (1, 4):
        monkeypatch.setattr(PS, "POOL_GROUP", group)
        search, classes = _pool_search(models, ev)
        assert any(cl.status == "open" for cl in classes)
        found, known = search.simulate(classes)
        runs[group] = ([repr(v) for v in found], {k: v for k, v in search.simulation.items()
                                                 if k != "seconds"})
        # the pools' own outputs on the rows found are what running them again gives
        assert known and np.array_equal(search.outputs_on(found, classes, known),
                                        search.outputs_on(found, classes))
    assert runs[1] == runs[4]
    assert runs[1][0]                            # the pools split some class


def test_open_classes_are_ranked_for_proofs_only_while_the_budget_reaches_them():
    """Search.prove_open: the classes of the published readings first, then
    the others by how far their circuits part (``apart``, which traces every
    circuit); once the budget is spent on the first group, the others are
    never traced."""
    from tcsmt.identify.classes import PlanClass
    axes = {"block_size": [4, 16], "final_rounding": ["rz", "rne"], "chaining": ["recursive", "separate"]}
    models = Space(neutral_base("fp16:fp32"), axes).models()
    classes = [PlanClass([i, i + 1], status="open") for i in range(0, len(models), 2)]
    search = Search(models, np.arange(len(models)), 16, Domain(), 100.0, None, first={4})
    ranked, tried = [], []
    search.aparts = lambda group: [ranked.append(cl.members[0]) or -cl.members[0] for cl in group]
    search.prove = lambda cl: tried.append(cl.members[0]) or True
    search.prove_open(classes)
    assert tried == [4] + sorted((c.members[0] for c in classes if c.members[0] != 4), reverse=True)

    ranked.clear()
    tried.clear()
    def spend(cl):
        tried.append(cl.members[0])
        search.spent = search.budget
        return True
    search.spent, search.prove = 0.0, spend
    search.prove_open(classes)
    assert tried == [4] and ranked == [4]


def test_classes_ranked_in_jobs_part_as_each_class_traced_alone():
    """Search.aparts (runs of classes as jobs of the runner) gives each
    class's ``apart``: the nodes its circuits do not share, traced alone."""
    from tcsmt.identify.classes import PlanClass
    from tcsmt.sim.evaluate import neighbour_runs
    axes = {"block_size": [4, 8, 16], "align_bits": [0, 1, 2, 3], "final_rounding": ["rz", "rne", "ru", "rd"],
            "chaining": ["recursive", "separate"]}
    models = Space(neutral_base("fp16:fp32"), axes).models()
    n = len(models)
    classes = [PlanClass([i, (i + 1) % n], status="open") for i in range(n)]
    search = Search(models, np.arange(n), 16, Domain(), 100.0, None)
    want = [search.apart(cl) for cl in classes]
    assert len(set(want)) > 1
    assert len(neighbour_runs(len(classes))) > 1          # more than one job
    for workers in ("1", "2"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("TCSMT_WORKERS", workers)
            assert search.aparts(classes) == want


# ---------------------------------------------------------------------------
# The committed fp8 and NVFP4 plans
# ---------------------------------------------------------------------------

_PLANS: dict = {}


def committed(formats: str, scales: str | None = None):
    key = (formats, scales)
    if key not in _PLANS:
        path = committed_plan(formats, scales)
        if path is None:
            pytest.skip(f"no committed plan for {formats} {scales or ''}")
        _PLANS[key] = read_plan(path)
    return _PLANS[key]


def test_committed_nvfp4_plan_covers_its_space():
    plan = committed("e2m1:fp32", "ue4m3/16")
    assert plan.space.digest() == scaled_space("e2m1:fp32", "ue4m3/16").digest()
    assert sorted(i for cl in plan.classes for i in cl.members) == list(range(plan.space.size))
    assert plan.scale_block == 16 and plan.k == 64


@pytest.mark.parametrize("model", ["blackwell-nvfp4", "blackwell-nvfp4-sftensor"])
def test_sim_recovers_both_nvfp4_readings(model):
    """The default (MMA-Sim's reading) and the sf-tensor reading each end in
    the class that holds their own values."""
    plan = committed("e2m1:fp32", "ue4m3/16")
    rec = run_sim(model, None, plan, prove=False, confirm=False)
    c = rec["check"]
    assert c["phase1_class_holds_unit"] and c["outside_the_space"] == {}, c
    assert rec["phase1"]["runs"] <= plan.stats["worst_case_runs"]
    part = "largest:" if model == "blackwell-nvfp4" else "raw-window:"
    assert c["space_hypothesis"].startswith(part)


def test_committed_nvfp4_plan_proves_the_sftensor_class():
    """The sf-tensor reading's class in the committed plan holds only
    align_bits 16 and 17 (groups of 4 split off by the fresh pools) and is
    proved one function on the plan's domain: a sweeping proof whose every
    lemma two solvers found UNSAT. With 35 bits below the largest scale
    pair, R - F never sets the window for F = 39 or 40 (a raw product lies
    at most 4 above its scale pair), so both build one circuit but for q."""
    plan = committed("e2m1:fp32", "ue4m3/16")
    models = plan.models()
    p = choose("blackwell-nvfp4-sftensor")
    keys = ("group_size", "c_group_size", "scale_window_bits", "zero_sign")
    (cl,) = [cl for cl in plan.classes if any(
        all(getattr(models[i], x) == getattr(p, x) for x in keys + ("align_bits",)) for i in cl.members)]
    assert sorted(models[i].align_bits for i in cl.members) == [16, 17]
    assert all(getattr(models[i], x) == getattr(p, x) for i in cl.members for x in keys)
    assert cl.status == "proved" and len(cl.proved_by) >= 2, cl
    assert [part["method"] for part in cl.proof] == ["sweep"] and cl.proof[0]["verdict"] == "unsat"
    assert len(cl.proof[0]["proved_by"]) >= 2 and cl.proof[0]["lemmas"] >= 1


def test_sim_recovers_the_sftensor_reading_proved():
    """identify --device sim on the sf-tensor reading ends "recovered": the
    class it ends in is the plan's proved one (no solver asked again) and
    the unit builds the very circuit of its hypothesis."""
    plan = committed("e2m1:fp32", "ue4m3/16")
    rec = run_sim("blackwell-nvfp4-sftensor", None, plan, prove=True, timeout=60, confirm=False)
    c = rec["check"]
    assert c["phase1_verdict"] == "recovered", c
    assert c["class_proof"]["found_by"] == "the plan" and len(c["class_proof"]["proved_by"]) >= 2


def test_register_keeps_only_the_bits_its_terms_reach():
    """The window's register keeps K = max(Fc, Fs, min(F, Fs + E)) bits
    above the quantum (E = 4 for e2m1 x e2m1): 39 for the shipped reading
    (F = 39), and 39 for F = 40 too, where R - F never sets q."""
    from tcsmt.datapath.window import register_fraction_bits
    p = choose("blackwell-nvfp4-sftensor")
    assert register_fraction_bits(p) == 39 == register_fraction_bits(p.replace(align_bits=17))
    assert register_fraction_bits(p.replace(align_bits=15)) == 38
    assert register_fraction_bits(p.replace(scale_window_bits=37, align_bits=17)) == 40


def test_committed_fp8_plan_covers_its_space():
    plan = committed("e4m3:fp32")
    assert plan.space.digest() == identification_space("e4m3:fp32").digest()
    assert sorted(i for cl in plan.classes for i in cl.members) == list(range(plan.space.size))


@pytest.mark.parametrize("arch", FP8_DEFAULTS)
def test_sim_recovers_the_fp8_defaults(arch):
    plan = committed("e4m3:fp32")
    rec = run_sim(arch, "e4m3:fp32", plan, prove=False, confirm=False)
    assert rec["check"]["phase1_class_holds_unit"], rec["check"]
    assert rec["phase1"]["runs"] <= plan.stats["worst_case_runs"]


@pytest.mark.parametrize("arch", FP8_DEFAULTS)
def test_sim_proves_the_fp8_defaults(arch):
    """With the proofs: the class is one circuit, and the device's floor
    (min_exponent, which the space does not vary) changes nothing on the
    plan's domain, by two solvers."""
    plan = committed("e4m3:fp32")
    rec = run_sim(arch, "e4m3:fp32", plan, prove=True, timeout=300, confirm=False)
    assert rec["check"]["phase1_verdict"] == "recovered", rec["check"]
    lemmas = rec["check"]["unit_proof"]["lemmas"]
    assert [lem["parameter"] for lem in lemmas] == ["min_exponent"]
    assert lemmas[0]["verdict"] == "unsat" and len(lemmas[0]["proved_by"]) >= 2


def test_plan_name_carries_the_scales():
    from tcsmt.identify.plan import space_plan_name
    assert space_plan_name(choose("blackwell-nvfp4")) == "e2m1-fp32-ue4m3x16.json"
    assert space_plan_name(choose("hopper-e4m3-fp32")) == "e4m3-fp32.json"
    assert Path(str(committed_plan("fp16:fp32"))).name == "fp16-fp32.json"


def test_probe_of_a_scaled_plan_carries_the_scales(scaled, tmp_path):
    """tcsmt harness on a scaled plan writes a tcgen05 block-scaled probe
    whose vectors hold the plan's scales."""
    from tcsmt.probes.harness import write_probe
    path, plan = scaled
    ins, count = write_probe(path, tmp_path / "probe.cu", "tcgen05")
    src = (tmp_path / "probe.cu").read_text()
    assert "kind::mxf4nvf4" in ins.name and count == len(plan.vectors)
    assert "block_scale" in src and "scale_vec::4X" in src


def test_window_rows_reach_the_window_below_the_largest_term():
    """The aimed rows tell apart windows of 35 and 33 fraction bits below
    the largest term (MMA-Sim's NVFP4 reading and align_bits 10); every
    scale is positive."""
    from tcsmt.search.candidates import window_rows
    p = choose("blackwell-nvfp4")
    a, b, c, sa, sb = window_rows(p.fin, p.fb, p.fc, p.fscale, 16, 64, 200, seed=9)
    assert all(p.fscale.value(int(x)) > 0 for x in np.concatenate([sa.ravel(), sb.ravel()]))
    q = p.replace(align_bits=10)
    d1, d2 = (dot_batch(m, a, b, c, sa_bits=sa, sb_bits=sb) for m in (p, q))
    assert (d1 != d2).sum() >= 3


def test_plan_classes_apart_only_in_a_moot_floor_are_proved_by_the_lemma():
    """Search.settle: a class whose hypotheses differ only in min_exponent
    is proved when the floor lemma (UNSAT by two solvers) shows the floor
    moot on the plan's domain and the hypotheses without it build one
    circuit; its proof keeps each lemma's solvers and formula digests. A
    floor the lemma does not prove moot (-10: groups of scaled products lie
    below it) leaves its class open."""
    from tcsmt.identify.classes import PlanClass
    from tcsmt.identify.plan import plan_domain
    base = choose("blackwell-nvfp4").replace(group_size=4)
    models = [base, base.replace(min_exponent=None), base.replace(min_exponent=-10),
              base.replace(min_exponent=None, final_rounding="rne")]
    search = Search(models, np.arange(len(models)), 64, plan_domain(base.fin, base.fout), 600.0, None)
    moot, acting = PlanClass([0, 1], "open"), PlanClass([2, 3], "open")
    search.settle([moot, acting])
    assert moot.status == "proved" and len(moot.proved_by) >= 2
    (proof,) = moot.proof
    assert proof["method"] == "floor lemma" and proof["same_circuit"] is True
    (lem,) = proof["lemmas"]
    assert lem["hypothesis"] == base.name and lem["value"] == -139 and len(lem["sha256"][0]) == 64
    assert acting.status == "open" and not acting.proof
    assert search.counts["proved_by_lemmas"] == 1


def test_committed_floor_lemma_proofs_are_the_formulas_the_code_asks():
    """Every class of the committed NVFP4 plan proved by the floor lemma
    names, for each floored hypothesis, the sha256 of the formulas
    tcsmt.identify.lemmas.floor_formula builds for it today (so the proof
    can be asked again of any SMT-LIB solver), solvers two at least."""
    from tcsmt.identify.lemmas import c_formats, floor_formula
    plan = committed("e2m1:fp32", "ue4m3/16")
    by_name = {m.name: m for m in plan.models()}
    proofs = [cl.proof[0] for cl in plan.classes if cl.proof and cl.proof[0]["method"] == "floor lemma"]
    assert len(proofs) >= 100
    for proof in proofs[::25]:
        assert len(proof["proved_by"]) >= 2 and proof["same_circuit"] is True
        for lem in proof["lemmas"]:
            p = by_name[lem["hypothesis"]]
            assert lem["value"] == p.min_exponent and len(lem["proved_by"]) >= 2
            assert lem["sha256"] == [floor_formula(p, plan.k, plan.domain, cf).sha256
                                     for cf in c_formats(p, plan.k)]


def test_pools_drawn_grow_as_the_open_circuits_shrink(monkeypatch):
    """A search draws simsplit's POOLS fresh pools, and more while the open
    circuits times the rows drawn stay under POOL_HYPOTHESIS_ROWS, up to
    MAX_POOLS: the fp8 space's 10802 circuits get 8 pools, a class of a
    few circuits up to 64."""
    import tcsmt.identify.plansearch as PS
    import tcsmt.identify.simsplit as SS
    assert PS.pool_limit(10802) == SS.POOLS == 8
    assert PS.pool_limit(1000) == PS.POOL_HYPOTHESIS_ROWS // (1000 * SS.ROWS) == 10
    assert PS.pool_limit(4) == PS.pool_limit(1) == PS.MAX_POOLS == 64
    models, ev = _pool_space()
    drawn = {}
    for limit in (1, 3):
        monkeypatch.setattr(SS, "POOLS", 1)
        monkeypatch.setattr(SS, "ROWS", 6)
        monkeypatch.setattr(PS, "MAX_POOLS", limit)
        search, classes = _pool_search(models, ev)
        found, _ = search.simulate(classes)
        drawn[limit] = (search.simulation["pools"], len(found))
        # a second call (after the floor lemma) keeps the search's pools in all within the limit
        search.simulate(classes)
        assert drawn[limit][0] <= search.simulation["pools"] <= limit
    assert drawn[1][0] == 1 and drawn[3][0] > 1 and drawn[3][1] > drawn[1][1]


def test_committed_nvfp4_plan_leaves_no_class_open():
    """Built with --solver-budget 4500: the sweeps prove every class of the
    sf-tensor reading whose hypotheses differ in align_bits alone (R - F
    never sets the window's quantum there), each with two solvers' proofs;
    the classes apart in group_size and c_group_size alone, where no group
    can be cut (window.grouping_is_moot), build one circuit; none is open."""
    plan = committed("e2m1:fp32", "ue4m3/16")
    models = plan.models()

    def apart(cl):
        keys = models[cl.members[0]].parameter_dict()
        return {k for k in keys if len({str(getattr(models[i], k)) for i in cl.members}) > 1}
    assert not [cl for cl in plan.classes if cl.status == "open"]
    grouped = [cl for cl in plan.classes if apart(cl) == {"group_size", "c_group_size"}]
    assert len(grouped) == 4 and all(cl.status == "identical" and len(cl.members) == 3 for cl in grouped)
    swept = [cl for cl in plan.classes if cl.status == "proved" and apart(cl) == {"align_bits"}]
    assert len(swept) >= 8 and all(len(cl.proved_by) >= 2 for cl in swept)


def _window_hypotheses():
    """sf-tensor's reading of NVFP4 in the committed plan's space (groups of
    4 or 16 products, c's groups of 16 or the same, 33 to 37 fraction bits
    below the largest scale pair, 38 to 40 below the largest raw product)."""
    space = read_plan(committed_plan("e2m1:fp32", scales="ue4m3/16")).space
    return [m for m in space.models() if m.scale_window_bits is not None]


def test_window_grouping_is_moot_where_the_solvers_prove_no_group_is_cut():
    """window.grouping_is_moot holds for the members with 40 bits below the
    largest raw product (align_bits 17) and 36 or 37 below the largest
    scale pair, and there the group lemma (a non-zero group of 4 or of 16
    products loses a bit to the quantum while c does not dominate, on the
    plan's block of 64) is UNSAT by Bitwuzla and by Z3; one bit short
    (align_bits 16, or 35 bits) it is SAT, so the rule is tight there."""
    from tcsmt.datapath.window import grouping_is_moot
    from tcsmt.identify.lemmas import group_cut_formula
    from tcsmt.smt import service
    members = _window_hypotheses()
    moot = {(m.align_bits, m.scale_window_bits) for m in members if grouping_is_moot(m)}
    assert moot == {(17, 36), (17, 37)}
    near = {(17, 35), (16, 36)}
    for m in members:
        key = (m.align_bits, m.scale_window_bits)
        if key not in moot | near or m.group_size != 4 or m.c_group_size != 16 or m.zero_sign != "keep_c":
            continue
        for size in (4, 16):
            f = group_cut_formula(m, 64, size)
            verdicts = {str(service.solve(f, s, 120).status) for s in ("bitwuzla", "z3")}
            assert verdicts == ({"unsat"} if key in moot else {"sat"}), (key, size, verdicts)
        moot.discard(key)
        near.discard(key)
    assert not moot and not near


def test_moot_groupings_build_one_circuit_and_sum_as_the_grouped_ones(monkeypatch):
    """Groups of 4 with c's groups of 16, groups of 16, and groups of 16
    with c's of 16 build one circuit where no group can be cut (so the
    plan's class of the three is "identical", not open); groups of 4 for c
    too still differ. With the rule switched off (each grouping as its
    parameters say) the three give the same bits on the plan's candidate
    rows and on pools of rows aimed at the window."""
    import tcsmt.datapath.window as window
    from tcsmt.identify.lemmas import same_circuit
    from tcsmt.identify.plan import plan_candidates
    from tcsmt.identify.simsplit import pool
    base = choose("blackwell-nvfp4-sftensor").replace(align_bits=17, scale_window_bits=36)
    three = [base, base.replace(group_size=16, c_group_size=None), base.replace(group_size=16)]
    assert all(same_circuit(three[0], m, 64) for m in three[1:])
    assert not same_circuit(three[0], base.replace(c_group_size=None), 64)
    rows = [plan_candidates(base, 64, Domain(), 2000, 0)] + \
        [pool(base, 64, Domain(), 2000, seed) for seed in (100, 101)]

    def outputs(m):
        return np.concatenate([dot_batch(m, a, b, c, sa_bits=sa, sb_bits=sb) for a, b, c, sa, sb in rows])
    moot = outputs(base)
    monkeypatch.setattr(window, "grouping_is_moot", lambda p: False)
    assert not same_circuit(three[0], three[1], 64)
    for m in three:
        assert np.array_equal(outputs(m), moot), m
