"""Blind identification (tcsmt identify --device): units one and two
parameters away from shipped models, none of them shipped, played by model
files the loop never reads (it runs rows on them and reads d back); the
model file it writes is proved equivalent to the unit by tcsmt equiv. A
unit nothing explains ends "unexplained" with the rows.

Each unit costs a minute or two on two free cores (the plan's search, a
search over the models one and two parameters around the shipped ones,
property vectors asked of the solvers, rivals split or settled): one runs
by default, the others are marked slow.
"""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import numpy as np
import pytest
from cli_run import script

from tcsmt.identify.blind import identify_blind
from tcsmt.identify.loop import ModelDevice
from tcsmt.identify.neighbours import differs, first_floor, neighbours
from tcsmt.identify.setting import shipped_like
from tcsmt.model.catalogue import all_models
from tcsmt.model.choose import choose
from tcsmt.observed.random_rows import random_rows
from tcsmt.sim.batch import dot_batch

ARITHMETIC = {"carry_bits", "align_bits", "min_exponent", "block_size", "product_rounding",
              "product_alignment", "zero_sign", "overflow", "subnormals", "final_rounding", "c_rounding",
              "align_rounding", "c_placement", "late_frac_bits", "chaining", "normalisation",
              "term_order", "product_overflow", "acc_format", "final_frac_bits"}


def test_moves_reach_every_parameter_that_changes_the_arithmetic():
    """From Hopper's fp16 model, one move changes each parameter the issue
    names (late c placement with the bits it needs), and every move gives
    a valid model that differs in what the move says and nothing else."""
    p = choose("hopper-fp16-fp32")
    moves = neighbours(p, 16)
    assert ARITHMETIC <= {k for change, _ in moves for k in change}
    for change, q in moves:
        assert differs(p, q) == change and change
    late = [c for c, _ in moves if c.get("c_placement") == "late"]
    assert late and all(isinstance(c["late_frac_bits"], int) for c in late)


def test_floors_below_the_first_that_can_act_change_nothing():
    """A floor of the alignment point at or below first_floor keeps every
    bit of every term: on random rows of every kind and on c alone at every
    exponent, such a floor gives what no floor gives, and the first floor
    above it does not always."""
    from tcsmt.identify.confirm import lone_rows
    for name in ("hopper-fp16-fp32", "hopper-bf16-fp32", "hopper-e4m3-fp32"):
        # zero results keep their sign, so that a floor far below the
        # output's reach shows (with every zero +0, as on Hopper's bf16,
        # such floors are not read at all: blocks.acting_floor)
        p = choose(name).replace(min_exponent=None, zero_sign="positive")
        k = p.block_size
        r = random_rows(p, k, 4000, seed=3)
        lone = lone_rows(p, k)
        a, b, c = (np.concatenate([x, y]) for x, y in ((r.a, lone.a), (r.b, lone.b), (r.c, lone.c)))
        free = dot_batch(p, a, b, c)
        f = first_floor(p)
        assert (dot_batch(p.replace(min_exponent=f - 1), a, b, c) == free).all(), name
        assert any((dot_batch(p.replace(min_exponent=f + d), a, b, c) != free).any() for d in range(8)), name


