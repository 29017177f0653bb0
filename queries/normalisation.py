"""Normalisation once per block against after every addition (VLPG
property 4; F21: a=[1,1,1,1], b=[p,p,p,p], c=1-p gives 1+2^-23 only
without normalisation of partial sums)."""

from tcsmt.properties.registry import Property, aligns, hyp, rdna_adder, ungrouped


def applies(p):
    if p.c_placement == "late":
        return "with c added late (CDNA3) the products' block has no addition-by-addition variant here"
    if rdna_adder(p):
        return ("RDNA's adder (terms in c's sign frame, floored, or summed in pairs) has no "
                "addition-by-addition variant here (the fp32 FMA chain is a part of its "
                "identification space)")
    return ungrouped(p) or aligns(p)

PROPERTY = Property(
    name="normalisation",
    description="normalisation once per block vs after every addition",
    parameters=("normalisation",),
    hypotheses=lambda p: [hyp("block", normalisation="block"),
                          hyp("every_add", normalisation="every_add", add_order="sequential")],
    applies=applies,
)
