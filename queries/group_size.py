"""Products summed exactly before they enter the block as one term: MMA-Sim
reads groups of 16 e2m1 products for B200's mxf4 and mxf4nvf4, sf-tensor's
reading groups of 4 for NVFP4; 1 is no exact group. Every size that divides
the scale block (a group shares its scales) and the block is a hypothesis."""

from tcsmt.properties.registry import Property, hyp, scaled

SIZES = (1, 2, 4, 8, 16, 32)


def sizes(p):
    return [g for g in SIZES if p.scale_block % g == 0 and p.block_size % g == 0]


def applies(p):
    if (p.product_alignment, p.product_rounding, p.normalisation) != ("raw", "exact", "block"):
        return "exact groups need raw, exact products and one normalisation per block"
    return scaled(p)


PROPERTY = Property(
    name="group-size",
    description="products summed exactly before the window: 1, 2, 4, 8, 16, 32",
    parameters=("group_size",),
    hypotheses=lambda p: [hyp(str(g), group_size=g) for g in sizes(p)],
    applies=applies,
)