def test_floor_rows_split_the_floors_near_a_units_own():
    """Two floors of the alignment point that both act differ only in bits
    far below the output's last place, which one row of random inputs
    rarely shows (rtx-blackwell's bf16 model with a floor of -140 for
    -133 passed every other row): floor_rows and cut_rows tell each floor
    a unit may hold apart from the model's own, where both act on bf16 and
    tf32 products (fp16 products lie above every such floor, which the
    floor lemma settles instead), and cut_rows alone tell a floor that
    acts above the output's last place from none."""
    from tcsmt.identify.confirm import cut_rows, floor_rows
    from tcsmt.identify.device import concat
    from tcsmt.identify.neighbours import values
    for name in ("rtx-blackwell-bf16-fp32", "ampere-tf32-fp32"):
        p = choose(name)
        rows = concat(floor_rows(p, 16), cut_rows(p, 16))
        own = dot_batch(p, rows.a, rows.b, rows.c)
        lo = first_floor(p)
        near = [f for f in values(p, 16)["min_exponent"] if f is not None and f != p.min_exponent]
        assert near and min(near) <= p.min_exponent - 8
        for f in near:
            got = dot_batch(p.replace(min_exponent=f), rows.a, rows.b, rows.c)
            assert (got != own).any() or f < lo, (name, f)
        free = p.replace(min_exponent=None)
        cuts = cut_rows(free, 16)
        none = dot_batch(free, cuts.a, cuts.b, cuts.c)
        for f in range(p.min_exponent - 8, p.min_exponent + 9):
            assert (dot_batch(free.replace(min_exponent=f), cuts.a, cuts.b, cuts.c) != none).any(), (name, f)


def test_floor_rows_of_a_block_scaled_unit_scale_their_products_to_the_floor():
    """A block-scaled unit's floors lie far below its unscaled products
    (e2m3 x e4m3 products reach 2^-12, the floors -377 to -126 with e8m0
    scales): rtx-blackwell's MX e2m3 x e4m3 model with a floor of -278 was
    named with -133, as no pool row reached a floor. floor_rows and
    cut_rows now scale the products there: every floor from -160 to -121
    but the model's own -133 gives some other output on them."""
    from tcsmt.identify.confirm import cut_rows, floor_rows
    from tcsmt.identify.device import concat
    p = choose("rtx-blackwell-mxf8f6f4-e2m3-e4m3")
    rows = concat(floor_rows(p, 32), cut_rows(p, 32))
    assert rows.sa is not None and (rows.a != 0).sum() > 10000

    def run(q):
        return dot_batch(q, rows.a, rows.b, rows.c, sa_bits=rows.sa, sb_bits=rows.sb)
    own = run(p)
    same = [f for f in range(-160, -120) if (run(p.replace(min_exponent=f)) == own).all()]
    assert same == [p.min_exponent]



def test_cut_rows_tell_a_floor_that_acts_from_none():
    """A floor acts only where every term lies below it. sf-tensor's MX
    e2m1 x e5m2 unit with min_exponent = -151 was named with no floor: the
    cut rows put their bit at 2^(f - F), which both keep, and products up
    to 2^-150, above the floor. Rows whose products all lie below 2^f, with
    a bit at 2^(f - F - 1) that the floor drops and the products' own
    alignment keeps, tell -151 from no floor; floors whose block of 32
    terms below them cannot sum to half the output's last place (-155 and
    lower here) still give no other output on them."""
    from tcsmt.identify.confirm import cut_rows
    p = choose("blackwell-mxf8f6f4-e2m1-e5m2-sftensor")
    assert p.min_exponent is None
    rows = cut_rows(p, 32)

    def run(q):
        return dot_batch(q, rows.a, rows.b, rows.c, sa_bits=rows.sa, sb_bits=rows.sb)
    own = run(p)
    split = {f: int((run(p.replace(min_exponent=f)) != own).sum()) for f in (-160, -155, -151, -150)}
    assert split[-160] == split[-155] == 0 and split[-151] > 0 and split[-150] > 0

