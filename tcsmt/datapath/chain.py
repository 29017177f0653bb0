"""A dot product as a chain of blocks: which products each block takes,
one block's step (its products made, grouped and scaled, summed with its c
and rounded), how a block's result becomes the next block's c, and what
follows the last block. ``dot`` is that loop; the simulators that run a
long dot product (tcsmt.interp.program, the compiled kernels) record one
block's step once and run the same loop, so how blocks chain is said here
and nowhere else.

The chain of a dot product of length k (``chain_order``): the products in
the order the blocks take them (p.term_order; the raw-exponent window takes
them in order), cut into blocks of block_size products (with exact groups,
block_size / group_size groups of group_size products), the last block
holding the rest. Product k's scales are sa[k // scale_block] and
sb[k // scale_block]. Block 0 starts from c (from zero with c placed
"after"); block j + 1 from block j's rounded result unpacked from
result_format (``next_c``); with "separate" chaining every block is summed
from zero and its result added to the c so far (``block_step``).
"""

from __future__ import annotations

import math

from tcsmt.datapath import bv, sparse
from tcsmt.datapath.blocks import add_ieee, block
from tcsmt.datapath.integer import int_block
from tcsmt.datapath.products import multiply
from tcsmt.datapath.scales import apply_scales, group_sum
from tcsmt.datapath.stage import stage
from tcsmt.datapath.terms import (
    Term,
    exp_width,
    flush_in,
    result_format,
    unpack,
    unpack_input,
    widen,
)
from tcsmt.datapath.window import window_block
from tcsmt.model.formats import Format
from tcsmt.model.params import ModelParams

# ---------------------------------------------------------------------------
# Which products each block takes
# ---------------------------------------------------------------------------


def order_terms(p: ModelParams, prods: list) -> list:
    """Products in the order the blocks take them (p.term_order)."""
    if p.term_order == "pairs_mod4":
        first = [t for k, t in enumerate(prods) if k % 4 < 2]
        return first + [t for k, t in enumerate(prods) if k % 4 >= 2]
    return list(prods)


def chain_order(p: ModelParams, k: int):
    """The products of a dot product of length k in the order its blocks
    take them; block j takes positions j * block_size onwards: range(k)
    when that is their order (term_order "sequential"; the raw-exponent
    window takes the products in order), else a list. (Exact groups need
    term_order "sequential".)"""
    if p.scale_window_bits is not None or p.term_order == "sequential":
        return range(k)
    return order_terms(p, list(range(k)))


