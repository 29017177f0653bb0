"""Witness shrinking: the simpler vector still separates what it must, on
the concrete model, and is no more complex than the solver's."""

from tcsmt.model.formats import get_format
from tcsmt.properties.registry import get_property
from tcsmt.properties.run import hypotheses, resolve_base
from tcsmt.search import find
from tcsmt.search.shrink import shrink, significant_bits, simpler, truncated
from tcsmt.search.vectors import Vector, outputs


def _hyps(prop, arch):
    p = get_property(prop)
    base = resolve_base(p, arch)
    return hypotheses(p, base), p.k(base), p.domain(base)


def _complexity(v: Vector, p) -> tuple[int, int]:
    nonzero = sum(1 for x, y in zip(v.a, v.b) if x and y) + (1 if v.c else 0)
    bits = sum(significant_bits(p.fin, x) for x in v.a + v.b) + significant_bits(p.fc, v.c)
    return nonzero, bits


def test_significant_bits_and_truncation():
    f16 = get_format("fp16")
    assert significant_bits(f16, 0x3C00) == 0          # 1.0
    assert significant_bits(f16, 0x3C01) == 10         # 1 + 2^-10
    assert significant_bits(f16, 0x3E00) == 1          # 1.5
    assert truncated(f16, 0x3FFF, 1) == 0x3E00
    assert simpler(f16, 0xBC01)[0] == 0x3C01           # positive first
    assert 0xBC00 in simpler(f16, 0xBC01)


def test_shrunk_witness_separates_and_is_simpler():
    hyps, k, domain = _hyps("block-rounding", "volta")
    ids = [h.id for h in hyps]
    pair = (ids.index("truncate"), ids.index("rz"))
    got = find.ask(hyps, k, domain, [pair], "bitwuzla", 60, readable=False)
    assert got.verdict == "sat"
    raw = got.vector
    small = shrink(raw, hyps, [pair], domain)
    outs = outputs(small, hyps)
    assert outs["truncate"] != outs["rz"]
    p = hyps[0].params
    assert domain.contains(p.fin, p.fc, list(small.a), list(small.b), small.c)
    assert _complexity(small, p) <= _complexity(raw, p)


def test_shrink_keeps_a_vector_that_is_already_minimal():
    hyps, k, domain = _hyps("block-rounding", "volta")
    ids = [h.id for h in hyps]
    pair = (ids.index("truncate"), ids.index("rz"))
    got = find.ask(hyps, k, domain, [pair], "bitwuzla", 60, readable=True)
    again = shrink(got.vector, hyps, [pair], domain)
    assert again == got.vector
