"""How c enters a block-scaled block. MMA-Sim aligns c with the scaled
products in one window; c may instead be added after the block, to its
rounded sum, with one addition rounded toward zero or to nearest. In the
raw-exponent window (sf-tensor's reading) c sets a coarser window for the
groups below it (c_group_window) and a floor leaves tiny groups out of a
subnormal sum (group_floor): each combination is a hypothesis there."""

from tcsmt.properties.registry import Property, hyp, scaled

FLOOR = -174          # sf-tensor's group floor for mxf4 (2^-174)


def hypotheses(p):
    if p.scale_window_bits is not None:
        floors = (None, p.group_floor if p.group_floor is not None else FLOOR)
        return [hyp(f"group-window={w},floor={f}", c_group_window=w, group_floor=f)
                for w in (False, True) for f in floors]
    return [hyp("window", c_placement="global"),
            hyp("after-rz", c_placement="after", c_rounding="rz"),
            hyp("after-rne", c_placement="after", c_rounding="rne")]


PROPERTY = Property(
    name="c-entry",
    description="c in the scaled products' window vs added after the block (rz, rne)",
    parameters=("c_placement", "c_rounding", "c_group_window", "group_floor"),
    hypotheses=hypotheses,
    applies=scaled,
)
