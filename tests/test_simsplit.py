"""A vector that splits a class, looked for by simulation before any
solver (tcsmt.identify.simsplit): what it returns is replayed by the
scalar interpreter, and prove_class takes it as its witness."""

from __future__ import annotations

from dataclasses import replace

from tcsmt.identify.report import prove_class
from tcsmt.identify.simsplit import simulated_split
from tcsmt.model.choose import choose
from tcsmt.search.domain import Domain
from tcsmt.sim.dot import dot_bits


def test_a_split_is_a_row_the_models_disagree_on():
    p = choose("hopper")
    q = replace(p, final_rounding="rne")
    got = simulated_split([p, q], 16, Domain(), pools=2, rows=256)
    assert got is not None and got["pools"] == 1
    v = got["vector"]
    d = [dot_bits(m, list(v.a), list(v.b), v.c) for m in (p, q)]
    assert d[0] != d[1] and list(got["outputs"].values()) == d


def test_one_circuit_is_never_split():
    assert simulated_split([choose("hopper")], 16, Domain()) is None
    p = choose("hopper")
    assert simulated_split([p, replace(p, name="twin")], 16, Domain(), pools=1, rows=64) is None


def test_prove_class_takes_the_simulated_split_as_its_witness():
    p = choose("hopper")
    q = replace(p, name="hopper-rne", final_rounding="rne")
    rec = prove_class([p, q], 16, Domain(), timeout=5.0)
    assert rec["verdict"] == "sat" and rec["found_by"] == "simulation" and rec["proved_by"] == []
    a = [int(x, 16) for x in rec["witness"]["a"]]
    b = [int(x, 16) for x in rec["witness"]["b"]]
    c = int(rec["witness"]["c"], 16)
    assert rec["witness_outputs"] == {m.name: p.fout.hex(dot_bits(m, a, b, c)) for m in (p, q)}
    assert len(set(rec["witness_outputs"].values())) == 2
