"""The vectors a probe runs: reading them, padding them, making random ones.

A vectors file (``tcsmt plan`` writes one)::

    {"formats": {"in": "float16", "c": "float32", "out": "float32"},
     "instruction": "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",  (optional)
     "vectors": [{"a": ["0x3c00", ...], "b": [...], "c": "0x3f800000"}, ...]}

Where A and B differ, "formats" names "a" and "b" instead of "in"; a
block-scaled instruction adds "scale" to "formats", "scale_block" (terms per
scale factor) at the top, and "scale_a" and "scale_b" (one hex pattern per
block of K) to every vector. A sparse instruction (mma.sp) adds "sparsity":
"2:4" at the top and "mask" (one 0 or 1 per term, 1 where the metadata
selects it: two of every four) to every vector. Optional "hypotheses":
[{"id", "label"}] with an
"outputs": {id: hex} per vector gives the d each hypothesis expects; the
probe then says, vector by vector, which hypotheses the device followed.

Every other file tcsmt writes that holds vectors is read the same way
(``parse_vector_file``):

* a result of ``diff``, ``find``, ``prove`` or a property (schema
  tcsmt-result/N): its hypotheses and their outputs come along, and
  its out format (and scale format and block, whose factors its vectors
  hold as "scale_a" and "scale_b") are those its hypotheses share;
* a coverage file (tcsmt-coverage/*): its gap-closing vectors, one set per
  device model (space) they were found for, in that model's formats;
* observations (tcsmt-observations/1): the inputs that ran, with the d the
  device returned as the hypothesis "observed";
* a plan (tcsmt-plan/1) is a vectors file. Plans shipped with tcsmt are
  found by name (``fp16-fp32``, ``fp16:fp32``) anywhere: ``find_vectors``.

a and b hold at most k terms of the instruction (shorter vectors are padded
with zeros, their missing scale factors with 1). Inputs go into the program
as raw bits and are placed in the fragments bit for bit: nothing is
converted through a float on the host.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from tcsmt.datapath.sparse import first_positions, random_mask
from tcsmt.errors import UserError
from tcsmt.instructions.instruction import Instruction
from tcsmt.instructions.table import choose_instruction
from tcsmt.model.formats import Format
from tcsmt.model.integers import int_format
from tcsmt.observed.observations import (
    FormatSet,
    hex_bits,
    parse_format_set,
    parse_mask,
    parse_scale_block,
    parse_sparsity,
)


@dataclass
class VectorSet:
    """Checked vectors: bit patterns in their formats (tf32 as 19-bit codes)."""
    fs: FormatSet
    vectors: list[tuple[list[int], list[int], int]]
    instruction: str | None
    source: str
    sha256: str
    scale_block: int = 0
    scales: list[tuple[list[int], list[int]]] = field(default_factory=list)
    hypotheses: list[tuple[str, str]] = field(default_factory=list)     # (id, label)
    expected: list[dict[str, int]] = field(default_factory=list)        # per vector: id -> d
    sparsity: str = "dense"
    masks: list[list[int]] = field(default_factory=list)                # per vector (sparse)

    @property
    def fin(self) -> Format:
        return self.fs.a

    @property
    def fb(self) -> Format:
        return self.fs.b

    @property
    def fc(self) -> Format:
        return self.fs.c

    @property
    def fout(self) -> Format:
        return self.fs.out

    def formats(self) -> dict[str, str]:
        return self.fs.record()

    def choose(self, name: str | None, target: str | None) -> Instruction:
        fs = self.fs
        return choose_instruction(fs.a.name, fs.c.name, fs.out.name, name, fb=fs.b.name,
                                  scale=fs.scale.name if fs.scale else "",
                                  scale_block=self.scale_block, target=target,
                                  sparsity=self.sparsity)

    def pick_instruction(self, name: str | None = None, target: str | None = None) -> Instruction:
        """The instruction named on the command line, else the file's, else the default."""
        if name and self.instruction:
            a, b = self.choose(name, target), self.choose(self.instruction, target)
            if a.name != b.name:     # the same instruction may be built for another target (sm_103a)
                raise UserError(f"--instruction {a.name} differs from the file's instruction {b.name}")
            return a
        return self.choose(name or self.instruction, target)

    def padded(self, k: int) -> list[tuple[list[int], list[int], int]]:
        """Every vector with a and b padded by +0 terms to k."""
        out = []
        for n, (a, b, c) in enumerate(self.vectors):
            if len(a) > k:
                raise UserError(f"{self.source}: vectors[{n}] has {len(a)} terms; the "
                                f"instruction takes at most k = {k}")
            out.append((a + [0] * (k - len(a)), b + [0] * (k - len(b)), c))
        return out

    def padded_scales(self, k: int) -> list[tuple[list[int], list[int]]]:
        """Every vector's scale factors, padded with 1 to k / scale_block."""
        sf = self.fs.scale
        if not self.scale_block or sf is None:
            return [([], []) for _ in self.vectors]
        one = scale_one(sf)
        blocks = k // self.scale_block
        return [(sa + [one] * (blocks - len(sa)), sb + [one] * (blocks - len(sb)))
                for sa, sb in self.scales]


    def padded_masks(self, k: int) -> list[list[int] | None]:
        """Every vector's mask padded to k (the padding's zero terms selected
        two of every four), None for every vector of a dense set."""
        if self.sparsity == "dense":
            return [None for _ in self.vectors]
        return [m + first_positions(self.sparsity, k - len(m)) for m in self.masks]


