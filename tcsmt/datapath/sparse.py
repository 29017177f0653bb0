"""Structured sparsity (mma.sp on sm_80 and later, tcgen05.mma.sp): which
products enter the dot product.

A sparse instruction stores, of every group of four elements of a row of A
along K, two (2:4; TF32: one of every two, 1:2) and a metadata word that
says where each stored element stands. The datapath takes the same
information in the dense layout: a and b over the logical K, and a mask of
one 1-bit word per position, set where the metadata selects it. Why this
form: (1) a mask with every bit set is the dense instruction, so a sparse
model is its dense model plus a selection, and equal to it bit for bit
there; (2) a and b keep their positions along K, so products, blocks,
domains and matrix products line up with the dense model's; (3) the
metadata's encoding (2-bit indices packed in nibbles, the sparsity
selector, which threads hold them) is a layout of the instruction, which
the probe writes (tcsmt.probes); which masks are legal (two of every four)
is a constraint of the domain, not arithmetic.

Whether the selection changes the order or the grouping of the products is
not documented; ``p.sparse_order`` names the reading:

  logical     a disabled position's a and b read as +0 (its product is a
              dead zero term, so a NaN or infinity there has no effect):
              the dense datapath on zeroed operands, blocks of block_size
              logical positions (sf-tensor/tcgen05 reads B200's sparse
              MMA so: disabled positions are masked out of the logical K);
  compressed  the selected pairs move to the front in their order (the
              stored A's order), the disabled ones after them as +0 slots;
              blocks take block_size slots, and a block holding no selected
              slot leaves its c as it is: with a legal mask, the dense
              datapath on the K/2 selected products, as a dense instruction
              of half the K would compute them.

The c path is the model's own (c_placement); a space may ask about it too.
"""

from __future__ import annotations

from tcsmt.datapath import bv

PATTERNS = {"2:4": (2, 4), "1:2": (1, 2)}
"""sparsity -> (positions selected, out of a group of this many)."""


def zeroed(I, xs: list, mask: list) -> list:
    """Each word where its mask bit is set, else the word 0 (+0 in every
    format tcsmt reads)."""
    return [I.ite(bv.bit(I, m, 0), x, I.const(0, I.width(x))) for x, m in zip(xs, mask)]


def compacted(I, words: list[list], mask: list) -> tuple[list[list], list]:
    """The selected positions of every list in ``words`` moved to the front
    in their order (slot j holds the (j+1)-th selected position), the other
    slots 0; and each slot's liveness (a Bool: it holds a selected one)."""
    k = len(mask)
    w = bv.bits_for(k)
    ranks, r = [], I.const(0, w)
    for m in mask:
        ranks.append(r)
        r = I.add(r, bv.resize_u(I, m, w))
    on = [bv.bit(I, m, 0) for m in mask]
    out: list[list] = [[] for _ in words]
    for j in range(k):
        hits = [(i, I.and_(on[i], I.eq(ranks[i], I.const(j, w)))) for i in range(j, k)]
        for n, xs in enumerate(words):
            v = I.const(0, I.width(xs[0]))
            for i, hit in reversed(hits):
                v = I.ite(hit, xs[i], v)
            out[n].append(v)
    live = [I.ult(I.const(j, w), r) for j in range(k)]
    return out, live


def select(I, p, a: list, b: list, mask: list):
    """(a, b, live): the operands in the order the blocks take them, and for
    the compressed reading whether each block (of block_size slots) holds a
    selected product (None: every block counts)."""
    if len(mask) != len(a):
        raise ValueError(f"the mask has {len(mask)} bits for {len(a)} products")
    if p.sparse_order == "logical":
        return zeroed(I, a, mask), zeroed(I, b, mask), None
    (a, b), live = compacted(I, [a, b], mask)
    return a, b, [live[i] for i in range(0, len(a), p.block_size)]


def legal(I, p, mask: list) -> list:
    """Bools that hold for a mask the instruction's metadata can spell: in
    every group of n positions exactly m selected (K a multiple of n)."""
    m, n = PATTERNS[p.sparsity]
    out = []
    for g in range(0, len(mask), n):
        group = mask[g:g + n]
        w = bv.bits_for(n)
        count = I.const(0, w)
        for x in group:
            count = I.add(count, bv.resize_u(I, x, w))
        out.append(I.eq(count, I.const(m if len(group) == n else min(m, len(group)), w)))
    return out


def random_mask(rng, sparsity: str, k: int) -> list[int]:
    """A mask the metadata can spell, as Python ints: in every group the
    pattern's count of positions, chosen with ``rng`` (a random.Random)."""
    want, group = PATTERNS[sparsity]
    out = []
    for g in range(0, k, group):
        n = min(group, k - g)                 # a last group cut short keeps min(want, n)
        picked = set(rng.sample(range(n), min(want, n)))
        out += [int(i in picked) for i in range(n)]
    return out


def first_positions(sparsity: str, n: int) -> list[int]:
    """n mask bits selecting the first positions of every group (1100...
    for 2:4): a legal selection of padding zeros."""
    want, group = PATTERNS[sparsity]
    return [int(i % group < want) for i in range(n)]
