"""The block-FMA datapath, written once over the bit-vector vocabulary.

``dot(I, p, a, b, c)`` computes d = c + sum(a_i * b_i) under the parameters
``p`` with the interpretation ``I`` (Python ints, NumPy arrays or SMT terms).
Python ``if`` tests only parameters and widths; everything that depends on
data goes through ``I.ite``.

Stages, one module each, in the order data flows through them:

  bv         the vocabulary: about 20 primitives and the operations derived
             from them (count leading zeros, max, sticky shift, ...)
  terms      unpack: bits of a format -> Term (sign, exponent, significand, flags)
  products   multiply: two Terms -> their exact product, then the model's
             product handling (alignment by the leading one, overflow, rounding)
  register   align and block_sum: Terms -> a signed fixed-point sum with
             F fraction bits and the model's carry bits
  rounding   round_fixed: (sign, magnitude, scale) -> bits of a format
  integer    int_block: exact integer products and c summed,
             wrapped modulo 2^32 or saturated (s8/u8/s4/u4 inputs, s32 c, d)
  blocks     block (products and c -> a rounded result), the IEEE reference
             orders, late c
  chain      dot: the products cut into blocks, each block's step, and the
             blocks chained over a dot product (each block's result the
             next block's c)
"""

from tcsmt.datapath.blocks import add_ieee, block, by_leading_one
from tcsmt.datapath.chain import dot, split_step
from tcsmt.datapath.products import finish_product, multiply
from tcsmt.datapath.register import alignment_point, block_sum
from tcsmt.datapath.rounding import round_fixed
from tcsmt.datapath.terms import (
    Fixed,
    Term,
    exp_width,
    flush_ab,
    flush_in,
    flush_out,
    result_format,
    term_fixed,
    unpack,
)

__all__ = ["Fixed", "Term", "add_ieee", "alignment_point", "block", "block_sum", "by_leading_one",
           "dot", "exp_width", "finish_product", "flush_ab", "flush_in", "flush_out",
           "multiply", "result_format", "round_fixed", "split_step", "term_fixed", "unpack"]
