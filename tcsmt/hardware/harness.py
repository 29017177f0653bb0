"""Hardware probes: run test vectors on a real matrix unit and read the bits back.

``tcsmt harness VECTORS.json --target cuda -o probe.cu`` writes a
self-contained CUDA program. Each vector runs as one warp and one matrix
instruction: a in row 0 of A, b in column 0 of B, c in C[0][0], every other
element zero. The program prints the bits of D[0][0] for every vector as one
JSON object of the observation schema (``tcsmt.hardware.observations``), which
``tcsmt identify`` reads.

The vectors file (``tcsmt plan`` writes it; result files carry the same keys)::

    {"formats": {"in": "float16", "c": "float32", "out": "float32"},
     "instruction": "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",  (optional)
     "vectors": [{"a": ["0x3c00", ...], "b": [...], "c": "0x3f800000"}, ...]}

a and b hold at most k terms of the instruction (shorter vectors are padded
with zeros). Inputs go into the program as raw bits and are placed in the
fragments bit for bit: nothing is converted through a float on the host.

The same vectors can be run through a shipped model instead of a GPU
(``simulated_observations``), and recorded data in the hwdata layout can be
turned into observations (``observations_from_hwdata``).
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path

from tcsmt import __version__
from tcsmt.errors import UserError
from tcsmt.hardware.instructions import Instruction, choose_instruction
from tcsmt.hardware.observations import (  # noqa: F401
    SCHEMA,
    ObservationSet,
    hex_bits,
    observation_dict,
    parse_formats,
    parse_observations,
    read_observations,
)
from tcsmt.model.formats import Format, get_format


@dataclass
class VectorSet:
    """Checked vectors: bit patterns in their formats (tf32 as 19-bit codes)."""
    fin: Format
    fc: Format
    fout: Format
    vectors: list[tuple[list[int], list[int], int]]
    instruction: str | None
    source: str
    sha256: str

    def formats(self) -> dict[str, str]:
        return {"in": self.fin.name, "c": self.fc.name, "out": self.fout.name}

    def pick_instruction(self, name: str | None = None) -> Instruction:
        """The instruction named on the command line, else the file's, else the default."""
        if name and self.instruction:
            a = choose_instruction(self.fin.name, self.fc.name, self.fout.name, name)
            b = choose_instruction(self.fin.name, self.fc.name, self.fout.name, self.instruction)
            if a != b:
                raise UserError(f"--instruction {a.name} differs from the file's instruction {b.name}")
            return a
        return choose_instruction(self.fin.name, self.fc.name, self.fout.name, name or self.instruction)

    def padded(self, k: int) -> list[tuple[list[int], list[int], int]]:
        """Every vector with a and b padded by +0 terms to k."""
        out = []
        for n, (a, b, c) in enumerate(self.vectors):
            if len(a) > k:
                raise UserError(f"{self.source}: vectors[{n}] has {len(a)} terms; the "
                                f"instruction takes at most k = {k}")
            out.append((a + [0] * (k - len(a)), b + [0] * (k - len(b)), c))
        return out


def parse_vectors(data, where: str, sha256: str = "") -> VectorSet:
    if not isinstance(data, dict):
        raise UserError(f"{where}: expected a JSON object with \"formats\" and \"vectors\"")
    fin, fc, fout = parse_formats(data.get("formats"), where)
    ins = data.get("instruction")
    if ins is not None and not isinstance(ins, str):
        raise UserError(f"{where}: \"instruction\" must be a string")
    vecs = data.get("vectors")
    if not isinstance(vecs, list) or not vecs:
        raise UserError(f"{where}: \"vectors\" must be a non-empty list")
    out = []
    for n, v in enumerate(vecs):
        at = f"{where}: vectors[{n}]"
        if not isinstance(v, dict):
            raise UserError(f"{at}: expected an object with a, b and c")
        terms = []
        for name in ("a", "b"):
            xs = v.get(name)
            if not isinstance(xs, list) or not xs:
                raise UserError(f"{at}.{name}: expected a non-empty list of hex patterns")
            terms.append([hex_bits(x, fin, f"{at}.{name}[{i}]") for i, x in enumerate(xs)])
        if len(terms[0]) != len(terms[1]):
            raise UserError(f"{at}: a has {len(terms[0])} terms and b has {len(terms[1])}")
        out.append((terms[0], terms[1], hex_bits(v.get("c"), fc, f"{at}.c")))
    return VectorSet(fin, fc, fout, out, ins, where, sha256)


