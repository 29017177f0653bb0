"""Monotonicity one step at a time, split at the alignment points and cut
at the block's sum (tcsmt.search.monotone_split). The value order of two
sums at two alignment points and the cases are checked on the Python-int
interpretation against plain arithmetic; the case tree covers every point
that differs; stepped free products obey what real products do; a small
truncating model is proved in parts (each part unsat by two solvers) and
its file restates; a model that loses value when c moves up its binade
has a part that is sat (the parts can fail)."""

import random
from dataclasses import replace

import pytest

from tcsmt.enums import Verdict
from tcsmt.errors import BadOption
from tcsmt.interp.ints import INT, IntWord
from tcsmt.model.choose import choose
from tcsmt.properties.registry import get_property
from tcsmt.regen.restate import restate_monotonicity
from tcsmt.report.documents import monotonicity_parts_document
from tcsmt.report.results import stable
from tcsmt.search import monotone_split as ms
from tcsmt.smt import abstraction, service
from tcsmt.smt.smtlib import build_formula


def _small(**changes):
    """RDNA4's fp16 datapath (pairs of products, one alignment bit, floor)
    with fp4 inputs and an fp8 c and output, k = 2."""
    return choose("rdna4-fp16-fp32").replace(
        **{"name": "rdna4-small", "in_format": "float4_e2m1fn", "c_format": "float8_e5m2",
           "out_format": "float8_e5m2", "acc_format": "float8_e5m2", "block_size": 2, "nan_bits": None,
           **changes})


def test_the_order_of_two_sums_at_two_points_is_the_order_of_their_values():
    rng = random.Random(7)
    w, ew = 9, 10
    for _ in range(3000):
        tx, ty = rng.randrange(-(1 << (w - 1)), 1 << (w - 1)), rng.randrange(-(1 << (w - 1)), 1 << (w - 1))
        ex = rng.randrange(-200, 200)
        ey = ex + rng.choice([0, 1, -1, 2, -2, 3, -5, 8, -9, 12, -14, 40, -60])
        got = ms.not_less(INT, IntWord(tx % (1 << w), w), IntWord(ty % (1 << w), w),
                          IntWord(ex % (1 << ew), ew), IntWord(ey % (1 << ew), ew)).b
        want = ty * 2 ** (ey - ex) >= tx if ey >= ex else ty >= tx * 2 ** (ex - ey)
        assert bool(got) == want, (tx, ty, ex, ey)
        e = IntWord(ex % (1 << ew), ew)     # one point (the "same" case): the words as they are
        same = ms.not_less(INT, IntWord(tx % (1 << w), w), IntWord(ty % (1 << w), w), e, e)
        assert bool(same.b) == (ty >= tx)


def test_the_five_cases_partition_the_differences():
    ew = 10
    for d in range(-20, 21):
        ex = IntWord(37 % (1 << ew), ew)
        ey = IntWord((37 + d) % (1 << ew), ew)
        held = [c for c in ms.CASES if all(x.b for x in ms.relation(INT, c, ey, ex))]
        assert len(held) == 1, (d, held)


def test_the_case_tree_gives_every_differing_point_a_case():
    p = choose("rdna4-fp16-fp32")
    # a0 moves a pair's point and the block's; c only the block's
    assert len(ms.case_lists(p, 4, "a0")) == 25
    assert len(ms.case_lists(p, 4, "c-up")) == 5
    for cases in ms.case_lists(p, 4, "a1"):
        s = ms.shape(p, 4, "a1", cases)
        assert not s.short and len(s.differing) == len(cases) == 2
    assert len(ms.shape(p, 4, "a1").points["x"]) == 3      # two pairs, then the block
    with pytest.raises(ValueError):
        ms.formula(p, 4, "a0", ("same",), "sum")             # leaves the block's point without a case


