"""``tcsmt gemm``: D = C + A @ B from .npy files, as a modelled GPU computes it.

Bad input ends in a UserError, which the CLI prints as one line with exit
code 2.
"""

from __future__ import annotations

import click

from tcsmt.cli import options

EPILOG = (
    "Arrays are .npy files. NumPy saves ml_dtypes arrays without their type name: "
    "bfloat16 as '<V2', float8_e5m2 as '<f1' and every one-byte type (float8_e4m3fn, "
    "float6_e2m3fn, float6_e3m2fn, float4_e2m1fn, float8_e8m0fnu) as '<V1'; gemm reads "
    "'<V1' (and uint8 bit patterns) as the model's format for that operand, so name the "
    "model (or --formats) for fp6 and fp4. A float32 A and B feed a tf32 model when one is "
    "asked for (--formats tf32:fp32, or a tf32 model's name), which reads the top 19 bits of "
    "each value (the low 13 are dropped, as the hardware does); for any other model, "
    "--round-inputs rounds them into its formats. "
    "Block-scaled models (tcsmt models --scaled) take --scale-a and --scale-b.")

@click.command("gemm", epilog=EPILOG)
@click.argument("a_path", metavar="A.npy")
@click.argument("b_path", metavar="B.npy")
@click.argument("c_path", metavar="[C.npy]", required=False)
@click.option("-o", "--output", "out_path", required=True, metavar="D.npy", callback=options.checked_output,
              help="Where to write D (written whole or not at all).")
@click.option("--arch", required=True, metavar="ARCH",
              help="Architecture (volta, ampere, hopper...), model name or model file.")
@click.option("--formats", metavar="IN:OUT",
              help="Choose the architecture's model by formats, e.g. e4m3:fp32 "
                   "(default: by the dtypes of A and C).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a model parameter (repeatable), e.g. --set align_bits=0.")
@click.option("--round-inputs", type=click.Choice(["rne", "rz", "ru", "rd"]), default=None,
              help="Round float32/float64 A, B and C into the model's formats with this mode "
                   "(default: refuse them unless the model reads them).")
@click.option("--backend", type=click.Choice(["numpy", "cpu", "cuda"]), default=None,
              help="numpy (no compilation), cpu (the compiled kernel, every core) or cuda; "
                   "default: the fastest available (cpu once its kernel is compiled).")
@click.option("--scale-a", "sa_path", default=None, metavar="SA.npy",
              help="Block-scaled models: the scales of A, M x ceil(K / scale_block), one per row "
                   "of A and block along K (ue8m0: float8_e8m0fnu; ue4m3: float8_e4m3fn).")
@click.option("--scale-b", "sb_path", default=None, metavar="SB.npy",
              help="The scales of B, ceil(K / scale_block) x N, one per column of B and block.")
@options.json_format()
@options.scheduler
def gemm(a_path, b_path, c_path, out_path, arch, formats, overrides, round_inputs, backend,
         sa_path, sb_path, out_format):
    """D = C + A @ B (A: M x K, B: K x N, C: M x N, zeros when left out)
    bit for bit as the modelled matrix unit computes it, blocks chained
    along K as the architecture does. A bar on stderr shows the tiles done
    and the time left. With a scheduler, tiles of D (512 x 512, K in parts
    of 512 products cut at block boundaries) are tasks on the cluster."""
    from tcsmt import api
    from tcsmt.cli.progress import progress_bar

    with progress_bar("gemm") as progress:
        doc = api.gemm(a_path, b_path, c_path, output=out_path, arch=arch, formats=formats,
                       overrides=list(overrides), round_inputs=round_inputs, backend=backend,
                       scale_a=sa_path, scale_b=sb_path, progress=progress)
    if out_format == "json":
        options.echo_json(doc)
        return
    m, n = doc["shape"]
    click.echo(f"{doc['model']}: D is {m}x{n} {doc['dtype']}, written to {doc['output']}")