def _scaled_rows_below(p, top: int, n: int, k: int, seed: int):
    """Rows of a block-scaled model whose products (of random signs) lie
    below 2^top, down to 2^(top - F - 8): random a and b, one scale pair a
    row; c zero (either sign) in most rows."""
    from tcsmt.identify.confirm import _scale_powers
    pows = _scale_powers(p)
    rng = np.random.default_rng(seed)
    fa, fb = p.fin, p.fb
    a = rng.integers(0, 1 << fa.bits, (n, k)).astype(np.uint64)
    b = rng.integers(0, 1 << fb.bits, (n, k)).astype(np.uint64)
    finite = np.vectorize(lambda x, f: f.classify(int(x)) in ("zero", "subnormal", "normal"))
    a = np.where(finite(a, fa), a, 0).astype(np.uint64)
    b = np.where(finite(b, fb), b, 0).astype(np.uint64)
    high = fa.emax + fb.emax + 2                       # products lie below 2^high unscaled
    sa = np.zeros((n, p.scale_count(k)), dtype=np.uint64)
    sb = sa.copy()
    for i in range(n):
        shift = top - high - int(rng.integers(0, p.F + 8))
        ea = min(pows, key=lambda e: abs(shift / 2 - e))
        eb = min(pows, key=lambda e: abs(shift - ea - e))
        sa[i, :], sb[i, :] = pows[ea], pows[eb]
    c = np.where(rng.random(n) < 0.8, rng.integers(0, 2, n) << (p.fc.bits - 1),
                 rng.integers(0, 1 << 31, n)).astype(np.uint64)
    return a, b, c, sa, sb


def test_a_floor_below_what_reaches_the_output_is_not_read(monkeypatch):
    """A floor of the alignment point so low that every block it acts on
    sums to less than half the output's smallest subnormal (and to +0,
    zero results being all positive) changes no output: rtx-blackwell's MX
    e2m1 x e3m2 model with a floor of -207, played blind, was named with
    none (right) but equiv gave no answer in 300 s. Now such a floor and
    none build one circuit (blocks.acting_floor); with the rule switched
    off the floor gives what none gives on rows aimed below it, while a
    floor far enough above (-130) does not."""
    import tcsmt.datapath.blocks as blocks
    from tcsmt.identify.lemmas import same_circuit
    p = choose("rtx-blackwell-mxf8f6f4-e2m1-e3m2")
    free = p.replace(min_exponent=None)
    assert blocks.acting_floor(p) == p.min_exponent
    for f, moot in ((-150, False), (-157, False), (-158, True), (-207, True), (-377, True)):
        assert (blocks.acting_floor(p.replace(min_exponent=f)) is None) is moot
        assert same_circuit(p.replace(min_exponent=f), free, 32) is moot
    monkeypatch.setattr(blocks, "acting_floor", lambda q: q.min_exponent)
    assert not same_circuit(p.replace(min_exponent=-207), free, 32)
    for f, moot in ((-130, False), (-158, True), (-207, True)):
        a, b, c, sa, sb = _scaled_rows_below(p, f, 4000, 32, seed=-f)
        none = dot_batch(free, a, b, c, sa_bits=sa, sb_bits=sb)
        got = dot_batch(p.replace(min_exponent=f), a, b, c, sa_bits=sa, sb_bits=sb)
        assert bool((got != none).sum() == 0) is moot, f


def test_candidate_rows_of_mixed_formats_hold_b_in_its_own_format():
    """The rivals' pool of a unit with e3m2 a and e2m1 b held b in a's
    format (a unit played blind ended 'b holds 0x3e, not a float4_e2m1fn
    bit pattern'): candidate rows made in a's format take b's nearest value
    toward zero in b's format."""
    from tcsmt.search.candidates import candidate_vectors
    from tcsmt.search.domain import Domain
    p = choose("blackwell-e3m2-e2m1-fp16")
    a, b, c = candidate_vectors(p.fin, p.fc, 32, Domain(), 2000, 0, p.fb)
    assert a.shape == b.shape and a.shape[0] > 1000
    assert int(b.max()) < 1 << p.fb.bits and int(a.max()) >= 1 << p.fb.bits
    kinds = {p.fb.classify(int(x)) for x in b.ravel()}
    assert kinds == {"zero", "subnormal", "normal"}
    a1, b1, _ = candidate_vectors(p.fin, p.fc, 32, Domain(), 2000, 0)
    for x, y in zip(b1[:50].ravel(), b[:50].ravel()):      # the same rows, b converted
        v = p.fin.value(int(x))
        assert p.fb.value(int(y)) == (p.fb.value(p.fb.round_value(min(abs(v), p.fb.max_finite()), "rz"))
                                      * (-1 if v < 0 else 1))