def test_only_one_block_of_the_block_register_applies():
    assert ms.applies(choose("rdna4-fp16-fp32"), 4)
    assert ms.applies(choose("blackwell-nvfp4"), 64)
    assert not ms.applies(choose("rdna4-fp16-fp32"), 32)       # more than one block
    assert ms.applies(choose("cdna3-fp16-fp32"), 8)            # c added late, to the products' sum
    assert not ms.applies(choose("cdna3-fp16-fp32"), 16)       # more than one block
    assert not ms.applies(choose("cdna1-fp16-fp32"), 4)        # exact sum
    assert not ms.applies(choose("cdna2-fp16-fp32"), 4)        # every addition rounded
    with pytest.raises(BadOption):
        ms.prove(choose("cdna1-fp16-fp32"), 4)


@pytest.mark.parametrize("u, u2, v", [(5, 6, 9), (2047, 1024, 1500), (3, 3, 0), (100, 7, 2047)])
def test_stepped_products_are_satisfied_by_the_real_products(u, u2, v):
    """The facts the free products get, with both products set to the real
    ones (11-bit factors in 22 bits): satisfiable, so no real pair is cut
    off (a fact false for them would make this UNSAT)."""
    def build(I):
        w = 22
        x, x2, y = I.var("x", w), I.var("x2", w), I.var("y", w)
        p, q = I.mul(x, y), I.mul(x2, y)
        return [I.eq(x, I.const(u, w)), I.eq(x2, I.const(u2, w)), I.eq(y, I.const(v, w)),
                I.eq(p, I.const(u * v, w)), I.eq(q, I.const(u2 * v, w))]
    f, hook = abstraction.free_products(build, hook=abstraction.SteppedProducts())
    assert len(hook.constraints) > 4
    assert service.solve(f, "bitwuzla", 60).status == "sat"


def test_stepped_products_know_a_step_of_one_factor():
    """Without a multiplier: x2 = x + 1 gives q = p + y, so q < p is UNSAT
    with the stepped facts and SAT with the plain free products."""
    def build(I):
        w = 22
        x, y = I.var("x", w), I.var("y", w)
        x2 = I.add(x, I.const(1, w))
        lim = I.const(1 << 10, w)
        top = I.const(1 << 11, w)
        return [I.ult(x, top), I.ult(x2, top), I.ult(y, top), I.ult(lim, x),
                I.ult(I.mul(x2, y), I.mul(x, y))]
    stepped, _ = abstraction.free_products(build, hook=abstraction.SteppedProducts())
    plain, _ = abstraction.free_products(build)
    assert service.solve(stepped, "bitwuzla", 60).status == "unsat"
    assert service.solve(plain, "bitwuzla", 60).status == "sat"
    assert build_formula(build).text.count("bvmul") == 2


def _scaled(I, zext: bool):
    """A group sum of 20 bits at x and a larger one at y, each times one
    4-bit scale significand in 24 bits (zero-extended to it, as
    tcsmt.datapath.scales multiplies, or full-width words)."""
    if zext:
        g, g2, s = I.var("g", 20), I.var("g2", 20), I.var("s", 4)
        g, g2, s = I.zext(g, 4), I.zext(g2, 4), I.zext(s, 20)
    else:
        g, g2, s = I.var("g", 24), I.var("g2", 24), I.var("s", 24)
    return [I.ule(g, g2), I.ult(I.mul(g2, s), I.mul(g, s))]


@pytest.mark.parametrize("zext, status", [(True, "unsat"), (False, "sat")])
def test_stepped_products_keep_their_order_through_a_scale_multiplier(zext, status):
    """A scale's significand times a group sum: factors of 4 and 20 bits in
    24, which never wrap, so g <= g2 gives g s <= g2 s (UNSAT that it
    falls); with full-width words nothing is known of their widths and
    nothing is claimed (SAT, the free words unbound)."""
    f, _ = abstraction.free_products(lambda I: _scaled(I, zext), hook=abstraction.SteppedProducts())
    assert service.solve(f, "bitwuzla", 60).status == status
    real = build_formula(lambda I: _scaled(I, True))
    assert service.solve(real, "bitwuzla", 60).status == "unsat"


