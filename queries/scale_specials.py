"""NaN and zero block scales. A NaN scale (ue8m0 0xff, ue4m3 0x7f) makes
the dot product NaN, as MMA-Sim reads it, or is read as the number its
fields spell (2^128, 480). A zero scale (ue4m3 has one) leaves its
products out of the alignment, as MMA-Sim reads it, or keeps them aligned
at their exponent plus the scales', as a group that cancels to zero. a, b,
c and the scales may be NaN or infinite."""

from tcsmt.properties.registry import Domain, Property, hyp, scaled


def hypotheses(p):
    zeros = ("dead", "aligned") if p.fscale.subnormals else ("dead",)    # ue8m0 has no zero
    return [hyp(f"nan={n},zero={z}", scale_nan=n, scale_zero=z)
            for n in ("nan", "value") for z in zeros]


PROPERTY = Property(
    name="scale-specials",
    description="NaN scale: NaN vs its fields' value; zero scale: out of the alignment vs aligned",
    parameters=("scale_nan", "scale_zero"),
    hypotheses=hypotheses,
    domain=lambda p: Domain(finite=False),
    applies=scaled,
)
