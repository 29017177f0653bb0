"""The input vectors of the hardware checks in results/hardware/ (deterministic).

    python results/hardware/make_vectors.py OUTDIR

writes OUTDIR/<probe>.vectors.json for every probe in PROBES. Each file holds,
in this order (the observation indices say which group a row is from):

  facts    the published vectors of FACTS.md that the input format can hold
  cancel   50 random vectors whose c cancels the sum of the products
           (c = minus the exact sum rounded to c's format), so the result
           is small and shows the alignment bits
  wide     150 vectors with exponents over the whole normal range of the
           input format and about 1 in 8 subnormal inputs
  random   the rest (2000 vectors in all, facts included): random signs,
           exponents in [-6, 3] (c in [-6, 5]), random fraction bits, as in
           the recorded data
"""

from __future__ import annotations

import json
import random
import sys
from fractions import Fraction
from pathlib import Path

from tcsmt.errors import UserError
from tcsmt.instructions.table import choose_instruction
from tcsmt.model.formats import Format, get_format
from tcsmt.probes.harness import random_vectors
from tcsmt.sim.dot import to_bits

TOTAL = 2000
P = Fraction(1, 2**24)

# (name, formats, instruction)
PROBES = [
    ("mma-f16-f32", ("float16", "float32", "float32"), "mma"),
    ("mma-f16-f16", ("float16", "float16", "float16"), "mma"),
    ("mma-bf16-f32", ("bfloat16", "float32", "float32"), "mma"),
    ("mma-tf32-f32", ("tf32", "float32", "float32"), "mma"),
    ("wmma-tf32-f32", ("tf32", "float32", "float32"), "wmma"),
    ("mma-e4m3-f32", ("float8_e4m3fn", "float32", "float32"), "mma"),
    ("mma-e5m2-f32", ("float8_e5m2", "float32", "float32"), "mma"),
    ("wmma-f16-f32", ("float16", "float32", "float32"), "wmma"),
    ("wmma-f16-f16", ("float16", "float16", "float16"), "wmma"),
    ("wmma-bf16-f32", ("bfloat16", "float32", "float32"), "wmma"),
    ("mma-m16n8k8-f16-f32", ("float16", "float32", "float32"), "m16n8k8"),
    ("mma-m16n8k4-tf32-f32", ("tf32", "float32", "float32"), "m16n8k4"),
    ("mma-m8n8k4-f16-f32", ("float16", "float32", "float32"), "m8n8k4"),
]

# Probes not yet run on a GPU: Hopper's wgmma (sm_90a; the fp8 ones, with c non-zero,
# decide how the shipped Hopper fp8 models take c) and fp8 with an fp16 accumulator.
# Their format triples come after the ones above in the seed order, so the vectors of
# the probes above stay as they were recorded.
LATER = [
    ("wgmma-e4m3-f32", ("float8_e4m3fn", "float32", "float32"), "wgmma"),
    ("wgmma-e5m2-f32", ("float8_e5m2", "float32", "float32"), "wgmma"),
    ("wgmma-e4m3-f16", ("float8_e4m3fn", "float16", "float16"), "wgmma"),
    ("wgmma-e5m2-f16", ("float8_e5m2", "float16", "float16"), "wgmma"),
    ("wgmma-f16-f32", ("float16", "float32", "float32"), "wgmma"),
    ("wgmma-f16-f16", ("float16", "float16", "float16"), "wgmma"),
    ("wgmma-bf16-f32", ("bfloat16", "float32", "float32"), "wgmma"),
    ("wgmma-tf32-f32", ("tf32", "float32", "float32"), "wgmma"),
    ("mma-e4m3-f16", ("float8_e4m3fn", "float16", "float16"), "mma"),
    ("mma-e5m2-f16", ("float8_e5m2", "float16", "float16"), "mma"),
]
SEED_ORDER = sorted({p[1] for p in PROBES})
SEED_ORDER += sorted({p[1] for p in LATER} - set(SEED_ORDER))