def scale_one(fmt: Format) -> int:
    """The encoding of 1 in a scale format (ue8m0: 0x7f, ue4m3: 0x38)."""
    return fmt.pack(0, fmt.bias, 0)


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------

def _hex(x):
    """A hex pattern, or the {"hex": ...} object of a result file."""
    return x.get("hex") if isinstance(x, dict) else x


def _terms(v: dict, name: str, fmt: Format, at: str) -> list[int]:
    xs = v.get(name)
    if not isinstance(xs, list) or not xs:
        raise UserError(f"{at}.{name}: expected a non-empty list of hex patterns")
    return [hex_bits(_hex(x), fmt, f"{at}.{name}[{i}]") for i, x in enumerate(xs)]


def _result_formats(data: dict, where: str) -> dict:
    """The formats of a result file, with the out format its hypotheses share."""
    f = data.get("formats")
    hyps = data.get("hypotheses")
    if not isinstance(f, dict) or not isinstance(hyps, list) or not hyps:
        raise UserError(f"{where}: a result file needs \"formats\" and \"hypotheses\"")
    params = [h.get("parameters", {}) if isinstance(h, dict) else {} for h in hyps]

    def shared(key: str, what: str):
        values = {json.dumps(p.get(key)) for p in params}
        if len(values) != 1:
            raise UserError(f"{where}: the hypotheses of a result file must share one {what}")
        return json.loads(values.pop())

    out = {"a": f.get("a"), "b": f.get("b"), "c": f.get("c"), "out": shared("out_format", "out format")}
    if out["out"] is None:
        raise UserError(f"{where}: the hypotheses of a result file name no out_format")
    scale = f.get("scale") or shared("scale_format", "scale format")
    if scale:
        out["scale"] = scale
        data.setdefault("scale_block", shared("scale_block", "scale block"))
    data.setdefault("sparsity", shared("sparsity", "sparsity") or "dense")
    return out


def _hypotheses(data: dict, where: str) -> list[tuple[str, str]]:
    hyps = data.get("hypotheses", [])
    if not isinstance(hyps, list):
        raise UserError(f"{where}: \"hypotheses\" must be a list of {{\"id\", \"label\"}}")
    out = []
    for n, h in enumerate(hyps):
        if not isinstance(h, dict) or not isinstance(h.get("id"), str) or not h["id"]:
            raise UserError(f"{where}: hypotheses[{n}] needs a non-empty string \"id\"")
        out.append((h["id"], str(h.get("label", h["id"]))))
    if len({i for i, _ in out}) != len(out):
        raise UserError(f"{where}: hypothesis ids must be unique")
    return out


