"""The values each choice of the datapath may take (``CHOICES``), which keys
of a model hold formats and optional integers, and the widest format a model
may name. Read by validation, ``tcsmt params`` and the hypothesis spaces."""

from __future__ import annotations

from tcsmt.model.formats import ROUNDING_MODES

ALIGN_ROUNDINGS = ("truncate", "rz", "rne", "ru", "rd", "exact", "ones", "floor")
NORMALISATIONS = ("block", "every_add")
ADD_ORDERS = ("sequential", "reverse", "pairwise", "largest_first")
PRODUCT_ALIGNMENTS = ("raw", "normalised")
CHAININGS = ("recursive", "separate")
C_PLACEMENTS = ("global", "late", "after")
SUBNORMALS = ("keep", "flush", "flush_inputs", "flush_outputs", "flush_every_step", "flush_c",
              "flush_rounded")
OVERFLOWS = ("inf", "ieee", "wrap", "saturate")
FLOAT_OVERFLOWS = ("inf", "ieee")
INT_OVERFLOWS = ("wrap", "saturate")
SATURATIONS = ("final", "every_add")
SPARSITIES = ("dense", "2:4", "1:2")
SPARSE_ORDERS = ("logical", "compressed")
ZERO_SIGNS = ("positive", "all_positive", "ieee", "keep_c")
PRODUCT_OVERFLOWS = ("keep", "inf")
PRODUCT_ROUNDINGS = ("exact", "in_format", "out_format")
TERM_ORDERS = ("sequential", "pairs_mod4")
LATE_SUM_EXPONENTS = ("value", "products")
SCALE_NANS = ("nan", "value")
SCALE_ZEROS = ("dead", "aligned")


CHOICES = {
    "align_rounding": ALIGN_ROUNDINGS, "normalisation": NORMALISATIONS,
    "add_order": ADD_ORDERS, "product_alignment": PRODUCT_ALIGNMENTS,
    "final_rounding": ROUNDING_MODES, "chaining": CHAININGS, "c_rounding": ROUNDING_MODES,
    "c_placement": C_PLACEMENTS, "subnormals": SUBNORMALS,
    "overflow": OVERFLOWS, "zero_sign": ZERO_SIGNS,
    "product_overflow": PRODUCT_OVERFLOWS, "product_rounding": PRODUCT_ROUNDINGS,
    "term_order": TERM_ORDERS, "late_sum_exponent": LATE_SUM_EXPONENTS,
    "scale_nan": SCALE_NANS, "scale_zero": SCALE_ZEROS, "saturation": SATURATIONS,
    "sparsity": SPARSITIES, "sparse_order": SPARSE_ORDERS,
}
FORMAT_KEYS = ("in_format", "b_format", "c_format", "out_format", "acc_format")
OPTIONAL_FORMAT_KEYS = ("scale_format",)
OPTIONAL_INT_KEYS = ("carry_bits", "min_exponent", "final_frac_bits", "late_frac_bits",
                     "scale_block", "scale_window_bits", "c_window_bits", "c_group_size",
                     "group_floor", "late_c_window")


MAX_FORMAT_BITS = 64
"""The widest format a model may name (binary64): the batch simulator, the
candidate pools and the result files hold every operand in 64 bits."""
