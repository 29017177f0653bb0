"""Carry bits of the accumulator above the largest term (VLPG: 3 needed and
sufficient for the 5-term Volta adder). `tcsmt find carry-bits` finds inputs
telling the counts apart; `tcsmt prove carry-bits` proves the fewest that
give the same bits as an unbounded accumulator."""

from tcsmt.datapath import bv
from tcsmt.properties.registry import Property, aligns, hyp


def needed_bound(p):
    """The count that holds any sum of block_size products (each below 4
    times the alignment unit) and c: ceil(log2(4 * block_size + 2)) - 2."""
    return bv.bits_for(4 * p.block_size + 1) - 2


def hypotheses(p):
    top = needed_bound(p)
    return [hyp(str(n), carry_bits=n) for n in range(max(0, top - 2), top + 1)] + \
        [hyp("unbounded", carry_bits=None)]


def lemma(x, y, k, domain):
    """Two counts that both hold every block sum give the same bits as the
    unbounded accumulator, hence as each other: the pair is inseparable
    when no input overflows a register with the smaller count (the lemma
    of `tcsmt prove carry-bits`; its UNSAT is the proof)."""
    counts = [h.params.carry_bits for h in (x, y)]
    finite = [c for c in counts if c is not None]
    if not finite:
        return None
    from tcsmt.search.prove import overflow_formula
    return overflow_formula(x.params, k, min(finite), domain)


PROPERTY = Property(
    name="carry-bits",
    description="carry bits of the accumulator: too few give wrong sums on large terms",
    parameters=("carry_bits",),
    hypotheses=hypotheses,
    applies=aligns,
    lemma=lemma,
)
