"""How blocks of a longer dot product combine: each block's rounded result
is the next block's c (recursive), every block summed from zero and the
results added to c one after another (separate), or one block twice as
large (no chaining). The dot product has two blocks' worth of terms."""

from tcsmt.properties.registry import Property, hyp, not_fp64

PROPERTY = Property(
    name="chaining",
    description="how blocks combine: recursive (result is next c), separate sums, or one larger block",
    parameters=("chaining", "block_size"),
    hypotheses=lambda p: [hyp("recursive", chaining="recursive"),
                          hyp("separate", chaining="separate"),
                          hyp("one block", chaining="recursive", block_size=2 * p.block_size)],
    k=lambda p: 2 * p.block_size,
    applies=not_fp64,
)
