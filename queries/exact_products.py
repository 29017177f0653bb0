"""Are products exact, or rounded (to nearest even) into the input or the
output format before they are added (VLPG section 4.1, Table 1)? For fp16
inputs a product always fits binary32, so "out_format" cannot be told from
"exact" with fp32 output: the query proves it."""

from tcsmt.properties.registry import Property, hyp, not_fp64, ungrouped

PROPERTY = Property(
    name="exact-products",
    description="products kept exactly vs rounded to the input or output format",
    parameters=("product_rounding",),
    hypotheses=lambda p: [hyp("exact", product_rounding="exact"),
                          hyp("in_format", product_rounding="in_format"),
                          hyp("out_format", product_rounding="out_format")],
    applies=lambda p: ungrouped(p) or not_fp64(p),
)