class RandomDevice:
    """A unit that returns random bits: no model, no parameters."""

    name = "random bits"

    def __init__(self, seed: int):
        self.rng, self.calls = np.random.default_rng(seed), 0

    def run(self, rows):
        self.calls += 1
        return self.rng.integers(0, 1 << 32, len(rows.c), dtype=np.uint64)


def test_random_outputs_are_unexplained_with_the_rows():
    """A unit that returns random bits: nothing within two parameters of a
    known model explains it, and the verdict shows the rows the closest
    model tried misses, naming no shipped model."""
    dev = RandomDevice(5)
    p = choose("hopper-fp16-fp32")
    rec = identify_blind(dev, p, 16, None, shipped_like(p), prove=False)
    p2 = rec["phase2"]
    assert rec["verdict"] == "unexplained" and p2["rows"] and dev.calls >= 1
    assert all(r["d"] != r["closest_model_gives"] for r in p2["rows"])
    from tcsmt.identify.verdict import document, lines
    text = "\n".join(lines(document(rec)))
    assert "verdict: unexplained" in text
    assert not any(m.name in text for m in all_models())


def _cli(*args: str) -> subprocess.CompletedProcess:
    """The installed tcsmt command, as a user runs it."""
    return subprocess.run([script(), *args], capture_output=True, text=True)


def blind_unit(tmp_path: Path, base: str, changes: dict) -> tuple[str, dict, Path]:
    """Write the unit (base with changes) as a model file, identify it
    blind with --model-file, and prove the model written equivalent."""
    unit = tmp_path / "unit.toml"
    body = [f'base = "{base}"', 'name = "unit"']
    for key, v in changes.items():
        value = f'"{v}"' if isinstance(v, str) else ('"none"' if v is None else str(v))
        body += ["# source: a unit of this test", f"{key} = {value}"]
    unit.write_text("\n".join(body) + "\n")
    out = tmp_path / "out.toml"
    got = _cli("identify", "--device", f"sim:{unit}", "--model-file", str(out))
    assert got.returncode == 0, got.stdout + got.stderr
    assert "verdict: identified" in got.stdout and "the verdict is right" in got.stdout, got.stdout
    eq = _cli("equiv", str(out), str(unit), "-o", str(tmp_path / "equiv.json"))
    assert eq.returncode == 0, eq.stdout + eq.stderr
    return got.stdout, tomllib.loads(out.read_text()), out


def test_a_unit_one_parameter_away_is_identified_and_proved_equivalent(tmp_path):
    """Hopper's fp16 unit with two carry bits: both phases, then the model
    file (base = the shipped model, plus carry_bits with the rows it was
    read from) and tcsmt equiv on it and the unit: exit 0."""
    text, model, out = blind_unit(tmp_path, "hopper-fp16-fp32", {"carry_bits": 2})
    assert model["carry_bits"] == 2 and choose(model["base"]).carry_bits != 2
    assert set(model) == {"base", "name", "description", "carry_bits"}
    src = out.read_text()
    assert "# source: identified blind from" in src and "carry-bits vector" in src
    assert "phase 1, the plan's adaptive search" in text and "phase 2, confirmation" in text
    undecided = [x.strip() for x in text.splitlines() if x.strip().startswith("not ruled out")]
    assert [x[len("# undecided: "):] for x in src.splitlines() if x.startswith("# undecided: ")] == undecided