def block_count(p: ModelParams, k: int) -> int:
    return -(-k // p.block_size)


def scale_of(p: ModelParams, product: int) -> int:
    """The index of product k's scales (sa, sb) along K."""
    return product // p.scaling()[1]


def alone(p: ModelParams, k: int) -> bool:
    """Whether a dot product of length k is one block that the chaining
    treats apart: with "separate" chaining a single block sums c itself."""
    return p.chaining == "separate" and block_count(p, k) == 1


# ---------------------------------------------------------------------------
# One block
# ---------------------------------------------------------------------------

def first_c(I, p: ModelParams, c_term: Term, ew: int) -> Term:
    """The c block 0 starts from: c (as unpacked by unpack_input), or zero
    when c is added after the blocks."""
    if p.c_placement == "after":
        return unpack(I, p.fc, I.const(0, p.fc.bits), ew, False)
    return c_term


def next_c(I, p: ModelParams, bits, ew: int) -> Term:
    """A block's rounded result (bits of result_format) as the c of the next."""
    return unpack(I, result_format(p), bits, ew, flush_in(p))


def block_step(I, p: ModelParams, a: list, b: list, sa: list | None, sb: list | None, c_of,
               ew: int, single: bool = False, trace=None, ids=None):
    """One block: the words of its products' inputs a[i], b[i] (and, with a
    scale format, of each product's scales sa[i], sb[i]), and ``c_of()``
    the Term of the c it starts from (called once the products are made)
    -> the block's rounded result, bits of result_format. ``single``: the
    dot product is this block alone (see ``alone``). ``trace``: a dict of
    lists ("scales", "terms", "block": None to leave the block's stages
    out) the datapath's stages are written into (tcsmt.sim.dot's
    --explain), with ``ids``: (each term's index along the chain, each
    product's scale index) for their labels."""
    prods = list(products(I, p, a, b, ew))
    c = c_of()
    tr = None if trace is None else trace["block"]
    if p.scale_window_bits is not None:
        first = None if ids is None else min(ids[1])
        sc_a, sc_b = _scale_terms(I, p, sa or [], sb or [], ew, tr, ids and [j - first for j in ids[1]])
        return window_block(I, p, prods, c, sc_a, sc_b, result_format(p), ew, tr)
    terms = group_terms(I, p, prods, sa, sb, ew, trace, ids)
    if p.fout.is_integer:                # c's Term (sign, magnitude) as its two's complement word
        return int_block(I, p, terms, bv.neg_if(I, c.sign, c.sig), tr)
    if p.chaining == "separate" and not single:
        out = result_format(p)
        zero = unpack(I, p.fc, I.const(0, p.fc.bits), ew, False)
        summed = unpack(I, out, block(I, p, terms, zero, ew), ew, flush_in(p))
        return add_ieee(I, p, c, summed, out, p.c_rounding, ew)
    return block(I, p, terms, c, ew, tr)


@stage(params=0)
def products(I, p: ModelParams, a: list, b: list, ew: int) -> tuple[Term, ...]:
    """A block's products: the words a[i] and b[i] read as the model reads
    its inputs (unpack_input) and multiplied. One stage, so that an
    interpretation sharing stage results answers a block's products with
    one look-up (a tuple: a shared result is never changed)."""
    ta = [unpack_input(I, p, p.fin, x, ew) for x in a]
    tb = [unpack_input(I, p, p.fb, y, ew) for y in b]
    return tuple(multiply(I, x, y, p, ew) for x, y in zip(ta, tb))


def group_terms(I, p: ModelParams, prods: list[Term], sa, sb, ew: int, trace=None,
                ids=None) -> list[Term]:
    """The block's products in groups of group_size (each one exact sum),
    each times its scales (the words of its first product: sa[i], sb[i]
    per product), as the block register takes them."""
    g = p.group_size
    terms = prods if g == 1 else [group_sum(I, p, prods[i:i + g], ew) for i in range(0, len(prods), g)]
    if p.scale_format is not None:
        tr = None if trace is None else trace["scales"]
        sc_a, sc_b = _scale_terms(I, p, sa, sb, ew, tr, ids and ids[1])
        terms = [apply_scales(I, p, t, sc_a[i * g], sc_b[i * g]) for i, t in enumerate(terms)]
    if trace is not None:
        label = "group" if g > 1 else "product"
        for i, t in zip(ids[0], terms):
            trace["terms"].append((f"{label} {i}", t, "term"))
    return terms


def _scale_terms(I, p: ModelParams, sa: list, sb: list, ew: int, trace, labels):
    """Each product's scale words unpacked, every distinct word once (the
    products of a scale block share one word), the scales of a before
    those of b; traced as "scales j" with j from ``labels``."""
    done: dict = {}
    fs = p.scaling()[0]

    def unpack_all(words):
        out = []
        for x in words:
            if id(x) not in done:
                done[id(x)] = unpack(I, fs, x, ew, False)
            out.append(done[id(x)])
        return out
    ta, tb = unpack_all(sa), unpack_all(sb)
    if trace is not None:
        for j in sorted(set(labels)):
            i = labels.index(j)
            trace.append((f"scales {j}", (ta[i], tb[i]), "scales"))
    return ta, tb


def end(I, p: ModelParams, bits, c_term: Term, ew: int, trace=None):
    """After the last block: c added with one IEEE addition when placed
    "after", then the result in out_format with the model's NaN."""
    out = result_format(p)
    if p.c_placement == "after":
        bits = add_ieee(I, p, unpack(I, out, bits, ew, False), c_term, out, p.c_rounding, ew)
        if trace is not None:
            trace.append(("c added", bits, f"bits:{out.name}"))
    return finish(I, p, bits, out)


def finish(I, p: ModelParams, bits, out: Format):
    """Result bits in out_format, with the model's NaN (nan_bits, else
    out_format's: a NaN of a narrower result format, e8m13, is not widened
    with zero fraction bits but replaced)."""
    fout = p.fout
    bits = widen(I, bits, out, fout)
    nan = p.nan_bits if p.nan_bits is not None or out.bits == fout.bits or not fout.has_nan \
        else fout.hex(fout.nan_bits())
    if nan is not None:
        nan_val = fout.from_storage(int(nan, 16))
        is_nan = unpack(I, fout, bits, exp_width(p), False).nan
        bits = I.ite(is_nan, I.const(nan_val, fout.bits), bits)
    return bits


# ---------------------------------------------------------------------------
# The chain
# ---------------------------------------------------------------------------

def dot(I, p: ModelParams, a: list, b: list, c, trace=None, sa=None, sb=None, mask=None,
        step=None):
    """d = c + sum a_i b_i as bits of out_format, block after block.

    ``a`` and ``b`` are lists of words in in_format and b_format, ``c`` a
    word in c_format; with a scale format, ``sa`` and ``sb`` are the words
    of the scales of a and b, one per scale_block products. A dot product
    longer than block_size runs as consecutive blocks (see the module doc).
    Integer formats sum each block exactly (tcsmt.datapath.integer). A
    sparse model (p.sparsity) takes ``mask``, one 1-bit word per product,
    set where the metadata selects it (tcsmt.datapath.sparse): read
    compressed, a block that holds no selected product leaves the result
    of the block before it as it is. ``step`` stands in for ``block_step``
    (same arguments and result): tcsmt.search.blockwise makes each block's
    step a free word to prove two models equal block by block."""
    if len(a) != len(b) or not a:
        raise ValueError("a and b must be non-empty and of equal length")
    live = None
    if p.sparsity != "dense":
        a, b, live = sparse.select(I, p, a, b, mask)
    k, n = len(a), p.scale_count(len(a))
    if n and (sa is None or sb is None or len(sa) != n or len(sb) != n):
        raise ValueError(f"{p.name} needs {n} scales of a and {n} of b for {k} products")
    ew = exp_width(p)
    order, bs = chain_order(p, k), p.block_size
    blocks = block_count(p, k)
    parts: dict | None = None if trace is None else {"scales": [], "terms": [], "block": []}
    state: dict = {}
    bits = None

    def c_of():
        if bits is None:
            state["c"] = unpack_input(I, p, p.fc, c, ew, is_c=True)
            return first_c(I, p, state["c"], ew)
        return next_c(I, p, bits, ew)
    separate = p.chaining == "separate" and blocks > 1
    for j in range(blocks):
        rows = order[j * bs:(j + 1) * bs]
        scales = [scale_of(p, i) for i in rows] if n else None
        tr = parts
        if parts is not None and j < blocks - 1 and p.scale_window_bits is None:
            tr = {"scales": parts["scales"], "terms": parts["terms"], "block": None}
        new = (step or block_step)(I, p, [a[i] for i in rows], [b[i] for i in rows],
                         scales and [sa[s] for s in scales], scales and [sb[s] for s in scales],
                         c_of, ew, alone(p, k), tr, (_labels(p, j), scales))
        bits = new if live is None or not j else I.ite(live[j], new, bits)
        if parts is not None and p.scale_window_bits is None and not separate:
            parts["block"].append((f"block {j} result", bits, f"bits:{result_format(p).name}"))
    if parts is not None:
        trace.extend(parts["scales"] + parts["terms"] + parts["block"])
    return end(I, p, bits, state["c"], ew, trace)


def _labels(p: ModelParams, j: int) -> range:
    """The indices along the chain of block j's terms."""
    per = p.block_size // p.group_size
    return range(j * per, (j + 1) * per)


def split_step(p: ModelParams) -> int | None:
    """The products (a multiple of) which a dot product may be cut into parts
    so that each part, run by ``dot`` with the result of the part before as
    its c, gives the bits of the whole: with recursive chaining block k + 1
    starts from block k's result unpacked from result_format (``next_c``);
    a part's d is that result (``finish`` widens nothing when
    result_format, c_format and out_format are one format), and the next
    part unpacks its c as that same format with the same flushing. A cut at
    a block boundary (and at a scale block's) keeps every block's products.
    None when no cut keeps the bits: c added after the blocks, "separate"
    chaining (a part of one block adds c inside it), terms reordered across
    the whole K (pairs_mod4), a sparse model (read compressed, its slots
    span the whole K), or a block result held in another format than c
    (e8m13 blocks of binary32 d)."""
    fmt = result_format(p)
    if p.chaining != "recursive" or p.c_placement == "after" or p.term_order != "sequential" \
            or p.sparsity != "dense":
        return None
    if (fmt.name, fmt.exp_bits, fmt.frac_bits) != (p.fc.name, p.fc.exp_bits, p.fc.frac_bits) \
            or p.fc.name != p.fout.name:
        return None
    step = p.block_size
    if p.scale_format is not None:
        step = math.lcm(step, p.scaling()[1])
    return step


__all__ = ["alone", "block_count", "block_step", "chain_order", "dot", "end", "first_c", "next_c",
           "order_terms", "products", "scale_of", "split_step"]
