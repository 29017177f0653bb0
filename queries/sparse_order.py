"""How a sparse instruction's selected products enter the blocks: in place,
with +0 at the positions the metadata leaves out (logical: sf-tensor's
reading of B200), or packed in order, as a dense instruction of half the K
computes them (compressed); and whether c then enters the first block with
the products or is added after the last. Sparse float models only."""

from tcsmt.properties.registry import Property, hyp, sparse_float


def hypotheses(p):
    orders = [p.sparse_order] + [o for o in ("logical", "compressed") if o != p.sparse_order]
    out = [hyp(orders[0])] + [hyp(o, sparse_order=o) for o in orders[1:]]
    if p.c_placement == "global":
        out += [hyp(f"{o}, c after", sparse_order=o, c_placement="after") for o in orders]
    return out


PROPERTY = Property(
    name="sparse-order",
    description="sparse selection: products in place (logical) vs packed (compressed), c with them or after",
    parameters=("sparse_order", "c_placement"),
    hypotheses=hypotheses,
    k=lambda p: 2 * p.block_size,     # two blocks of logical positions, one of packed products
    applies=sparse_float,
    pick=lambda arch: f"{arch}-fp16-fp32-sparse",
)
