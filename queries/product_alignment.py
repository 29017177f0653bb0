"""The exponent a product is aligned by: its raw exponent ea+eb with the
significand in [1,4) (KM-TC, MMA-Sim; fits the recorded data), or the
exponent of the product normalised to [1,2) (VLPG's model)."""

from tcsmt.properties.registry import Property, aligns, hyp, ungrouped

PROPERTY = Property(
    name="product-alignment",
    description="alignment by the raw product exponent vs the normalised one",
    parameters=("product_alignment",),
    hypotheses=lambda p: [hyp("raw", product_alignment="raw"),
                          hyp("normalised", product_alignment="normalised")],
    applies=lambda p: ungrouped(p) or aligns(p),
)