# FACTS.md, "Published test vectors": (a, b, c) as exact values.
FACTS = [
    ([1], [1], -(1 - P)),
    ([1] * 4, [P] * 4, 1 - P),
    ([1, 1], [1, -P], -1 + P),
    ([1] * 4, [1, Fraction(3, 2), Fraction(7, 4), Fraction(15, 8)], Fraction(15, 8)),
    ([1] * 4, [2, 2 * P + P, 0, 0], 0),
    ([1] * 4, [-2, -(2 * P + P), 0, 0], 0),
    ([1] * 4, [1] * 4, 1 + 4 * P + 2 * P),
    ([1] * 4, [-1] * 4, -(1 + 4 * P + 2 * P)),
    ([P, P], [Fraction(1, 2), Fraction(1, 4)], 0),
    ([P], [4], 0),
    ([0], [0], Fraction(1, 2**149)),
    ([1] * 4, [P] * 4, 1),
    ([1, Fraction(1, 2**20)], [2, -Fraction(1, 2**20)], 0),
    ([2**15, 2**15, Fraction(1, 2**7)], [2**15, -(2**15), Fraction(1, 2**7)], 0),
    ([Fraction(1, 2**7), 2**15, 2**15], [Fraction(1, 2**7), -(2**15), 2**15], 0),
    ([Fraction("1.6484375") / 2**5, Fraction("1.765625") / 2**3, Fraction("1.5") * 2**15, 2**10],
     [Fraction("1.0615234375") * 2**9, Fraction("1.9833984375") * 2**6,
      Fraction("1.3330078125") / 2**11, Fraction(1, 2**7)],
     Fraction("1.999664306640625") * 2**4),
]


def facts_vectors(fin: Format, fc: Format, k: int) -> list[dict]:
    out = []
    for a, b, c in FACTS:
        try:
            av = [to_bits(fin, x) for x in a]
            bv = [to_bits(fin, x) for x in b]
            cv = to_bits(fc, c)
        except UserError:
            continue            # the format cannot hold this vector
        if len(av) <= k:
            out.append({"a": [fin.hex(x) for x in av], "b": [fin.hex(x) for x in bv], "c": fc.hex(cv)})
    return out


def draw(rng: random.Random, fmt: Format, lo: int, hi: int, subnormal: float = 0.0) -> int:
    sign = rng.getrandbits(1)
    if rng.random() < subnormal:
        return fmt.pack(sign, 0, rng.randrange(1, 1 << fmt.frac_bits))
    e = rng.randint(max(lo, fmt.emin), min(hi, fmt.emax))
    frac = rng.getrandbits(fmt.frac_bits)
    if fmt.specials == "fn" and e == fmt.emax:
        frac = min(frac, fmt.max_frac_at_emax)
    return fmt.pack(sign, e + fmt.bias, frac)


def cancel_vectors(rng, fin: Format, fc: Format, k: int, n: int) -> list[dict]:
    out = []
    while len(out) < n:
        a = [draw(rng, fin, -6, 3) for _ in range(k)]
        b = [draw(rng, fin, -6, 3) for _ in range(k)]
        s = sum((fin.value(x) * fin.value(y) for x, y in zip(a, b)), Fraction(0))
        c = fc.round_value(-s, "rne")
        if fc.classify(c) not in ("normal", "zero"):
            continue
        out.append({"a": [fin.hex(x) for x in a], "b": [fin.hex(x) for x in b], "c": fc.hex(c)})
    return out


def wide_vectors(rng, fin: Format, fc: Format, k: int, n: int) -> list[dict]:
    # Exponents up to a little under half the output's: sums of products rarely overflow.
    hi = min(fin.emax, fc.emax // 2 - (3 if fc.name == "float16" else 1))
    out = []
    for _ in range(n):
        a = [draw(rng, fin, fin.emin, hi, 0.125) for _ in range(k)]
        b = [draw(rng, fin, fin.emin, hi, 0.125) for _ in range(k)]
        c = draw(rng, fc, fc.emin if fc.name == "float16" else -60, min(fc.emax - 2, 2 * hi), 0.05)
        out.append({"a": [fin.hex(x) for x in a], "b": [fin.hex(x) for x in b], "c": fc.hex(c)})
    return out


def make(fmts: tuple[str, str, str], ins_name: str, seed: int) -> dict:
    fin, fc, fout = (get_format(x) for x in fmts)
    ins = choose_instruction(fin.name, fc.name, fout.name, ins_name)
    rng = random.Random(seed)
    vecs = facts_vectors(fin, fc, ins.k)
    vecs += cancel_vectors(rng, fin, fc, ins.k, 50)
    vecs += wide_vectors(rng, fin, fc, ins.k, 150)
    rest = random_vectors({"in": fin.name, "c": fc.name, "out": fout.name}, ins.k,
                          TOTAL - len(vecs), seed + 1)
    vecs += rest["vectors"]
    return {"formats": {"in": fin.name, "c": fc.name, "out": fout.name},
            "instruction": ins.name, "vectors": vecs}


def main(outdir: str) -> None:
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    for name, fmts, ins in PROBES + LATER:
        # One seed per format triple, so mma, wmma and wgmma of a triple run the same vectors.
        seed = 1000 + 17 * SEED_ORDER.index(fmts)
        data = make(fmts, ins, seed)
        (out / f"{name}.vectors.json").write_text(json.dumps(data) + "\n")
        print(name, len(data["vectors"]), data["instruction"])


if __name__ == "__main__":
    main(sys.argv[1])
