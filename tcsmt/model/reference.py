"""Named reference models: textbook arithmetic to compare a unit with.

A reference is not an architecture: it takes the formats it is asked for
(those of the model it is compared with, of the observations it checks, or
of the arrays it multiplies) and is usable wherever a model is:
``--arch fma-chain``, ``tcsmt diff hopper fma-chain``,
``matmul(A, B, C, model="fma-pairwise")``. Each is a set of values of the
one datapath's parameters (nothing here computes anything):

exact
    The exact sum of the products and c, rounded once to nearest even into
    the output format (IEEE signed zeros, overflow and subnormals): the
    datapath's exact block sum (align_rounding = "exact", the form AMD
    CDNA1 uses) over blocks of 256 products, the most a block holds; a
    longer dot product chains them, each block's rounded result being the
    next block's c.
fma-chain
    d = fma(a_K, b_K, ... fma(a_2, b_2, fma(a_1, b_1, c))): IEEE fused
    multiply-adds in index order. Each product is exact and each addition
    is rounded once, to nearest even, into the accumulator format, which
    is the OUTPUT format (binary32 for fp32 output, binary16 for fp16
    output), with IEEE signed zeros, overflow and subnormals. Parameters:
    block_size 1, normalisation every_add, align_rounding rne,
    acc_format = out_format, align_bits 0, unbounded carries, no
    alignment floor (the shipped ampere-fp64 model is this chain in
    binary64).
fma-pairwise
    The products, exact, summed as a balanced tree of pairs (p1 + p2,
    p3 + p4, then those sums...), each addition rounded to nearest even
    into the output format, and c added to the tree's result with one
    more such addition. Blocks of 256 products; a longer dot product
    chains them, each block's result being the next block's c.
"""

from __future__ import annotations

from tcsmt.errors import UserError
from tcsmt.model.formats import get_format
from tcsmt.model.load import params_from_dict
from tcsmt.model.params import ModelParams

IEEE = {"align_bits": 0, "carry_bits": None, "align_rounding": "rne",
        "normalisation": "every_add", "product_alignment": "raw", "final_rounding": "rne",
        "chaining": "recursive", "c_placement": "global", "subnormals": "keep",
        "min_exponent": None, "overflow": "ieee", "zero_sign": "ieee",
        "product_overflow": "keep", "product_rounding": "exact", "c_rounding": "rne"}

REFERENCES = {
    "exact": ("the exact sum of the products and c, rounded once to nearest even into the "
              "output format (blocks of 256)",
              {**IEEE, "block_size": 256, "normalisation": "block", "align_rounding": "exact",
               "add_order": "sequential"}),
    "fma-chain": ("IEEE fused multiply-adds in index order, each rounded to nearest even into "
                  "the output format", {**IEEE, "block_size": 1, "add_order": "sequential"}),
    "fma-pairwise": ("the exact products summed as a tree of pairs, then c, each addition "
                     "rounded to nearest even into the output format (blocks of 256)",
                     {**IEEE, "block_size": 256, "add_order": "pairwise"}),
}


def is_reference(spec) -> bool:
    return isinstance(spec, str) and spec.strip().lower() in REFERENCES


def reference_model(name: str, in_format: str = "float16", out_format: str = "float32",
                    c_format: str | None = None, b_format: str | None = None) -> ModelParams:
    """The reference ``name`` for these formats (c in the output format
    unless given)."""
    key = name.strip().lower()
    if key not in REFERENCES:
        raise UserError(f"unknown reference model {name!r} (known: {', '.join(REFERENCES)})")
    description, values = REFERENCES[key]
    fin, fout = get_format(in_format), get_format(out_format)
    fc = get_format(c_format) if c_format else fout
    fb = get_format(b_format) if b_format else fin
    label = f"{short(fin.name)}{'' if fb == fin else ',' + short(fb.name)}-{short(fout.name)}"
    data = {"name": f"{key}-{label}", "arch": key, "description": f"reference: {description}",
            "instruction": "none (a reference model)", "in_format": fin.name,
            "b_format": None if fb == fin else fb.name, "c_format": fc.name,
            "out_format": fout.name, "acc_format": fout.name, **values}
    return params_from_dict(data, f"reference model {key}")


def reference_for(name: str, formats: str | None) -> ModelParams:
    """The reference for ``formats`` (IN:OUT or A,B:OUT; fp16:fp32 without)."""
    fin, _, fout = (formats or "fp16:fp32").partition(":")
    fa, _, fb = fin.partition(",")
    if not fout:
        raise UserError(f"bad --formats {formats!r}: expected IN:OUT such as fp16:fp32")
    return reference_model(name, fa, fout, None, fb or None)


def reference_like(name: str, other: ModelParams) -> ModelParams:
    """The reference in another model's formats (a, b, c and out)."""
    return reference_model(name, other.fin.name, other.fout.name, other.fc.name,
                           other.fb.name if other.fb != other.fin else None)


def short(name: str) -> str:
    from tcsmt.model.names import short_format
    return short_format(name)