def read_vectors(path: str | Path) -> VectorSet:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise UserError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UserError(f"{path}: not JSON: {getattr(e, 'msg', e)}") from None
    return parse_vectors(data, str(path), hashlib.sha256(raw).hexdigest())


# ---------------------------------------------------------------------------
# The CUDA program
# ---------------------------------------------------------------------------

def build_command(ins: Instruction, source: str = "probe.cu", exe: str = "probe") -> str:
    return f"nvcc -O2 -arch=sm_{ins.min_sm} {source} -o {exe}"


def cuda_program(vs: VectorSet, ins: Instruction, source_name: str = "probe.cu") -> str:
    """The complete CUDA source of a probe for these vectors."""
    from tcsmt.hardware.cuda import render
    return render(vs, ins, vs.padded(ins.k), source_name)


def write_probe(vectors_path: str | Path, out_path: str | Path, instruction: str | None = None,
                target: str = "cuda") -> tuple[Instruction, int]:
    """Write the probe program for a vectors file; (instruction, number of vectors)."""
    from tcsmt.fileio import write_text_atomic
    if target != "cuda":
        raise UserError(f"unknown target {target!r} (supported: cuda)")
    vs = read_vectors(vectors_path)
    ins = vs.pick_instruction(instruction)
    write_text_atomic(out_path, cuda_program(vs, ins, Path(out_path).name))
    return ins, len(vs.vectors)


# ---------------------------------------------------------------------------
# The same vectors through a model, and recorded data, as observations
# ---------------------------------------------------------------------------

def simulated_observations(vectors_file: str | Path, model, instruction: str | None = None) -> dict:
    """What the probe would print if the hardware computed exactly ``model``
    (a model name or ModelParams): the same JSON shape, source "simulated"."""
    from tcsmt.sim.dot import dot_bits
    from tcsmt.sim.dot import model as get_model
    vs = read_vectors(vectors_file)
    ins = vs.pick_instruction(instruction)
    p = get_model(model)
    if (p.fin.name, p.fc.name, p.fout.name) != (vs.fin.name, vs.fc.name, vs.fout.name):
        raise UserError(f"model {p.name} is for {p.fin.name}/{p.fc.name}/{p.fout.name}, "
                        f"the vectors are {vs.fin.name}/{vs.fc.name}/{vs.fout.name}")
    rows = [observation_dict(i, vs.fin, vs.fc, vs.fout, a, b, c, dot_bits(p, a, b, c))
            for i, (a, b, c) in enumerate(vs.padded(ins.k))]
    return {"schema": SCHEMA, "source": "simulated", "device": f"model {p.name}",
            "compute_capability": "none (simulated)", "instruction": ins.name,
            "formats": vs.formats(), "k": ins.k, "generator": f"tcsmt {__version__}",
            "vectors_sha256": vs.sha256, "layout_check": "ok", "observations": rows}


DEVICE_CC = {"V100": "7.0", "T4": "7.5", "A100": "8.0", "Ada": "8.9", "L40S": "8.9",
             "H100": "9.0", "H200": "9.0", "B200": "10.0"}


