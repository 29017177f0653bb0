"""tcsmt's models against MMA-Sim (Xie et al., arXiv 2511.10909), an
independent bit-accurate simulator of NVIDIA and AMD matrix units.

``PAIRS`` is the table of which MMA-Sim instruction each shipped model
computes: one row per MMA-Sim configuration (instruction shapes that differ
only in M or N are one configuration; a model may compute several, such as
the k8 and k16 shapes of one architecture). Rows are plain tuples:

    (tcsmt model, MMA-Sim class, MMA-Sim architecture, shape and types)

MMA-Sim is optional (``pip install torch==2.13.0 && pip install mmasim``);
``operation`` imports it when a row is run and says in one line how to
install it when it is missing.
"""

from __future__ import annotations

from tcsmt.errors import UserError

PAIRS: list[tuple[str, str, str, str]] = [
    ("volta-fp16-fp32", "MMA", "Volta", "m8n8k4.f32.f16.f16.f32"),
    ("volta-fp16-fp16", "MMA", "Volta", "m8n8k4.f16.f16.f16.f16"),
    ("turing-fp16-fp32", "MMA", "Turing", "m16n8k8.f32.f16.f16.f32"),
    ("turing-fp16-fp16", "MMA", "Turing", "m16n8k8.f16.f16.f16.f16"),
    ("ampere-fp16-fp32", "MMA", "Ampere", "m16n8k16.f32.f16.f16.f32"),
    ("ampere-fp16-fp16", "MMA", "Ampere", "m16n8k16.f16.f16.f16.f16"),
    ("ampere-bf16-fp32", "MMA", "Ampere", "m16n8k16.f32.bf16.bf16.f32"),
    ("ampere-tf32-fp32", "MMA", "Ampere", "m16n8k8.f32.tf32.tf32.f32"),
    ("ada-fp16-fp32", "MMA", "Ada Lovelace", "m16n8k16.f32.f16.f16.f32"),
    ("ada-fp16-fp16", "MMA", "Ada Lovelace", "m16n8k16.f16.f16.f16.f16"),
    ("ada-bf16-fp32", "MMA", "Ada Lovelace", "m16n8k16.f32.bf16.bf16.f32"),
    ("ada-tf32-fp32", "MMA", "Ada Lovelace", "m16n8k8.f32.tf32.tf32.f32"),
    ("ada-e4m3-fp32", "MMA", "Ada Lovelace", "m16n8k32.f32.e4m3.e4m3.f32"),
    ("ada-e5m2-fp32", "MMA", "Ada Lovelace", "m16n8k32.f32.e5m2.e5m2.f32"),
    ("hopper-fp16-fp32", "WGMMA", "Hopper", "m64n8k16.f32.f16.f16"),
    ("hopper-fp16-fp16", "WGMMA", "Hopper", "m64n8k16.f16.f16.f16"),
    ("hopper-bf16-fp32", "WGMMA", "Hopper", "m64n8k16.f32.bf16.bf16"),
    ("hopper-tf32-fp32", "WGMMA", "Hopper", "m64n8k8.f32.tf32.tf32"),
    ("hopper-e4m3-fp32", "WGMMA", "Hopper", "m64n8k32.f32.e4m3.e4m3"),
    ("hopper-e5m2-fp32", "WGMMA", "Hopper", "m64n8k32.f32.e5m2.e5m2"),
    ("blackwell-fp16-fp32", "TCGen05MMA", "Blackwell", "m64n8k16.kind::f16.f32.f16.f16"),
    ("blackwell-fp16-fp16", "TCGen05MMA", "Blackwell", "m64n8k16.kind::f16.f16.f16.f16"),
    ("blackwell-bf16-fp32", "TCGen05MMA", "Blackwell", "m64n8k16.kind::f16.f32.bf16.bf16"),
    ("blackwell-tf32-fp32", "TCGen05MMA", "Blackwell", "m64n8k8.kind::tf32.f32.tf32.tf32"),
    ("blackwell-e4m3-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e4m3.e4m3"),
    ("blackwell-e5m2-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e5m2.e5m2"),
    ("cdna3-fp16-fp32", "MFMA", "CDNA3", "f32_32x32x8_f16"),
    ("cdna3-bf16-fp32", "MFMA", "CDNA3", "f32_32x32x8_bf16"),
]

# MMA-Sim's classes by name: (module under mmasim, class)
CLASSES = {"MMA": ("nv_ptx", "MMA"), "MMABlockScale": ("nv_ptx", "MMABlockScale"),
           "WGMMA": ("nv_ptx", "WGMMA"), "TCGen05MMA": ("nv_ptx", "TCGen05MMA"),
           "TCGen05MMABlockScale": ("nv_ptx", "TCGen05MMABlockScale"), "MFMA": ("amd", "MFMA")}

INSTALL = "install it with: pip install torch==2.13.0 && pip install mmasim"


def load_mmasim():
    """The mmasim package, or a UserError saying how to install it."""
    try:
        import mmasim.amd
        import mmasim.nv_ptx  # noqa: F401  (builds a small C++ extension on first import)
    except Exception as e:          # ImportError, or a failed build of its extension
        raise UserError(f"MMA-Sim is not available ({type(e).__name__}: {e}); {INSTALL}") from None
    return mmasim


def operation(cls: str, arch: str, shape: str):
    """MMA-Sim's object for one row of PAIRS."""
    mod = load_mmasim()
    where, name = CLASSES[cls]
    return getattr(getattr(mod, where), name)(arch, shape)


def rows_for(model: str) -> list[tuple[str, str, str, str]]:
    return [r for r in PAIRS if r[0] == model]
