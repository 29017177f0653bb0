"""A property's lemma: a formula whose UNSAT proves a pair inseparable
(carry-bits: no input overflows the smaller count); its SAT answer is
never taken for a witness."""

from tcsmt.properties.registry import get_property
from tcsmt.properties.run import hypotheses, resolve_base
from tcsmt.search import find
from tcsmt.search.separation import LEMMA
from tcsmt.search.vectors import outputs


def _carry(arch, ids):
    prop = get_property("carry-bits")
    base = resolve_base(prop, arch)
    hyps = {h.id: h for h in hypotheses(prop, base)}
    return prop, [hyps[i] for i in ids], prop.k(base), prop.domain(base)


def test_lemma_proves_enough_carry_bits_equal_to_unbounded():
    prop, hyps, k, domain = _carry("volta", ["3", "unbounded"])
    assert prop.lemma(hyps[0], hyps[1], k, domain) is not None
    got = find.ask(hyps, k, domain, [(0, 1)], "bitwuzla", 60, False, lemma=prop.lemma)
    assert got.verdict == "unsat"
    assert any(r.tag == LEMMA and r.status == "unsat" for r in got.runs)


def test_satisfiable_lemma_is_no_witness_and_the_pair_still_separates():
    prop, hyps, k, domain = _carry("volta", ["1", "unbounded"])
    got = find.ask(hyps, k, domain, [(0, 1)], "bitwuzla", 60, False, lemma=prop.lemma)
    assert got.verdict == "sat"
    assert got.vector is not None
    lemma_runs = [r for r in got.runs if r.tag == LEMMA]
    assert all(r.status != "unsat" for r in lemma_runs)
    outs = outputs(got.vector, hyps)
    assert outs["1"] != outs["unbounded"]


def test_no_lemma_for_two_unbounded_accumulators():
    prop, hyps, k, domain = _carry("volta", ["unbounded", "unbounded"])
    assert prop.lemma(hyps[0], hyps[1], k, domain) is None
