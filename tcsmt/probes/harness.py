"""Hardware probes: run test vectors on a real matrix unit and read the bits back.

``tcsmt harness VECTORS.json --target cuda -o probe.cu`` writes a
self-contained CUDA program (``--target hip``: a HIP program for AMD MFMA).
Each vector runs as one matrix instruction of one warp, warpgroup or
wavefront (``tcsmt.instructions.table`` says where the terms go). The
program prints the bits of D[0][0] for every vector as one JSON object of
the observation schema (``tcsmt.observed.observations``), which ``tcsmt
identify`` reads. The vectors file is described in ``tcsmt.observed.vectors``.

The same vectors can be run through a shipped model instead of a GPU
(``simulated_observations``), and recorded data in the hwdata layout can be
turned into observations (``observations_from_hwdata``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tcsmt.errors import UserError
from tcsmt.instructions.instruction import AMD_APIS, Instruction
from tcsmt.model.choose import Operands, choose
from tcsmt.model.formats import get_format
from tcsmt.model.params import ModelParams
from tcsmt.observed.observations import observation_dict, observations_document
from tcsmt.observed.vectors import VectorSet, parse_vectors, random_vectors, read_vectors
from tcsmt.version import __version__

__all__ = ["VectorSet", "cuda_program", "observations_from_hwdata",
           "parse_vectors", "program", "random_vectors", "read_vectors",
           "simulated_observations", "write_probe"]

TARGETS = ("cuda", "hip")


# ---------------------------------------------------------------------------
# The program
# ---------------------------------------------------------------------------

def program(vs: VectorSet, ins: Instruction, source_name: str = "probe.cu") -> str:
    """The complete source of a probe for these vectors (CUDA, or HIP for MFMA)."""
    if ins.api in AMD_APIS:
        from tcsmt.probes.hip import render as render_hip
        return render_hip(vs, ins, source_name)
    from tcsmt.probes.cuda import render
    return render(vs, ins, source_name)


def cuda_program(vs: VectorSet, ins: Instruction, source_name: str = "probe.cu") -> str:
    return program(vs, ins, source_name)


def write_probe(vectors_path: str | Path, out_path: str | Path, instruction: str | None = None,
                target: str = "cuda", models: Sequence = (), formats: str | None = None
                ) -> tuple[Instruction, int]:
    """Write the probe program for a vectors file (any file tcsmt writes
    that holds vectors, or a shipped plan's name); (instruction, number of
    vectors). Each of ``models`` (names, architectures or ModelParams)
    becomes a hypothesis whose d the probe compares with the device's,
    vector by vector, printing PASS or FAIL. ``formats`` (IN:OUT) picks
    one set of a file that holds several."""
    from tcsmt.fileio import write_text_atomic
    ins, count, text = probe_source(vectors_path, Path(out_path).name, instruction, target, models, formats)
    write_text_atomic(out_path, text)
    return ins, count


def probe_source(vectors_path: str | Path, source_name: str, instruction: str | None = None,
                 target: str = "cuda", models: Sequence = (), formats: str | None = None
                 ) -> tuple[Instruction, int, str]:
    """(instruction, number of vectors, program text) of write_probe."""
    if target not in TARGETS:
        raise UserError(f"unknown target {target!r} (supported: {', '.join(TARGETS)})")
    vs = read_vectors(vectors_path, formats)
    ins = vs.pick_instruction(instruction, target)
    for m in models:
        add_model_hypothesis(vs, ins, m)
    return ins, len(vs.vectors), program(vs, ins, source_name)


# ---------------------------------------------------------------------------
# The same vectors through a model, and recorded data, as observations
# ---------------------------------------------------------------------------

def model_outputs(vs: VectorSet, ins: Instruction, model) -> tuple[ModelParams, list[int]]:
    """(ModelParams, the d of every vector padded to the instruction's k)."""
    import numpy as np

    from tcsmt.observed.observations import check_scales, check_sparsity
    from tcsmt.sim.batch import dot_batch, supported
    from tcsmt.sim.dot import dot_bits
    p = vectors_model(model, vs, ins)
    want, have = (p.fin, p.fb, p.fc, p.fout), (vs.fin, vs.fb, vs.fc, vs.fout)
    if [f.name for f in want] != [f.name for f in have]:
        raise UserError(f"model {p.name} is for {'/'.join(f.name for f in want)}, "
                        f"the vectors are {'/'.join(f.name for f in have)}")
    check_scales(p, vs.fs.scale, vs.scale_block, "vectors")
    check_sparsity(p, vs.sparsity, "vectors")
    rows = vs.padded(ins.k)
    scales = [sc if vs.scale_block else (None, None) for sc in vs.padded_scales(ins.k)]
    if rows and vs.sparsity == "dense" and supported(p):    # the batch simulator: the same bits
        a, b, c = (np.array([r[i] for r in rows], dtype=np.uint64) for i in range(3))
        sab = [np.array([sc[i] for sc in scales], dtype=np.uint64) if vs.scale_block else None
               for i in range(2)]
        return p, [int(x) for x in dot_batch(p, a, b, c, sa_bits=sab[0], sb_bits=sab[1])]
    return p, [dot_bits(p, a, b, c, sc[0], sc[1], mask=m)
               for (a, b, c), sc, m in zip(rows, scales, vs.padded_masks(ins.k))]


def vectors_model(model, vs: VectorSet, ins: Instruction):
    """A model for these vectors: an architecture's model for their formats
    (the one for the instruction's family where it has several), a model
    name or file, or a ModelParams."""
    fs = vs.fs
    want = Operands((fs.a.name,), (fs.b.name,), (fs.c.name,), (fs.out.name,),
                    fs.scale.name if fs.scale else None, vs.scale_block, ins.name, vs.sparsity)
    return choose(model, None, (), want)


def add_model_hypothesis(vs: VectorSet, ins: Instruction, model) -> None:
    """Add a model's d for every vector as a hypothesis the probe checks."""
    p, outs = model_outputs(vs, ins, model)
    if p.name in {i for i, _ in vs.hypotheses}:
        raise UserError(f"hypothesis {p.name} is given twice")
    vs.hypotheses.append((p.name, p.name))
    for expected, d in zip(vs.expected, outs):
        expected[p.name] = d


def simulated_observations(vectors_file: str | Path, model, instruction: str | None = None,
                           target: str | None = None) -> dict:
    """What the probe would print if the hardware computed exactly ``model``
    (a model name or ModelParams): the same JSON shape, source "simulated"."""
    vs = read_vectors(vectors_file)
    ins = vs.pick_instruction(instruction, target)
    p, outs = model_outputs(vs, ins, model)
    rows = []
    for i, ((a, b, c), sc, m, d) in enumerate(zip(vs.padded(ins.k), vs.padded_scales(ins.k),
                                                  vs.padded_masks(ins.k), outs)):
        rows.append(observation_dict(i, vs.fin, vs.fc, vs.fout, a, b, c, d, vs.fb,
                                     sc if vs.scale_block else None, vs.fs.scale, m))
    return observations_document("simulated", f"model {p.name}", "none (simulated)", ins.name,
                                 vs.formats(), ins.k, rows, vs.scale_block, vs.sparsity,
                                 generator=f"tcsmt {__version__}", vectors_sha256=vs.sha256,
                                 layout_check="ok")


def observations_from_hwdata(folder: str | Path, output: str = "fp32", device: str | None = None,
                             limit: int | None = None) -> dict:
    """Rows of a recorded DEVICE/FORMAT folder as observations (JSON shape).

    The known problems of the recordings (``tcsmt.observed.recorded.KNOWN_PROBLEMS``)
    are applied by rule: Hopper fp8 rows get c = +0 (the GPU ran wgmma with
    an accumulator starting at zero); with ``output="fp16"`` c is rounded to
    fp16 (round to nearest even) as the recording did. Every rule that
    applies is listed under "known_problems". ``limit`` keeps the first rows."""
    from tcsmt.model.catalogue import DEVICE_CC, arch_for_device
    from tcsmt.observed.recorded import F32, convert_exact, known_problems, read_folder, rounded_c
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
    n = rec.rows if limit is None else min(limit, rec.rows)
    cs = [0] * n if c_zero else rounded_c(rec.c32[:n], fc, f"{folder} c").tolist()
    rows = []
    for i, c in enumerate(cs):
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
    return observations_document("hwdata", rec.device, DEVICE_CC.get(rec.device, f"unknown ({arch})"),
                                 instruction, {"in": rec.in_format.name, "c": fc.name, "out": fout.name},
                                 rec.k, rows, hwdata_folder=str(folder), layout_check="ok",
                                 known_problems=[{"rule": kp.rule, "why": kp.why} for kp in problems])