def test_the_check_asks_at_the_k_equiv_asks():
    """Volta's fp16 -> fp16 unit chained separately and Turing's m8n8k4 model
    chained separately agree on the rows of 16 products the unit was played
    at, yet differ on one block of 4 (a lone block sums c itself; Turing's
    zero is always +0), where tcsmt equiv asks: the check after the verdict
    asked only at 16 (600 s of solvers, undecided) while equiv found the
    witness; it now asks at 4 too, and says WRONG with the witness."""
    from tcsmt.identify.simdevice import check
    unit = choose("volta-fp16-fp16").replace(chaining="separate", name="unit")
    said = choose("turing-fp16-fp16-m8n8k4").replace(chaining="separate", name="said")
    rec = {"verdict": "identified", "phase2": {"model": said}, "k": 16}
    got = check(rec, unit, None, True, 60.0)
    assert got["right"] is False and got["k"] == 4, got
    w = got["witness"]
    a, b, c = [int(x, 16) for x in w["a"]], [int(x, 16) for x in w["b"]], int(w["c"], 16)
    from tcsmt.sim.dot import dot_bits
    assert dot_bits(unit, a, b, c) != dot_bits(said, a, b, c)
    same = choose("volta-fp16-fp16").replace(chaining="separate", carry_bits=None, name="same")
    assert check({**rec, "phase2": {"model": same}}, unit, None, True, 60.0)["right"] is True


def test_rows_are_kept_and_judged_at_every_k_run():
    """Rows run at a second k are kept apart (their own k in the document)
    and every model is judged on them: Volta's fp16 -> fp16 unit chained
    separately and Turing's m8n8k4 model chained separately agree on rows
    of 16 products and not on rows of 4."""
    from tcsmt.identify.confirm import random_probe
    from tcsmt.identify.device import Seen
    from tcsmt.identify.explain import explaining, missed
    unit = choose("volta-fp16-fp16").replace(chaining="separate", name="unit")
    said = choose("turing-fp16-fp16-m8n8k4").replace(chaining="separate", name="said")
    seen = Seen(ModelDevice(unit, "unit"), 16)
    seen.run_rows(*random_probe(unit, 16, 3), "at 16")
    assert explaining([unit, said], seen) == [0, 1]
    first = len(seen)
    seen.run_rows(*random_probe(unit, 4, 3), "at 4")
    seen.run_rows(*random_probe(unit, 16, 4), "at 16 again")
    assert seen.ks() == [16, 4] and len(seen) == 3 * first
    assert explaining([unit, said], seen) == [0]
    wrong = missed([said], seen)[0]
    assert len(wrong) and all(first <= r < 2 * first for r in wrong)
    f = unit
    row = seen.row_json(int(wrong[0]), (f.fin, f.fb, f.fc, f.fout, f.fscale))
    assert row["k"] == 4 and len(row["a"]) == 4 and row["origin"].startswith("random ")
    last = seen.row_json(len(seen) - 1, (f.fin, f.fb, f.fc, f.fout, f.fscale))
    assert last["k"] == 16 and len(last["a"]) == 16


