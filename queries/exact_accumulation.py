"""Exactness of accumulation with fp16 output (VLPG property 1): is the
block summed with binary32's precision, or only binary16's, when inputs,
c and d are all fp16?"""

from tcsmt.properties.registry import Property, hyp


def applies(p):
    if p.out_format != "float16":
        return "the question is about fp16 output; use --formats fp16:fp16"
    return None


PROPERTY = Property(
    name="exact-accumulation",
    description="fp16 output: accumulation with fp32 precision vs fp16 precision",
    parameters=("acc_format",),
    hypotheses=lambda p: [hyp("fp32 accumulator", acc_format="float32"),
                          hyp("fp16 accumulator", acc_format="float16", align_bits=0)],
    applies=applies,
    formats="fp16:fp16",
)
