"""Products summed before one normalisation (N_FMA): 4 on Volta, 8 on
Ampere fp16, 16 on Hopper fp16, 32 for Hopper fp8. The dot product has
as many terms as the largest block asked about; shorter blocks chain.
With exact groups (block-scaled fp4) a block holds whole groups: the sizes
are multiples of the group, up to the model's own block; with products
summed in pairs first (AMD RDNA4) whole pairs."""

from tcsmt.properties.registry import Property, hyp, not_fp64

SIZES = (1, 2, 4, 8, 16, 32)


def sizes(p):
    if p.group_size > 1:
        return sorted({n for n in SIZES if n % p.group_size == 0} | {p.block_size})
    least = 2 if p.pair_sums else 1
    return [n for n in SIZES if least <= n <= max(2 * p.block_size, 8)]


PROPERTY = Property(
    name="block-size",
    description="block size (products per normalisation): 1, 2, 4, 8, 16, 32",
    parameters=("block_size",),
    hypotheses=lambda p: [hyp(str(n), block_size=n) for n in sizes(p)],
    k=lambda p: max(sizes(p)),
    applies=not_fp64,
)