@pytest.mark.parametrize("g, g2, v", [(5, 6, 9), ((1 << 20) - 1, (1 << 20) - 1, 15), (0, 1 << 19, 8)])
def test_stepped_facts_of_a_scale_multiplier_hold_for_its_real_products(g, g2, v):
    def build(I):
        x, x2, y = I.var("x", 20), I.var("x2", 20), I.var("y", 4)
        p, q = I.mul(I.zext(x, 4), I.zext(y, 20)), I.mul(I.zext(x2, 4), I.zext(y, 20))
        return [I.eq(x, I.const(g, 20)), I.eq(x2, I.const(g2, 20)), I.eq(y, I.const(v, 4)),
                I.eq(p, I.const(g * v, 24)), I.eq(q, I.const(g2 * v, 24))]
    f, _ = abstraction.free_products(build, hook=abstraction.SteppedProducts())
    assert service.solve(f, "bitwuzla", 60).status == "sat"


def test_a_model_that_loses_value_when_c_moves_up_has_a_sat_part():
    """Blackwell's fp4 datapath with no alignment bit (F = 23), k = 3: c
    stepping from 2^26 - 4 to 2^26 gains 4 and moves the alignment point
    up, so each product of 36 loses its 4. The sum part of that case is
    SAT, and the proof of c's steps ends unknown there."""
    f = ms.formula(_narrow(), 3, "c-up", ("+1",), "sum")
    assert service.solve(f, "bitwuzla", 60).status == "sat"


def _narrow():
    return choose("blackwell-e2m1-fp32").replace(name="e2m1-narrow", align_bits=0)


@pytest.mark.slow
def test_a_proof_ends_unknown_at_its_first_part_not_proved():
    proof = ms.prove(_narrow(), 3, budget=300, moves=["c-up"])
    assert proof.verdict == Verdict.UNKNOWN and proof.parts[-1].verdict == "sat"
    assert proof.parts[-1].what == ms.part_name("c-up", ("+1",), "sum")
    assert all(x.verdict == "unsat" for x in proof.parts[:-1])


@pytest.mark.slow
def test_a_small_truncating_model_is_proved_monotone_in_parts_and_its_file_restates():
    p = _small()
    prop = get_property("monotonicity")
    k = prop.k(p)
    assert k == 2
    heard = []
    proof = ms.prove(p, k, budget=120, progress=lambda *x: heard.append(x))
    assert proof.verdict == Verdict.UNSAT, [x.what for x in proof.parts if x.verdict != "unsat"]
    assert [x.what for x in proof.parts] == ms.part_names(p, k)
    n = len(proof.parts)       # progress heard of every part, the last call with all done
    assert [d for _, d, _ in heard] == list(range(n + 1)) and {t for _, _, t in heard} == {n}
    assert [name for name, _, _ in heard[:-1]] == ms.part_names(p, k) and heard[-1][0] == ""
    assert all(x.proved_by == ["bitwuzla", "boolector"] for x in proof.parts)
    doc = monotonicity_parts_document(prop, p, k, proof, 1.0, "test", ms)
    assert doc["query"]["method"] == ms.METHOD and doc["proof"]["cross_checked"]
    assert stable(restate_monotonicity(prop, p, "test", doc)) == stable(doc)
    doc["query"]["parts"][5]["verdict"] = "unknown"
    assert restate_monotonicity(prop, p, "test", doc)["verdict"] == Verdict.UNKNOWN


def _grouped():
    """Blackwell's MXF4 datapath (exact groups, ue8m0 scales, truncation)
    at k = 8: groups of 2, scale blocks of 4, an fp8 c and output."""
    return choose("blackwell-mxf4").replace(
        name="mxf4-small", block_size=8, group_size=2, scale_block=4, c_format="float8_e5m2",
        out_format="float8_e5m2", acc_format="float8_e5m2", min_exponent=None)


