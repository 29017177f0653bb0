"""Integer dot products: d = c + sum a_i * b_i for integer matrix
instructions (s8, u8, s4, u4 inputs; c and d s32).

Every product is exact (tcsmt.datapath.products.multiply on the unpacked
sign and magnitude: |a| * |b| in the sum of the widths). A block is c and
up to block_size products (one instruction's K); its result is out_format's
bits (two's complement), and a longer dot product runs block after block,
each block's result the next block's c (tcsmt.datapath.chain, as for
every model). What happens past the s32 range is
p.overflow:

  wrap      every sum modulo 2^32 (the order of the additions is then
            irrelevant, so the block is summed in 32 bits);
  saturate  the result clamped to [-2^31, 2^31 - 1] (PTX .satfinite), as
            p.saturation says: "final", once, on the exact sum of c and the
            block's products (a register wide enough never to overflow), or
            "every_add", c first and then each product added in index order
            with every partial sum clamped.
"""

from __future__ import annotations

from tcsmt.datapath import bv
from tcsmt.datapath.terms import Term


def signed_product(I, t: Term, w: int):
    """A product Term (sign, magnitude) as a w-bit two's complement word
    (low w bits when w is narrower than the magnitude needs)."""
    return bv.resize_s(I, bv.neg_if(I, t.sign, bv.resize_u(I, t.sig, I.width(t.sig) + 1)), w)


def clamp(I, x, w: int):
    """A signed word x as a w-bit word, past the w-bit range its nearest end."""
    xw = I.width(x)
    top, bottom = (1 << (w - 1)) - 1, -(1 << (w - 1))
    over = I.slt(bv.sconst(I, top, xw), x)
    under = I.slt(x, bv.sconst(I, bottom, xw))
    return I.ite(over, bv.sconst(I, top, w),
                 I.ite(under, bv.sconst(I, bottom, w), I.extract(x, w - 1, 0)))


def product_width(I, prods: list[Term]) -> int:
    """Bits of a two's complement word that holds every product exactly."""
    return max(I.width(t.sig) for t in prods) + 1


def int_block(I, p, prods: list[Term], c, trace=None):
    """c (out_format's bits) plus the block's products -> out_format's bits."""
    w = p.fout.bits
    pw = product_width(I, prods)
    if p.overflow == "wrap":
        total = c
        for t in prods:
            total = I.add(total, signed_product(I, t, w))
        if trace is not None:
            trace.append(("sum modulo 2^32", total, "int"))
        return total
    if p.saturation == "every_add":
        rw = max(w, pw) + 1                          # one addition never overflows it
        acc = c
        for t in prods:
            acc = clamp(I, I.add(bv.resize_s(I, acc, rw), signed_product(I, t, rw)), w)
        return acc
    rw = max(w, pw) + bv.bits_for(len(prods)) + 1   # the exact sum never overflows it
    total = bv.resize_s(I, c, rw)
    for t in prods:
        total = I.add(total, signed_product(I, t, rw))
    if trace is not None:
        trace.append(("exact sum", total, "int"))
    return clamp(I, total, w)