def test_a_probe_refuses_rows_of_another_k(tmp_path):
    """A probe is written for one instruction: rows of another k are
    refused with one line naming it, never padded and run at its k."""
    import shutil

    from tcsmt.errors import UserError
    from tcsmt.identify.confirm import random_probe
    from tcsmt.identify.device import Seen
    from tcsmt.instructions.table import instruction_by_name
    from tcsmt.probes.device import ProbeDevice, parse_device_spec
    if shutil.which("nvcc") is None:
        pytest.skip("no CUDA compiler installed")
    ins = instruction_by_name("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
    with ProbeDevice(parse_device_spec("cuda-host:hopper"), ins, tmp_path / "obs.json") as dev:
        assert dev.refuses(16) is None
        assert ins.name in dev.refuses(4) and "k = 4" in dev.refuses(4)
        seen = Seen(dev, 16)
        with pytest.raises(UserError, match="k = 4"):
            seen.run_rows(*random_probe(choose("hopper-fp16-fp32"), 4, 1, 8), "at 4")
        assert len(seen) == 0


def test_rivals_at_a_k_the_probe_cannot_run_stay_undecided_with_the_reason(tmp_path):
    """Confirmation on a probe of k = 16 on sm_80: a rival that differs
    only at k = 4 is not split by rows padded to 16, and m8n8k4 is not run
    for it (nothing records that it computes there what m16n8k16 does:
    on Turing it runs Volta's datapath); it stays undecided, and the
    verdict says at which k and why, in one line."""
    import shutil

    from tcsmt.identify.blind import Confirmation
    from tcsmt.identify.device import Seen
    from tcsmt.identify.otherk import instruction_for_k
    from tcsmt.identify.verdict import _event, _settled_lines
    from tcsmt.instructions.table import instruction_by_name
    from tcsmt.probes.device import ProbeDevice, parse_device_spec
    if shutil.which("nvcc") is None:
        pytest.skip("no CUDA compiler installed")
    said = choose("turing-fp16-fp16-m8n8k4").replace(chaining="separate", name="said")
    rival = choose("volta-fp16-fp16").replace(chaining="separate", name="rival")
    ins = instruction_by_name("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16")
    with ProbeDevice(parse_device_spec("cuda-host:volta-fp16-fp16"), ins, tmp_path / "obs.json",
                     other_k=instruction_for_k) as dev:
        conf = Confirmation(Seen(dev, 16), [said], [said], said)
        assert conf._other_k(said, [rival]) is False and len(conf.seen) == 0
        assert conf._other_k(said, [rival]) is False and len(conf.events) == 1
    undecided = list(conf.settled.values())
    assert [u["k"] for u in undecided] == [4] and undecided[0]["verdict"] == "unknown"
    text = _settled_lines({"same_behaviour": [], "undecided": undecided})
    assert len(text) == 1 and text[0].startswith(
        "not ruled out at k = 4 (nothing records that mma.sync m8n8k4 (k = 4) computes on sm_80 what "
        "mma.sync m16n8k16 does")
    assert "differ only at k = 4, where the unit is not run: nothing records" in _event(conf.events[0])


@pytest.mark.parametrize("name", ["blackwell-nvfp4", "blackwell-mxf4"])
def test_property_vectors_of_a_block_scaled_model_get_scales_of_one(name):
    """A shipped block-scaled model's property vectors, fitted to the plan's
    k, take a scale of 1 for each block they lack: NVFP4's ue4m3 crashed
    (ValueError: a scale format has no rounding into it) before phase 2 ran."""
    from tcsmt.identify.confirm import fit, shipped_vectors
    from tcsmt.observed.vectors import scale_one
    from tcsmt.search.vectors import Vector
    p = choose(name)
    k = 2 * p.scale_block
    got = shipped_vectors(p, p, k)
    assert got, name
    assert all(len(v.a) == k and len(v.sa) == p.scale_count(k) for v, _ in got)
    one = fit(Vector((0,) * p.scale_block, (0,) * p.scale_block, 0, (), ()), k, p)
    assert one.sa == (scale_one(p.fscale),) * p.scale_count(k) == one.sb


UNITS = [
    ("hopper-fp16-fp32", {"carry_bits": 2, "zero_sign": "ieee"}),
    ("volta-fp16-fp32", {"final_rounding": "rne"}),
    ("ampere-fp16-fp32", {"block_size": 4, "subnormals": "flush"}),
    ("hopper-fp16-fp32", {"product_rounding": "in_format"}),
    ("hopper-bf16-fp32", {"min_exponent": -120}),
    ("ampere-bf16-fp32", {"align_rounding": "rne", "product_alignment": "normalised"}),
    ("hopper-tf32-fp32", {"overflow": "ieee", "align_bits": 3}),
    ("hopper-e4m3-fp32", {"align_bits": 1, "subnormals": "flush"}),
    ("cdna3-fp16-fp32", {"late_frac_bits": 29}),
    ("volta-fp16-fp16", {"chaining": "separate"}),
]


@pytest.mark.slow
@pytest.mark.parametrize("base,changes", UNITS, ids=[f"{b}:{','.join(c)}" for b, c in UNITS])
def test_units_one_and_two_parameters_away(tmp_path, base, changes):
    """Each unit ends identified with its own values for what it changes
    (or the very same circuit, where a changed parameter is not read), and
    the model file is proved equivalent to it."""
    from tcsmt.identify.lemmas import same_circuit
    _, model, _ = blind_unit(tmp_path, base, changes)
    written = choose(str(tmp_path / "out.toml"))
    unit = choose(str(tmp_path / "unit.toml"))
    if any(getattr(written, k) != v for k, v in changes.items()):
        same = all(same_circuit(unit, written, k) for k in (16, unit.block_size))
        assert same, (model, differs(unit, written))


def test_nearest_alignment_reads_no_product_alignment():
    """Rounding to nearest at the alignment aligns every term by its leading
    one, so product_alignment is not read: Ampere's bf16 unit with
    align_rounding = rne and normalised products is the very circuit of
    the one with raw products (the slow test's unit identified as
    ada-bf16-fp32 with align_rounding = rne, right, equiv exit 0), and with
    truncation it is not."""
    from tcsmt.identify.lemmas import same_circuit
    p = choose("ampere-bf16-fp32")
    for rounding, same in (("rne", True), ("truncate", False)):
        q = p.replace(align_rounding=rounding)
        assert same_circuit(q, q.replace(product_alignment="normalised"), 16) is same, rounding


def _small_e3m2_rows(p, n: int, k: int, seed: int):
    """Rows whose products, rounded to e3m2, are subnormal there (a and b
    of exponent field 1, 30% zeros) and whose c lies below them: fp32 c
    between 2**-35 and 2**-21, fp16 c of exponent field 0 to 3."""
    rng = np.random.default_rng(seed)
    sign, frac = rng.integers(0, 2, (2, n, k)), rng.integers(0, 4, (2, n, k))
    ab = np.where(rng.random((2, n, k)) < 0.3, 0, (sign << 5) | (1 << 2) | frac)
    cs = rng.integers(0, 2, n)
    if p.fc.bits == 32:
        c = (cs << 31) | ((127 + rng.integers(-35, -20, n)) << 23) | rng.integers(0, 1 << 23, n)
    else:
        c = (cs << 15) | (rng.integers(0, 4, n) << 10) | rng.integers(0, 1024, n)
    return ab[0], ab[1], c


def test_rounded_products_read_no_product_alignment_where_both_sums_are_exact(monkeypatch):
    """Products rounded to their input format align alike by exponent and by
    leading one where both block sums are exact (datapath.products.
    lead_is_moot): Blackwell's e3m2 x e3m2 unit with fp16 output, played
    blind with product_rounding = in_format and normalised products, was
    identified with raw ones and equiv gave no answer in 300 s; now the
    two build one circuit. The circuit aligned by the leading one anyway
    (the rule switched off) agrees with raw alignment on rows made to
    reach the difference (every product subnormal in e3m2, c below them),
    while the rows do tell the two apart where the rule refuses: fp32's c
    keeps bits below emin - F, and 2 carry bits wrap a block of 8 aligned
    by the leading one."""
    import tcsmt.datapath.products as products
    from tcsmt.identify.lemmas import same_circuit
    base = choose("blackwell-e3m2-fp16").replace(product_rounding="in_format")
    fp32 = choose("blackwell-e3m2-fp32").replace(product_rounding="in_format")
    wraps = base.replace(block_size=8, carry_bits=2)
    cases = [(base, 64, True), (base.replace(block_size=4, carry_bits=3), 8, True),
             (fp32, 64, False), (wraps, 16, False)]
    for p, k, moot in cases:
        lead = p.replace(product_alignment="normalised", name="lead")
        assert products.lead_is_moot(lead) is moot and same_circuit(p, lead, k) is moot, p.name
    monkeypatch.setattr(products, "lead_is_moot", lambda p: False)
    assert not same_circuit(base, base.replace(product_alignment="normalised"), 64)
    for p, k, moot in cases:
        a, b, c = _small_e3m2_rows(p, 20000, k, seed=k)
        if p is wraps:
            a, b = a & 0x1F, b & 0x1F                     # positive products: the sum grows
        raw = dot_batch(p, a, b, c)
        lead = dot_batch(p.replace(product_alignment="normalised", name="lead"), a, b, c)
        differ = int((raw != lead).sum())
        assert (differ == 0) is moot, (p.name, k, differ)


@pytest.mark.slow
def test_a_unit_three_parameters_away_is_not_given_a_shipped_name(tmp_path):
    """Four changes from Hopper's fp16 model: outside what the search
    reaches; the verdict names no shipped model as the unit."""
    p = choose("hopper-fp16-fp32").replace(block_size=4, align_bits=0, final_rounding="rne",
                                           subnormals="flush", name="far")
    rec = identify_blind(ModelDevice(p, "far"), p, 16, None, shipped_like(p), prove=False)
    if rec["verdict"] == "identified":       # something within two parameters reproduces every row
        assert rec["phase2"]["describe"] != rec["phase2"]["base"].name
    else:
        assert rec["verdict"] == "unexplained" and rec["phase2"]["rows"]


@pytest.mark.slow
def test_two_changes_that_fix_no_row_alone_are_found_together():
    """Blackwell's MX e4m3 model with 3 carry bits and nearest rounding: 3
    carry bits fix no missed row while the rounding is rz (each changes the
    rows the other does), so pairs of moves that each fix a row never held
    it and the unit ended unexplained; the moves that fix most are now
    followed by the moves that fix what they still miss."""
    from tcsmt.identify.confirm import random_probe, shipped_vectors
    from tcsmt.identify.device import Seen
    from tcsmt.identify.explain import Search
    from tcsmt.identify.loop import vector_rows
    base = choose("blackwell-mxf8f6f4-e4m3")
    k = 32
    unit = base.replace(carry_bits=3, final_rounding="rne", name="unit")
    seen = Seen(ModelDevice(unit, "unit"), k, base.scale_count(k))
    rows, why = random_probe(base, k, 7, 512)
    seen.run_rows(rows, why, "random")
    vs = shipped_vectors(base, base, k)
    seen.run_rows(vector_rows([v for v, _ in vs], k), [o for _, o in vs], "property vectors")
    found = Search(seen, [base], [base]).run()
    assert found and found[0].changes == {"carry_bits": 3, "final_rounding": "rne"}, found[:3]


def test_rivals_of_one_product_get_a_pool():
    """The pool that splits rivals at another k holds rows of every kind at
    k = 1 too (CDNA3's fp32 unit with separate chaining is split at k = 1;
    the carry rows once drew their products from an empty range there)."""
    from tcsmt.identify.confirm import split_pool
    from tcsmt.search.candidates import candidate_vectors
    from tcsmt.search.domain import Domain
    p = choose("cdna3-fp32")
    a, b, c = candidate_vectors(p.fin, p.fc, 1, Domain(), 400, 0)
    assert a.shape[1] == 1 and a.shape[0] >= 100 and len(c) == a.shape[0]
    rows, why = split_pool(p, 1, 0)
    assert rows.a.shape[1] == 1 and len(why) == rows.a.shape[0] > a.shape[0]


@pytest.mark.slow
def test_the_model_file_is_written_before_the_check_and_the_check_is_bounded(tmp_path, monkeypatch):
    """The verdict's model file is on disk before the check asks its
    solvers (a check stopped by the user loses no verdict), and the check
    of an identified unit asks them for CHECK_TIMEOUT at most, however long
    --timeout is."""
    from tcsmt import api
    from tcsmt.identify import simdevice
    out = tmp_path / "out.toml"
    seen: list = []

    def compare(m, truth, k, prove, timeout):
        seen.append((out.exists(), timeout))
        return {"right": True, "how": "recorded by the test", "differs": {}}
    monkeypatch.setattr(simdevice, "_compare", compare)
    doc = api.identify(device="sim:ampere-fp16-fp32", model_file=str(out), timeout=3600.0)
    assert doc["verdict"] == "identified" and doc["check"]["how"] == "recorded by the test"
    assert seen == [(True, simdevice.CHECK_TIMEOUT)]
    assert choose(str(out)).parameter_dict() == choose("ampere-fp16-fp32").parameter_dict()
