"""Subnormal inputs and outputs kept or flushed to zero (F21: kept on NVIDIA;
AMD CDNA2 flushes fp16/bf16 subnormals)."""

from tcsmt.properties.registry import Property, hyp, not_fp64

PROPERTY = Property(
    name="subnormals",
    description="subnormal inputs and outputs: kept, flushed, flushed on input only, on output only",
    parameters=("subnormals",),
    hypotheses=lambda p: [hyp(m, subnormals=m) for m in ("keep", "flush", "flush_inputs", "flush_outputs")
                          + (("flush_every_step",) if p.subnormals == "flush_every_step" else ())],
    applies=not_fp64,
)
