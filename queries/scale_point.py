"""Where the scales set the block's window. MMA-Sim adds the scale
exponents to every product's (or exact group's) exponent before the
alignment, so the window follows the largest scaled term. sf-tensor's
reading of B200 also keeps at most F bits below the largest pair of scale
exponents S, whatever the products: q = max(R - F, S - F, C - F), R the
largest raw product exponent, C c's (the raw-exponent window, with the same
F = 23 + align_bits as the model)."""

from tcsmt.properties.registry import Property, hyp, scaled


def applies(p):
    if scaled(p):
        return scaled(p)
    if p.scale_window_bits is not None:
        return "the model already reads the window from the scales (the raw-exponent window)"
    if (p.align_rounding, p.carry_bits, p.c_placement, p.chaining) != \
            ("truncate", None, "global", "recursive") or p.block_size % p.scale_block:
        return "the raw-exponent window truncates, adds exactly, aligns c and holds whole scale blocks"
    return None


def hypotheses(p):
    F = p.facc.frac_bits + p.align_bits
    return [hyp("terms"), hyp("scales", scale_window_bits=F, c_window_bits=F)]


PROPERTY = Property(
    name="scale-point",
    description="window set by the largest scaled term vs also below the largest scale pair",
    parameters=("scale_window_bits", "c_window_bits"),
    hypotheses=hypotheses,
    applies=applies,
)
