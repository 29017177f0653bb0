"""find.ask(simulate=True): the candidate pool answers a separation when one
of its readable inputs separates the pair on the concrete model (no solver
started); otherwise the question goes to the solvers as before, so a proof
is still a solver's."""

from tcsmt.properties.registry import get_property
from tcsmt.properties.run import hypotheses, resolve_base
from tcsmt.search import find
from tcsmt.search.separation import LEMMA
from tcsmt.sim.dot import dot_bits


def _pair(prop_name, arch, ids):
    prop = get_property(prop_name)
    base = resolve_base(prop, arch)
    hyps = {h.id: h for h in hypotheses(prop, base)}
    return prop, [hyps[i] for i in ids], prop.k(base), prop.domain(base)


def test_pool_answers_accumulation_order_without_a_solver():
    _, hyps, k, domain = _pair("order", "volta", ["sequential", "reverse"])
    got = find.ask(hyps, k, domain, [(0, 1)], "bitwuzla", 60, True, simulate=True)
    assert got.verdict == "sat" and got.found_by == "pool" and got.runs == []
    v = got.vector
    p = hyps[0].params
    assert domain.contains(p.fin, p.fc, list(v.a), list(v.b), v.c, p.fb)
    seq, rev = (dot_bits(h.params, list(v.a), list(v.b), v.c) for h in hyps)
    assert seq != rev


def test_what_the_pool_cannot_separate_goes_to_the_solver():
    prop, hyps, k, domain = _pair("carry-bits", "volta", ["3", "unbounded"])
    assert find.simulated(hyps, k, domain, [(0, 1)]) is None
    got = find.ask(hyps, k, domain, [(0, 1)], "bitwuzla", 60, False, lemma=prop.lemma, simulate=True)
    assert got.verdict == "unsat" and got.found_by == ""
    assert any(r.tag == LEMMA and r.status == "unsat" and r.solver == "bitwuzla" for r in got.runs)


def test_signed_zeros_tell_apart_a_model_that_reads_every_zero_as_plus_zero():
    """CDNA2's flush and flush_every_step (which reads every zero input as
    +0): every product -0 and c = -0 sum to -0 under one and +0 under the
    other. The pool's rows of signed zeros find it; the committed result
    separates the pair with a vector that replays."""
    import json
    from pathlib import Path

    from tcsmt.search import pool
    _, hyps, k, domain = _pair("subnormals", "cdna2", ["flush", "flush_every_step"])
    [v] = pool.search(hyps, k, domain, [(0, 1)])
    outs = [dot_bits(h.params, list(v.a), list(v.b), v.c) for h in hyps]
    assert outs[0] != outs[1] and {o & 0x7FFFFFFF for o in outs} == {0}
    doc = json.loads((Path(__file__).resolve().parent.parent / "results/cdna2/subnormals.json").read_text())
    assert all(p["verdict"] != "unknown" for p in doc["pairs"])
    assert any(v["outputs"]["flush"] != v["outputs"]["flush_every_step"] for v in doc["vectors"])