def parse_vectors(data, where: str, sha256: str = "") -> VectorSet:
    if not isinstance(data, dict):
        raise UserError(f"{where}: expected a JSON object with \"formats\" and \"vectors\"")
    result = str(data.get("schema", "")).startswith("tcsmt-result/")
    fs = parse_format_set(_result_formats(data, where) if result else data.get("formats"), where)
    block = parse_scale_block(data, fs, None, where)
    ins = data.get("instruction")
    if ins is not None and not isinstance(ins, str):
        raise UserError(f"{where}: \"instruction\" must be a string")
    vecs = data.get("vectors")
    if not isinstance(vecs, list) or not vecs:
        raise UserError(f"{where}: \"vectors\" must be a non-empty list")
    hyps = _hypotheses(data, where)
    vs = VectorSet(fs, [], ins, where, sha256, block, hypotheses=hyps,
                   sparsity=parse_sparsity(data, where))
    for n, v in enumerate(vecs):
        _add_vector(vs, v, f"{where}: vectors[{n}]")
    return vs


def _add_vector(vs: VectorSet, v, at: str) -> None:
    fs = vs.fs
    if not isinstance(v, dict):
        raise UserError(f"{at}: expected an object with a, b and c")
    a, b = _terms(v, "a", fs.a, at), _terms(v, "b", fs.b, at)
    if len(a) != len(b):
        raise UserError(f"{at}: a has {len(a)} terms and b has {len(b)}")
    vs.vectors.append((a, b, hex_bits(_hex(v.get("c")), fs.c, f"{at}.c")))
    if vs.scale_block and fs.scale is not None:
        blocks = -(-len(a) // vs.scale_block)
        sa, sb = _terms(v, "scale_a", fs.scale, at), _terms(v, "scale_b", fs.scale, at)
        if len(sa) != blocks or len(sb) != blocks:
            raise UserError(f"{at}: {len(a)} terms take {blocks} scale factors each in scale_a "
                            f"and scale_b (blocks of {vs.scale_block})")
        vs.scales.append((sa, sb))
    if vs.sparsity != "dense":
        vs.masks.append(list(parse_mask(v, vs.sparsity, len(a), at)))
    outs = v.get("outputs", {})
    if vs.hypotheses and (not isinstance(outs, dict) or set(outs) != {i for i, _ in vs.hypotheses}):
        raise UserError(f"{at}.outputs: expected the d of every hypothesis")
    vs.expected.append({i: hex_bits(_hex(outs[i]), fs.out, f"{at}.outputs.{i}")
                        for i, _ in vs.hypotheses})


def read_json(path: str | Path) -> tuple[object, str]:
    """(decoded JSON, sha256 of its text) of a file (tcsmt.fileio.read_text's
    one-line errors)."""
    from tcsmt.fileio import read_text
    text = read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise UserError(f"{path}: not JSON: line {e.lineno} column {e.colno}: {e.msg}") from None
    except RecursionError:
        raise UserError(f"{path}: not JSON: nested too deep") from None
    except ValueError as e:     # an integer of more digits than Python converts
        raise UserError(f"{path}: not JSON tcsmt reads: {e}") from None
    return data, hashlib.sha256(text.encode("utf-8")).hexdigest()


def find_vectors(name: str | Path) -> Path:
    """A vectors file by path, else a plan shipped with tcsmt by name
    (``fp16-fp32``, ``fp16-fp32.json`` or ``fp16:fp32``)."""
    from tcsmt.fileio import data_folder
    path = Path(name)
    if path.exists() or path.suffix == ".json" and len(path.parts) > 1:
        return path
    stem = str(name).removesuffix(".json").replace(":", "-")
    shipped = data_folder("tcsmt.plans", "results/plans", "*.json")
    if shipped is not None and "/" not in stem and (shipped / f"{stem}.json").is_file():
        return shipped / f"{stem}.json"
    known = sorted(p.stem for p in shipped.glob("*.json")) if shipped is not None else []
    raise UserError(f"{name}: no such file, and no shipped plan of that name"
                    + (f" (shipped plans: {', '.join(known)})" if known else ""))


def read_vectors(path: str | Path, formats: str | None = None) -> VectorSet:
    """The vectors of any file tcsmt writes that holds them, or of a
    shipped plan by name; ``formats`` (IN:OUT) picks one set of a file
    that holds several (a coverage file)."""
    path = find_vectors(path)
    data, sha = read_json(path)
    return pick_set(parse_vector_file(data, str(path), sha), formats, str(path))


def pick_set(sets: list[VectorSet], formats: str | None, where: str) -> VectorSet:
    """The one set of vectors, or the one whose formats are ``formats``."""
    if formats:
        chosen = [vs for vs in sets if formats_label(vs.fs) == formats.replace(" ", "")]
        if not chosen:
            raise UserError(f"{where}: no vectors for formats {formats} (it has "
                            f"{', '.join(sorted({formats_label(vs.fs) for vs in sets}))})")
        sets = chosen
    if len(sets) > 1:
        merged = merge_sets(sets)
        if merged is None:
            have = ", ".join(f"{formats_label(vs.fs)} ({len(vs.vectors)} vectors)" for vs in sets)
            raise UserError(f"{where} holds vectors in several formats: {have}; pick one with "
                            "--formats IN:OUT")
        return merged
    return sets[0]


def formats_label(fs: FormatSet) -> str:
    from tcsmt.model.names import short_format
    ins = short_format(fs.a.name) + ("" if fs.b == fs.a else "," + short_format(fs.b.name))
    return f"{ins}:{short_format(fs.out.name)}"


def merge_sets(sets: list[VectorSet]) -> VectorSet | None:
    """Sets of one format set and scale block as one (without hypotheses,
    which differ from set to set); None if their formats differ."""
    first = sets[0]
    if any(vs.fs != first.fs or vs.scale_block != first.scale_block or vs.sparsity != first.sparsity
           for vs in sets):
        return None
    out = VectorSet(first.fs, [], first.instruction, first.source, first.sha256, first.scale_block,
                    sparsity=first.sparsity)
    for vs in sets:
        out.vectors += vs.vectors
        out.scales += vs.scales
        out.masks += vs.masks
        out.expected += [{} for _ in vs.vectors]
    return out


def parse_vector_file(data, where: str, sha256: str = "") -> list[VectorSet]:
    """Every set of vectors in a decoded file (see the module docstring)."""
    schema = str(data.get("schema", "")) if isinstance(data, dict) else ""
    if schema.startswith("tcsmt-coverage/"):
        return coverage_sets(data, where, sha256)
    if schema.startswith("tcsmt-observations/"):
        return [observation_set(data, where, sha256)]
    if schema.startswith("tcsmt-compare/"):
        raise UserError(f"{where}: the vectors of compare-algorithms are binary32 inputs of an "
                        "error-corrected GEMM, not operands of one matrix instruction")
    if schema.startswith(("tcsmt-identification/", "tcsmt-check/")):
        raise UserError(f"{where}: a {schema.split('/')[0].removeprefix('tcsmt-')} report holds "
                        "no vectors to run; give the observations or plan it was made from")
    return [parse_vectors(data, where, sha256)]


def coverage_sets(data: dict, where: str, sha256: str) -> list[VectorSet]:
    """A coverage file's vectors, one set per space (device model), in its
    base model's formats; the hypotheses differ from question to question
    and are left out."""
    from tcsmt.model.choose import choose
    spaces = {s.get("space"): s.get("base") for s in data.get("spaces", []) if isinstance(s, dict)}
    groups: dict[str, list] = {}
    for n, v in enumerate(data.get("vectors") or []):
        if not isinstance(v, dict) or v.get("space") not in spaces:
            raise UserError(f"{where}: vectors[{n}] names no space of the file")
        groups.setdefault(v["space"], []).append({k: v[k] for k in ("a", "b", "c") if k in v})
    if not groups:
        raise UserError(f"{where}: the coverage file holds no vectors (its suite's gaps were "
                        "all closed by the suite or proved)")
    out = []
    for space, vecs in groups.items():
        base = spaces[space]
        if not isinstance(base, str):
            raise UserError(f"{where}: space {space!r} names no base model")
        p = choose(base)
        fs = {"a": p.fin.name, "b": p.fb.name, "c": p.fc.name, "out": p.fout.name}
        out.append(parse_vectors({"formats": fs, "vectors": vecs}, f"{where} ({space})", sha256))
    return out


def observation_set(data: dict, where: str, sha256: str) -> VectorSet:
    """Observations as vectors, the device's d as the hypothesis "observed"."""
    from tcsmt.observed.observations import observation_dict, parse_observations
    obs = parse_observations(data, where)
    fs = FormatSet(obs.fin, obs.fb or obs.fin, obs.fc, obs.fout, obs.fscale)
    label = f"{obs.device} as observed"
    vecs = []
    for r in obs.rows:
        scales = (r.scale_a, r.scale_b) if obs.fscale is not None else None
        row = observation_dict(r.index, obs.fin, obs.fc, obs.fout, r.a, r.b, r.c, r.d, obs.fb,
                               scales, obs.fscale, r.mask or None)
        row["outputs"] = {"observed": row.pop("d")}
        vecs.append(row)
    doc: dict[str, object] = {"formats": fs.record(), "instruction": obs.instruction, "vectors": vecs,
           "hypotheses": [{"id": "observed", "label": label}], "sparsity": obs.sparsity}
    if obs.fscale is not None:
        doc["scale_block"] = obs.scale_block
    return parse_vectors(doc, where, sha256)


# ---------------------------------------------------------------------------
# Random vectors for checking a probe on a device
# ---------------------------------------------------------------------------

def random_vectors(formats: dict[str, str], k: int, n: int, seed: int,
                   exp_range: tuple[int, int] = (-6, 3), c_exp_range: tuple[int, int] = (-6, 5),
                   zero_fraction: float = 0.0, scale_block: int = 0,
                   sparsity: str = "dense") -> dict:
    """A vectors file (JSON shape) of n random vectors of k terms: random
    signs, unbiased exponents drawn from ``exp_range`` (clamped to the
    format's normal range), random fraction bits; about ``zero_fraction`` of
    the a terms are +0. With a "scale" format, scale factors 2^-2 .. 2^2 per
    block of ``scale_block`` terms; integers anywhere in their range (c
    within a few products of an end of s32 half the time); a sparse
    ``sparsity`` ("2:4") a random legal mask per vector. Deterministic for a
    seed."""
    rng = random.Random(seed)
    fs = parse_format_set(formats, "formats")
    if fs.scale is not None and (scale_block < 1 or k % scale_block):
        raise UserError(f"a scale format needs a scale_block dividing k = {k}")

    def draw(fmt: Format, lo: int, hi: int) -> int:
        if fmt.is_integer:
            if fmt.bits == 32 and rng.random() < 0.5:
                fi, near = int_format(fmt), rng.randrange(1 << 16)
                return fi.encode(fi.highest - near if rng.getrandbits(1) else fi.lowest + near)
            return rng.getrandbits(fmt.bits)
        e = rng.randint(max(lo, fmt.emin), min(hi, fmt.emax))
        frac = rng.getrandbits(fmt.frac_bits) if fmt.frac_bits else 0
        if fmt.specials == "fn" and e == fmt.emax:
            frac = min(frac, fmt.max_frac_at_emax)
        return fmt.pack(rng.getrandbits(1), e + fmt.bias, frac)

    def scales(sf: Format) -> list[str]:
        return [sf.hex(sf.pack(0, sf.bias + rng.randint(-2, 2), 0)) for _ in range(k // scale_block)]

    vecs = []
    for _ in range(n):
        a = [0 if rng.random() < zero_fraction else draw(fs.a, *exp_range) for _ in range(k)]
        b = [draw(fs.b, *exp_range) for _ in range(k)]
        v: dict[str, object] = {"a": [fs.a.hex(x) for x in a], "b": [fs.b.hex(x) for x in b],
             "c": fs.c.hex(draw(fs.c, *c_exp_range))}
        if fs.scale is not None:
            v["scale_a"], v["scale_b"] = scales(fs.scale), scales(fs.scale)
        if sparsity != "dense":
            v["mask"] = random_mask(rng, sparsity, k)
        vecs.append(v)
    out: dict[str, object] = {"formats": fs.record(), "vectors": vecs}
    if fs.scale is not None:
        out["scale_block"] = scale_block
    if sparsity != "dense":
        out["sparsity"] = sparsity
    return out