@pytest.mark.parametrize("name,k", [("blackwell-mxf4", 64), ("blackwell-nvfp4", 64), ("grouped", 8)])
def test_the_symmetries_take_every_product_to_the_last_one(name, k):
    """The permutations of the inputs, composed, reach k - 1 from every
    product; each keeps every product with its own scales; the register's
    swaps cover every neighbouring pair of its groups; only the last
    product's steps and c's are split into cases."""
    p = _grouped() if name == "grouped" else choose(name)
    parts = ms.symmetries(p, k)
    g, block = p.group_size, p.scaling()[1]
    perms = [x[2] for x in parts if x[0] in ("terms", "products")]
    for x in parts:
        if x[0] != "register":
            perm, sigma = x[2], (x[3] if x[0] == "terms" else list(range(k // block)))
            assert sorted(perm) == list(range(k))
            assert all(perm[t] // block == sigma[t // block] for t in range(k))
    assert sorted(x[2] for x in parts if x[0] == "register") == list(range(k // g - 1))
    seen, todo = {k - 1}, [k - 1]
    while todo:
        i = todo.pop()
        for perm in perms:
            if perm[i] not in seen:
                seen.add(perm[i])
                todo.append(perm[i])
    assert seen == set(range(k))
    assert ms.step_moves(p, k) == [f"a{k - 1}", f"b{k - 1}", "c-up", "c-zero"]
    assert all(ms.same_terms(p, k, *x[2:]) for x in parts if x[0] == "terms")


def test_models_that_sum_products_in_pairs_step_every_input():
    p = choose("rdna4-fp16-fp32")
    from tcsmt.search import monotone_steps
    assert ms.symmetries(p, 4) == [] and ms.step_moves(p, 4) == monotone_steps.moves(4)
    assert ms.symmetries(_grouped().replace(zero_sign="keep_c"), 8) == []
    assert ms.symmetries(_late(product_groups=2), 4) == []


def _late(**changes):
    """CDNA3's fp16 datapath (the products summed with one alignment bit,
    c added late, rounded down to late_frac_bits, then to nearest) with
    fp4 inputs, an fp8 c and output, F = 11 (an fp16 accumulator) and
    late_frac_bits 5, k = 4."""
    return choose("cdna3-fp16-fp32").replace(
        **{"name": "cdna3-small", "in_format": "float4_e2m1fn", "c_format": "float8_e5m2",
           "out_format": "float8_e5m2", "acc_format": "float16", "block_size": 4, "late_frac_bits": 5,
           **changes})


@pytest.mark.parametrize("name,k", [("cdna3-fp16-fp32", 8), ("late", 4)])
def test_ungrouped_products_are_walked_to_the_last_one_by_neighbour_swaps(name, k):
    """Without groups, every neighbour swap of the products is a part whose
    formula is the whole datapath on z and pi z (no register or
    no-solver part); composed, they reach k - 1 from every product."""
    p = _late() if name == "late" else choose(name)
    parts = ms.symmetries(p, k)
    assert [x[0] for x in parts] == ["products"] * (k - 1)
    for i, x in enumerate(parts):
        assert x[2] == list(range(i)) + [i + 1, i] + list(range(i + 2, k))
    assert ms.step_moves(p, k) == [f"a{k - 1}", f"b{k - 1}", "c-up", "c-zero"]
    assert not any(n.startswith("step a0") for n in ms.part_names(p, k))


def test_a_swap_of_products_in_two_interleaved_sums_is_no_symmetry():
    """With the products summed in two interleaved groups (CDNA3's fp8:
    even and odd products, each truncated against its own largest
    exponent), swapping products 0 and 1 moves each into the other sum:
    the outputs differ for some z (SAT). In one sum they do not (UNSAT)."""
    perm = [1, 0, 2, 3]
    fp8 = {"acc_format": "float8_e5m2"}           # F = 3: the sums truncate
    f = ms.symmetry_formula(_late(product_groups=2, **fp8), 4, ("products", "products 0 and 1 swapped", perm))
    assert service.solve(f, "bitwuzla", 60).status == "sat"
    f = ms.symmetry_formula(_late(**fp8), 4, ("products", "products 0 and 1 swapped", perm))
    assert service.solve(f, "bitwuzla", 60).status == "unsat"


def test_a_late_c_model_that_truncates_to_three_bits_is_not_monotone():
    """With F = 3 (an fp8 accumulator) the last product's step that moves
    the products' point up one place loses more of the others than it
    gains: that sum part is SAT, and the whole formula finds a pair that
    replays on the model (the split proof does not hide a real fault)."""
    from tcsmt.search.monotonic import check_witness, run_monotonicity
    p = _late(acc_format="float8_e5m2")
    f = ms.formula(p, 4, "a3", ("+1", "same"), "sum")
    assert service.solve(f, "bitwuzla", 60).status == "sat"
    out = run_monotonicity(p, 4, "bitwuzla", 60)
    assert out.verdict == Verdict.SAT
    dx, dy = check_witness(p, 4, *out.vectors)
    assert dx != dy


@pytest.mark.slow
def test_a_late_c_model_is_proved_monotone_by_neighbour_swaps_and_last_steps():
    proof = _proved(_late(), 4)
    swaps = [f"symmetry: products {i} and {i + 1} swapped" for i in range(3)]
    assert [x.what for x in proof.parts[:3]] == swaps
    assert all(x.proved_by == ["bitwuzla", "boolector"] for x in proof.parts)


def _proved(p, k: int):
    """The split proof of p at the monotonicity property's k (checked to
    be ``k``): unsat, its parts those ``part_names`` names, and its file
    cross-checked and restated as written."""
    prop = get_property("monotonicity")
    assert prop.k(p) == k
    proof = ms.prove(p, k, budget=300)
    assert proof.verdict == Verdict.UNSAT, [(x.what, x.verdict) for x in proof.parts if x.verdict != "unsat"]
    assert [x.what for x in proof.parts] == ms.part_names(p, k, {x.what: x.verdict for x in proof.parts})
    doc = monotonicity_parts_document(prop, p, k, proof, 1.0, "test", ms)
    assert doc["proof"]["cross_checked"]
    assert stable(restate_monotonicity(prop, p, "test", doc)) == stable(doc)
    return proof


def test_a_swap_across_two_groups_is_no_symmetry():
    """Products 5 and 6 lie in two groups of one scale block: swapped, the
    register gets other group sums (no check without a solver), and the
    two outputs differ for some z (the part is SAT), since each group is
    truncated on its own."""
    p = _grouped()
    perm = [0, 1, 2, 3, 4, 6, 5, 7]
    assert not ms.same_terms(p, 8, perm, [0, 1])
    f = ms.symmetry_formula(p, 8, ("products", "products 5 and 6 swapped", perm))
    assert service.solve(f, "bitwuzla", 60).status == "sat"
    f = ms.symmetry_formula(p, 8, ("products", "products 6 and 7 swapped", [0, 1, 2, 3, 4, 5, 7, 6]))
    assert service.solve(f, "bitwuzla", 60).status == "unsat"


@pytest.mark.slow
def test_a_grouped_model_is_proved_monotone_by_its_symmetries_and_last_steps():
    """46 parts: three swaps of the register's groups, the scale blocks and
    groups that give it the same terms (no solver), a swap of the last
    group's products, and the last product's and c's steps in cases."""
    proof = _proved(_grouped(), 8)
    unread = {x.what for x in proof.parts if x.verdict == "unread"}
    assert unread == {"symmetry: scale blocks 0 and 1 swapped", "symmetry: groups 2 and 3 swapped"}
    assert all(x.proved_by == ["bitwuzla", "boolector"] for x in proof.parts if x.verdict == "unsat")
    assert not any(x.what.startswith("step a0") for x in proof.parts)


COMMITTED = [("rdna4", 4, 420), ("blackwell-mxf4", 64, 60), ("blackwell-nvfp4", 64, 118), ("cdna3", 8, 334)]
"""The committed files proved by this method: architecture, k, parts."""


@pytest.mark.parametrize("arch,k,count", COMMITTED)
def test_a_committed_file_is_the_split_proof_with_every_asked_part_cross_checked(arch, k, count):
    """Every part the current code names, each unsat by Bitwuzla and
    Boolector with its formula's hash, but the symmetries that hand the
    register the same terms (no solver needed, checked again here)."""
    import json
    from pathlib import Path
    doc = json.loads((Path(__file__).parent.parent / f"results/{arch}/monotonicity.json").read_text())
    p = choose(arch)
    assert doc["verdict"] == "unsat" and doc["query"]["method"] == ms.METHOD
    assert doc["query"]["model"] == p.name and doc["query"]["k"] == k
    said = {x["part"]: x["verdict"] for x in doc["query"]["parts"]}
    assert [x["part"] for x in doc["query"]["parts"]] == ms.part_names(p, k, said)
    assert len(doc["query"]["parts"]) == count
    unread = [x for x in ms.symmetries(p, k) if x[0] == "terms"]
    assert {x["part"] for x in doc["query"]["parts"] if x["verdict"] == "unread"} == {x[1] for x in unread}
    assert all(ms.same_terms(p, k, *x[2:]) for x in unread)
    asked = [x for x in doc["run"]["parts"] if x["verdict"] != "unread"]
    assert len(asked) == count - len(unread) and all(x["verdict"] == "unsat" for x in asked)
    assert all(x["proved_by"] == ["bitwuzla", "boolector"] and x["smt2_sha256"] for x in asked)
    assert doc["proof"]["cross_checked"]


def test_a_sum_part_where_the_last_point_moves_up_two_places_is_proved_in_parts():
    """The grouped model's a7 stepping with its point up two places or
    more: the register's 5 terms (c and 4 groups), the last one moved;
    every part that stands for the sum part is unsat, the budgets end at
    -1, and only such leaves have parts."""
    p = _grouped()
    ch = ms.chain_of(p, 8, "a7", ("up",))
    assert ch is not None and ch.n == 5 and ch.changed == (4,)
    assert [ch.budget(j) for j in range(5)] == [0, 1, 2, 3, -1]
    names = ms.sum_parts(ch)
    assert len(names) == 5 + 3 * 4 + 3
    for lemma in names:
        f = ms.formula(p, 8, "a7", ("up",), lemma)
        assert service.solve(f, "bitwuzla", 60).status == "unsat", lemma
    assert ms.chain_of(p, 8, "a7", ("+1",)) is None and ms.chain_of(p, 8, "a7", ("down",)) is None
    assert ms.chain_of(p, 8, "c-up", ("up",)).changed == (0,)


def test_a_sum_part_at_the_same_point_is_proved_in_parts_that_lose_nothing():
    """c's step with the point unmoved: c (the register's first term) moved,
    no shift, every budget 0; every part unsat, and the floor lemma without
    its unit is sat once a shift is allowed."""
    p = _grouped()
    ch = ms.chain_of(p, 8, "c-up", ("same",))
    assert ch is not None and not ch.moved and ch.changed == (0,)
    assert [ch.budget(j) for j in range(ch.n)] == [0] * ch.n
    for lemma in ms.sum_parts(ch):
        f = ms.formula(p, 8, "c-up", ("same",), lemma)
        assert service.solve(f, "bitwuzla", 60).status == "unsat", lemma

    class Exact(ms.Chain):
        @property
        def lost(self):
            return 0
    exact = Exact(ch.n, ch.rw, ch.ew, ch.changed, moved=True)
    f = ms.piece_formula(exact, "link 1, floor", "a shift, no unit")
    assert service.solve(f, "bitwuzla", 60).status == "sat"


def test_the_parts_of_a_sum_part_can_fail():
    """With no term that gains (every budget left at n - 1 and more) the
    order part is sat; a term that did not move claimed to gain n units of
    the new last place is sat too."""
    p = _grouped()
    ch = ms.chain_of(p, 8, "a7", ("up",))
    still = ms.Chain(ch.n, ch.rw, ch.ew, ())
    assert service.solve(ms.piece_formula(still, "order", "no gain"), "bitwuzla", 60).status == "sat"
    assert service.solve(ms.piece_formula(ch, "order", "gain"), "bitwuzla", 60).status == "unsat"

    class Claims(ms.Chain):
        def slack(self, i: int) -> int:
            return -self.n
    real = ms.chain
    try:
        ms.chain = lambda run, j, moved=True, margin=0: Claims(**vars(real(run, j, moved, margin)))
        f = ms.formula(p, 8, "a7", ("up",), "sum, term 1")
    finally:
        ms.chain = real
    assert service.solve(f, "bitwuzla", 60).status == "sat"


def test_a_proof_puts_the_parts_in_place_of_a_sum_part_not_answered_whole(monkeypatch):
    """With no time for the whole sum part, a7's up leaf is proved by its
    parts; the proof names them where its verdicts do, and plain names
    (one sum part) where they do not."""
    p = _grouped()
    monkeypatch.setattr(ms, "DIRECT_TRY", 0.0)
    heard: list = []
    proof = ms.prove(p, 8, budget=120, moves=["a7"], progress=lambda *x: heard.append(x))
    assert proof.verdict == Verdict.UNSAT, [(x.what, x.verdict) for x in proof.parts if x.verdict != "unsat"]
    names = [x.what for x in proof.parts]
    plan = 2 * len(ms.case_lists(p, 8, "a7"))        # the bar counts the plan's parts: one sum part is one
    assert [d for _, d, _ in heard] == list(range(plan + 1)) and len(names) > plan
    whole = ms.part_name("a7", ("up",), "sum")
    assert whole not in names and ms.part_name("a7", ("up",), "sum, order") in names
    said = {x.what: x.verdict for x in proof.parts}
    assert all(n in ms.part_names(p, 8, said) for n in names)
    assert whole in ms.part_names(p, 8) and whole not in ms.part_names(p, 8, said)


def test_a_sum_part_is_cut_at_an_earlier_point_that_moves_up():
    """The late-c model's a3 stepping with the products' point up two places
    or more: cut at the products' sum (call 0), whose Chain (margin 33:
    the sum with c keeps 6 bits of it below the point where it has 11, so
    it may lose 2^5 units and c one) gives y's sum more than 33 units
    above x's, and the sum with c from sums so far apart, whether its own
    point stays or moves up; every part unsat. Only such leaves are cut."""
    p = _late()
    for leaf in [("up", "same"), ("up", "+1"), ("up", "up")]:
        assert ms.stage_of(p, 4, "a3", leaf) == 0
        assert ms.sub_lemmas(p, 4, "a3", leaf, "sum") == ["sum, call 0", "sum, past call 0"]
        ch = ms.chain_of(p, 4, "a3", leaf, 0)
        assert ch is not None and ch.n == 4 and ch.changed == (3,) and ch.moved and ch.margin == 33
        assert ch.budget(3) == -34
        subs = ms.sub_lemmas(p, 4, "a3", leaf, "sum, call 0")
        assert subs == ms.sum_parts(ch, "sum, call 0") and len(subs) == 4 + 3 * 3 + 2
        for lemma in subs + ["sum, past call 0"]:
            f = ms.formula(p, 4, "a3", leaf, lemma)
            assert service.solve(f, "bitwuzla", 60).status == "unsat", (leaf, lemma)
    assert ms.stage_of(p, 4, "a3", ("+1", "same")) is None and ms.stage_of(p, 4, "a3", ("same", "up")) is None


def test_a_cut_at_an_earlier_point_can_fail(monkeypatch):
    """Without the margin, y's products' sum may exceed x's by less than
    the sum with c loses when its point moves up: that part is sat. With
    F = 3 no product that comes alive gains the margin's 2 + 4 units (the
    stage is sat) though the whole sum part is unsat, and a proof that
    cannot wait for the whole part asks it again after the stage fails."""
    p = _late()
    real = ms.stage_margin
    try:
        ms.stage_margin = lambda run, j: 0
        f = ms.formula(p, 4, "a3", ("up", "+1"), "sum, past call 0")
    finally:
        ms.stage_margin = real
    assert service.solve(f, "bitwuzla", 60).status == "sat"
    p = _late(acc_format="float8_e5m2")
    leaf = ("up", "same")
    assert service.solve(ms.formula(p, 4, "a3", leaf, "sum, call 0"), "bitwuzla", 60).status == "sat"
    assert service.solve(ms.formula(p, 4, "a3", leaf, "sum"), "bitwuzla", 60).status == "unsat"
    monkeypatch.setattr(ms, "case_lists", lambda p, k, move: [leaf])
    monkeypatch.setattr(ms, "DIRECT_TRY", 0.0)
    proof = ms.prove(p, 4, budget=60, moves=["a3"])
    assert proof.verdict == Verdict.UNSAT
    assert [x.what for x in proof.parts] == [ms.part_name("a3", leaf, lemma) for lemma in ("sum", "rest")]


def test_a_proof_cuts_a_sum_part_at_an_earlier_point_when_not_answered_whole(monkeypatch):
    """With no time for whole sum parts, the late-c model's a3 step is proved
    with every leaf whose products' point moves up cut at the products'
    sum; the names follow the verdicts."""
    p = _late()
    monkeypatch.setattr(ms, "DIRECT_TRY", 0.0)
    proof = ms.prove(p, 4, budget=120, moves=["a3"])
    assert proof.verdict == Verdict.UNSAT, [(x.what, x.verdict) for x in proof.parts if x.verdict != "unsat"]
    names = [x.what for x in proof.parts]
    for leaf in [("up", "same"), ("up", "+1"), ("up", "up")]:
        assert ms.part_name("a3", leaf, "sum, call 0, gaps, identity") in names
        assert ms.part_name("a3", leaf, "sum") not in names
    assert ms.part_name("a3", ("up", "same"), "sum, past call 0, order") in names
    assert names == [n for n in ms.part_names(p, 4, {x.what: x.verdict for x in proof.parts})
                     if n.startswith("step a3")]


def test_a_term_kept_coarser_than_the_register_may_lose_its_grain():
    """CDNA3's sum with c keeps c to 24 bits below the point where the
    register keeps 32: where that point moves up, c may lose up to 2^8 - 1
    units of the new last place. Its term part is unsat with that slack
    and sat when c is held to lose none; the moved term (the products'
    sum, past the cut) gains what covers it."""
    p = choose("cdna3")
    leaf = ("up", "up")
    ch = ms.chain_of(p, 8, "a7", leaf)
    assert ch.grains == (0, 8) and [ch.slack(i) for i in range(2)] == [-257, 255] and ch.budget(1) == -1
    for lemma in ("sum, past call 0, term 0", "sum, past call 0, term 1"):
        assert service.solve(ms.formula(p, 8, "a7", leaf, lemma), "bitwuzla", 120).status == "unsat", lemma
    real = ms.chain
    try:
        ms.chain = lambda run, j, moved=True, margin=0: replace(real(run, j, moved, margin), grains=())
        f = ms.formula(p, 8, "a7", leaf, "sum, past call 0, term 1")
    finally:
        ms.chain = real
    assert service.solve(f, "bitwuzla", 60).status == "sat"
