"""Accumulation order (VLPG property 3, F21): with one normalisation per
block the order of the terms cannot matter; with a rounding after every
addition it can. Hypotheses: the block datapath, and a chain of rounded
additions in index order, reverse order, a pairwise tree, and largest
magnitude first."""

from tcsmt.properties.registry import Property, aligns, hyp, rdna_adder, ungrouped


def applies(p):
    if p.c_placement == "late":
        return "with c added late (CDNA3) the products' block has no addition-by-addition variant here"
    if rdna_adder(p):
        return ("RDNA's adder (terms in c's sign frame, floored, or summed in pairs) has no "
                "addition-by-addition variant here (the fp32 FMA chain is a part of its "
                "identification space)")
    return ungrouped(p) or aligns(p)


def hypotheses(p):
    return [hyp("block")] + [hyp(o, normalisation="every_add", add_order=o)
                             for o in ("sequential", "reverse", "pairwise", "largest_first")]


PROPERTY = Property(
    name="order",
    description="accumulation order: block (order-free) vs sequential, reverse, pairwise, largest first",
    parameters=("normalisation", "add_order"),
    hypotheses=hypotheses,
    applies=applies,
)