def observations_from_hwdata(folder: str | Path, output: str = "fp32", device: str | None = None,
                             limit: int | None = None) -> dict:
    """Rows of a recorded DEVICE/FORMAT folder as observations (JSON shape).

    The known problems of the recordings (``tcsmt.hardware.recorded.KNOWN_PROBLEMS``)
    are applied by rule: Hopper fp8 rows get c = +0 (the GPU ran wgmma with
    an accumulator starting at zero); with ``output="fp16"`` c is rounded to
    fp16 (round to nearest even) as the recording did. Every rule that
    applies is listed under "known_problems". ``limit`` keeps the first rows."""
    from tcsmt.hardware.recorded import F32, convert_exact, known_problems, read_folder
    from tcsmt.model.catalogue import arch_for_device
    if output not in ("fp32", "fp16"):
        raise UserError(f"output must be fp32 or fp16, not {output!r}")
    rec = read_folder(folder, device)
    if output not in rec.d:
        raise UserError(f"{folder}: no d_{rec.device}_{output} file")
    arch = arch_for_device(rec.device) or "unknown"
    problems = known_problems(arch, rec.folder, output)
    fout = get_format("float32" if output == "fp32" else "float16")
    fc = fout
    c_zero = any(kp.rule == "c_zero" for kp in problems)
    rows = []
    for i in range(rec.rows if limit is None else min(limit, rec.rows)):
        c32 = int(rec.c32[i])
        if c_zero:
            c = 0
        elif fc.name == "float16":
            v = F32.value(c32)
            c = fc.nan_bits() if v != v else fc.round_value(v, "rne", sign_of_zero=c32 >> 31)
        else:
            c = c32
        d = convert_exact(int(rec.d[output][i]), F32, fout, f"{folder} d row {i + 1}")
        rows.append(observation_dict(i, rec.in_format, fc, fout, [int(x) for x in rec.a[i]],
                                     [int(x) for x in rec.b[i]], c, d))
    fp8 = rec.folder.lower() in ("e4m3", "e5m2")
    if c_zero:
        instruction = "wgmma (recorded data; the accumulator started at zero)"
    elif fp8 and arch == "blackwell":
        instruction = "not recorded (possibly mma.sync, see data/hwdata/README.md)"
    else:
        instruction = "not recorded (MATLAB tensor-core toolbox data)"
    return {"schema": SCHEMA, "source": "hwdata", "device": rec.device,
            "compute_capability": DEVICE_CC.get(rec.device, f"unknown ({arch})"),
            "instruction": instruction, "formats": {"in": rec.in_format.name, "c": fc.name, "out": fout.name},
            "k": rec.k, "hwdata_folder": str(folder), "layout_check": "ok",
            "known_problems": [{"rule": kp.rule, "why": kp.why} for kp in problems],
            "observations": rows}


# ---------------------------------------------------------------------------
# Random vectors for checking a probe on a device
# ---------------------------------------------------------------------------

def random_vectors(formats: dict[str, str], k: int, n: int, seed: int,
                   exp_range: tuple[int, int] = (-6, 3), c_exp_range: tuple[int, int] = (-6, 5),
                   zero_fraction: float = 0.0) -> dict:
    """A vectors file (JSON shape) of n random vectors of k terms: random
    signs, unbiased exponents drawn from ``exp_range`` (clamped to the
    format's normal range), random fraction bits; about ``zero_fraction`` of
    the a terms are +0. Deterministic for a seed."""
    rng = random.Random(seed)
    fin, fc = get_format(formats["in"]), get_format(formats["c"])

    def draw(fmt: Format, lo: int, hi: int) -> int:
        e = rng.randint(max(lo, fmt.emin), min(hi, fmt.emax))
        frac = rng.getrandbits(fmt.frac_bits)
        if fmt.specials == "fn" and e == fmt.emax:
            frac = min(frac, fmt.max_frac_at_emax)
        return fmt.pack(rng.getrandbits(1), e + fmt.bias, frac)

    vecs = []
    for _ in range(n):
        a = [0 if rng.random() < zero_fraction else draw(fin, *exp_range) for _ in range(k)]
        b = [draw(fin, *exp_range) for _ in range(k)]
        c = draw(fc, *c_exp_range)
        vecs.append({"a": [fin.hex(x) for x in a], "b": [fin.hex(x) for x in b], "c": fc.hex(c)})
    return {"formats": {key: get_format(v).name for key, v in formats.items()}, "vectors": vecs}
