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
    ("volta-fp16-fp32-cfp16", "MMA", "Volta", "m8n8k4.f32.f16.f16.f16"),
    ("volta-fp16-fp16", "MMA", "Volta", "m8n8k4.f16.f16.f16.f16"),
    ("turing-fp16-fp32", "MMA", "Turing", "m16n8k8.f32.f16.f16.f32"),
    ("turing-fp16-fp16", "MMA", "Turing", "m16n8k8.f16.f16.f16.f16"),
    ("turing-fp16-fp32-m8n8k4", "MMA", "Turing", "m8n8k4.f32.f16.f16.f32"),
    ("turing-fp16-fp32-cfp16-m8n8k4", "MMA", "Turing", "m8n8k4.f32.f16.f16.f16"),
    ("turing-fp16-fp16-m8n8k4", "MMA", "Turing", "m8n8k4.f16.f16.f16.f16"),
    ("ampere-fp64", "MMA", "Ampere", "m8n8k4.f64.f64.f64.f64"),
    ("ampere-tf32-fp32", "MMA", "Ampere", "m16n8k8.f32.tf32.tf32.f32"),
    ("ampere-tf32-fp32", "MMA", "Ampere", "m16n8k4.f32.tf32.tf32.f32"),
    ("ampere-fp16-fp32", "MMA", "Ampere", "m16n8k16.f32.f16.f16.f32"),
    ("ampere-fp16-fp16", "MMA", "Ampere", "m16n8k16.f16.f16.f16.f16"),
    ("ampere-bf16-fp32", "MMA", "Ampere", "m16n8k16.f32.bf16.bf16.f32"),
    ("ampere-bf16-fp32", "MMA", "Ampere", "m16n8k8.f32.bf16.bf16.f32"),
    ("ampere-fp16-fp32", "MMA", "Ampere", "m16n8k8.f32.f16.f16.f32"),
    ("ampere-fp16-fp16", "MMA", "Ampere", "m16n8k8.f16.f16.f16.f16"),
    ("ada-e5m2-fp32", "MMA", "Ada Lovelace", "m16n8k32.f32.e5m2.e5m2.f32"),
    ("ada-e5m2-e4m3-fp32", "MMA", "Ada Lovelace", "m16n8k32.f32.e5m2.e4m3.f32"),
    ("ada-e4m3-e5m2-fp32", "MMA", "Ada Lovelace", "m16n8k32.f32.e4m3.e5m2.f32"),
    ("ada-e4m3-fp32", "MMA", "Ada Lovelace", "m16n8k32.f32.e4m3.e4m3.f32"),
    ("ada-e5m2-fp16", "MMA", "Ada Lovelace", "m16n8k32.f16.e5m2.e5m2.f16"),
    ("ada-e5m2-e4m3-fp16", "MMA", "Ada Lovelace", "m16n8k32.f16.e5m2.e4m3.f16"),
    ("ada-e4m3-e5m2-fp16", "MMA", "Ada Lovelace", "m16n8k32.f16.e4m3.e5m2.f16"),
    ("ada-e4m3-fp16", "MMA", "Ada Lovelace", "m16n8k32.f16.e4m3.e4m3.f16"),
    ("ada-e5m2-fp32", "MMA", "Ada Lovelace", "m16n8k16.f32.e5m2.e5m2.f32"),
    ("ada-e5m2-e4m3-fp32", "MMA", "Ada Lovelace", "m16n8k16.f32.e5m2.e4m3.f32"),
    ("ada-e4m3-e5m2-fp32", "MMA", "Ada Lovelace", "m16n8k16.f32.e4m3.e5m2.f32"),
    ("ada-e4m3-fp32", "MMA", "Ada Lovelace", "m16n8k16.f32.e4m3.e4m3.f32"),
    ("ada-e5m2-fp16", "MMA", "Ada Lovelace", "m16n8k16.f16.e5m2.e5m2.f16"),
    ("ada-e5m2-e4m3-fp16", "MMA", "Ada Lovelace", "m16n8k16.f16.e5m2.e4m3.f16"),
    ("ada-e4m3-e5m2-fp16", "MMA", "Ada Lovelace", "m16n8k16.f16.e4m3.e5m2.f16"),
    ("ada-e4m3-fp16", "MMA", "Ada Lovelace", "m16n8k16.f16.e4m3.e4m3.f16"),
    ("ada-fp64", "MMA", "Ada Lovelace", "m8n8k4.f64.f64.f64.f64"),
    ("ada-tf32-fp32", "MMA", "Ada Lovelace", "m16n8k8.f32.tf32.tf32.f32"),
    ("ada-tf32-fp32", "MMA", "Ada Lovelace", "m16n8k4.f32.tf32.tf32.f32"),
    ("ada-fp16-fp32", "MMA", "Ada Lovelace", "m16n8k16.f32.f16.f16.f32"),
    ("ada-fp16-fp16", "MMA", "Ada Lovelace", "m16n8k16.f16.f16.f16.f16"),
    ("ada-bf16-fp32", "MMA", "Ada Lovelace", "m16n8k16.f32.bf16.bf16.f32"),
    ("ada-bf16-fp32", "MMA", "Ada Lovelace", "m16n8k8.f32.bf16.bf16.f32"),
    ("ada-fp16-fp32", "MMA", "Ada Lovelace", "m16n8k8.f32.f16.f16.f32"),
    ("ada-fp16-fp16", "MMA", "Ada Lovelace", "m16n8k8.f16.f16.f16.f16"),
    ("hopper-fp64", "MMA", "Hopper", "m16n8k16.f64.f64.f64.f64"),
    ("hopper-fp64", "MMA", "Hopper", "m16n8k8.f64.f64.f64.f64"),
    ("hopper-fp64", "MMA", "Hopper", "m16n8k4.f64.f64.f64.f64"),
    ("hopper-tf32-fp32", "MMA", "Hopper", "m16n8k8.f32.tf32.tf32.f32"),
    ("hopper-tf32-fp32", "MMA", "Hopper", "m16n8k4.f32.tf32.tf32.f32"),
    ("hopper-fp16-fp32", "MMA", "Hopper", "m16n8k16.f32.f16.f16.f32"),
    ("hopper-fp16-fp16", "MMA", "Hopper", "m16n8k16.f16.f16.f16.f16"),
    ("hopper-bf16-fp32", "MMA", "Hopper", "m16n8k16.f32.bf16.bf16.f32"),
    ("hopper-bf16-fp32", "MMA", "Hopper", "m16n8k8.f32.bf16.bf16.f32"),
    ("hopper-fp16-fp32", "MMA", "Hopper", "m16n8k8.f32.f16.f16.f32"),
    ("hopper-fp16-fp16", "MMA", "Hopper", "m16n8k8.f16.f16.f16.f16"),
    ("hopper-tf32-fp32", "WGMMA", "Hopper", "m64n8k8.f32.tf32.tf32"),
    ("hopper-fp16-fp32", "WGMMA", "Hopper", "m64n8k16.f32.f16.f16"),
    ("hopper-fp16-fp16", "WGMMA", "Hopper", "m64n8k16.f16.f16.f16"),
    ("hopper-bf16-fp32", "WGMMA", "Hopper", "m64n8k16.f32.bf16.bf16"),
    ("hopper-e5m2-fp32", "WGMMA", "Hopper", "m64n8k32.f32.e5m2.e5m2"),
    ("hopper-e5m2-e4m3-fp32", "WGMMA", "Hopper", "m64n8k32.f32.e5m2.e4m3"),
    ("hopper-e4m3-e5m2-fp32", "WGMMA", "Hopper", "m64n8k32.f32.e4m3.e5m2"),
    ("hopper-e4m3-fp32", "WGMMA", "Hopper", "m64n8k32.f32.e4m3.e4m3"),
    ("hopper-e5m2-fp16", "WGMMA", "Hopper", "m64n8k32.f16.e5m2.e5m2"),
    ("hopper-e5m2-e4m3-fp16", "WGMMA", "Hopper", "m64n8k32.f16.e5m2.e4m3"),
    ("hopper-e4m3-e5m2-fp16", "WGMMA", "Hopper", "m64n8k32.f16.e4m3.e5m2"),
    ("hopper-e4m3-fp16", "WGMMA", "Hopper", "m64n8k32.f16.e4m3.e4m3"),
    ("blackwell-fp64", "MMA", "Blackwell", "m8n8k4.f64.f64.f64.f64"),
    ("blackwell-tf32-fp32", "MMA", "Blackwell", "m16n8k8.f32.tf32.tf32.f32"),
    ("blackwell-tf32-fp32", "MMA", "Blackwell", "m16n8k4.f32.tf32.tf32.f32"),
    ("blackwell-fp16-fp32", "MMA", "Blackwell", "m16n8k16.f32.f16.f16.f32"),
    ("blackwell-fp16-fp16", "MMA", "Blackwell", "m16n8k16.f16.f16.f16.f16"),
    ("blackwell-bf16-fp32", "MMA", "Blackwell", "m16n8k16.f32.bf16.bf16.f32"),
    ("blackwell-bf16-fp32", "MMA", "Blackwell", "m16n8k8.f32.bf16.bf16.f32"),
    ("blackwell-fp16-fp32", "MMA", "Blackwell", "m16n8k8.f32.f16.f16.f32"),
    ("blackwell-fp16-fp16", "MMA", "Blackwell", "m16n8k8.f16.f16.f16.f16"),
    ("blackwell-tf32-fp32", "TCGen05MMA", "Blackwell", "m64n8k8.kind::tf32.f32.tf32.tf32"),
    ("blackwell-fp16-fp32", "TCGen05MMA", "Blackwell", "m64n8k16.kind::f16.f32.f16.f16"),
    ("blackwell-bf16-fp32", "TCGen05MMA", "Blackwell", "m64n8k16.kind::f16.f32.bf16.bf16"),
    ("blackwell-fp16-fp16", "TCGen05MMA", "Blackwell", "m64n8k16.kind::f16.f16.f16.f16"),
    ("blackwell-e5m2-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e5m2.e5m2"),
    ("blackwell-e5m2-e4m3-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e5m2.e4m3"),
    ("blackwell-e5m2-e3m2-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e5m2.e3m2"),
    ("blackwell-e5m2-e2m3-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e5m2.e2m3"),
    ("blackwell-e5m2-e2m1-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e5m2.e2m1"),
    ("blackwell-e4m3-e5m2-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e4m3.e5m2"),
    ("blackwell-e4m3-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e4m3.e4m3"),
    ("blackwell-e4m3-e3m2-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e4m3.e3m2"),
    ("blackwell-e4m3-e2m3-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e4m3.e2m3"),
    ("blackwell-e4m3-e2m1-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e4m3.e2m1"),
    ("blackwell-e3m2-e5m2-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e3m2.e5m2"),
    ("blackwell-e3m2-e4m3-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e3m2.e4m3"),
    ("blackwell-e3m2-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e3m2.e3m2"),
    ("blackwell-e3m2-e2m3-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e3m2.e2m3"),
    ("blackwell-e3m2-e2m1-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e3m2.e2m1"),
    ("blackwell-e2m3-e5m2-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e2m3.e5m2"),
    ("blackwell-e2m3-e4m3-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e2m3.e4m3"),
    ("blackwell-e2m3-e3m2-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e2m3.e3m2"),
    ("blackwell-e2m3-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e2m3.e2m3"),
    ("blackwell-e2m3-e2m1-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e2m3.e2m1"),
    ("blackwell-e2m1-e5m2-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e2m1.e5m2"),
    ("blackwell-e2m1-e4m3-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e2m1.e4m3"),
    ("blackwell-e2m1-e3m2-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e2m1.e3m2"),
    ("blackwell-e2m1-e2m3-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e2m1.e2m3"),
    ("blackwell-e2m1-fp32", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f32.e2m1.e2m1"),
    ("blackwell-e5m2-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e5m2.e5m2"),
    ("blackwell-e5m2-e4m3-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e5m2.e4m3"),
    ("blackwell-e5m2-e3m2-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e5m2.e3m2"),
    ("blackwell-e5m2-e2m3-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e5m2.e2m3"),
    ("blackwell-e5m2-e2m1-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e5m2.e2m1"),
    ("blackwell-e4m3-e5m2-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e4m3.e5m2"),
    ("blackwell-e4m3-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e4m3.e4m3"),
    ("blackwell-e4m3-e3m2-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e4m3.e3m2"),
    ("blackwell-e4m3-e2m3-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e4m3.e2m3"),
    ("blackwell-e4m3-e2m1-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e4m3.e2m1"),
    ("blackwell-e3m2-e5m2-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e3m2.e5m2"),
    ("blackwell-e3m2-e4m3-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e3m2.e4m3"),
    ("blackwell-e3m2-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e3m2.e3m2"),
    ("blackwell-e3m2-e2m3-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e3m2.e2m3"),
    ("blackwell-e3m2-e2m1-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e3m2.e2m1"),
    ("blackwell-e2m3-e5m2-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e2m3.e5m2"),
    ("blackwell-e2m3-e4m3-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e2m3.e4m3"),
    ("blackwell-e2m3-e3m2-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e2m3.e3m2"),
    ("blackwell-e2m3-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e2m3.e2m3"),
    ("blackwell-e2m3-e2m1-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e2m3.e2m1"),
    ("blackwell-e2m1-e5m2-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e2m1.e5m2"),
    ("blackwell-e2m1-e4m3-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e2m1.e4m3"),
    ("blackwell-e2m1-e3m2-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e2m1.e3m2"),
    ("blackwell-e2m1-e2m3-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e2m1.e2m3"),
    ("blackwell-e2m1-fp16", "TCGen05MMA", "Blackwell", "m64n8k32.kind::f8f6f4.f16.e2m1.e2m1"),
    ("blackwell-mxf8f6f4-e5m2", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e5m2.e5m2.ue8m0"),
    ("blackwell-mxf8f6f4-e5m2-e4m3", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e5m2.e4m3.ue8m0"),
    ("blackwell-mxf8f6f4-e5m2-e3m2", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e5m2.e3m2.ue8m0"),
    ("blackwell-mxf8f6f4-e5m2-e2m3", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e5m2.e2m3.ue8m0"),
    ("blackwell-mxf8f6f4-e5m2-e2m1", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e5m2.e2m1.ue8m0"),
    ("blackwell-mxf8f6f4-e4m3-e5m2", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e4m3.e5m2.ue8m0"),
    ("blackwell-mxf8f6f4-e4m3", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e4m3.e4m3.ue8m0"),
    ("blackwell-mxf8f6f4-e4m3-e3m2", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e4m3.e3m2.ue8m0"),
    ("blackwell-mxf8f6f4-e4m3-e2m3", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e4m3.e2m3.ue8m0"),
    ("blackwell-mxf8f6f4-e4m3-e2m1", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e4m3.e2m1.ue8m0"),
    ("blackwell-mxf8f6f4-e3m2-e5m2", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e3m2.e5m2.ue8m0"),
    ("blackwell-mxf8f6f4-e3m2-e4m3", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e3m2.e4m3.ue8m0"),
    ("blackwell-mxf8f6f4-e3m2", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e3m2.e3m2.ue8m0"),
    ("blackwell-mxf8f6f4-e3m2-e2m3", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e3m2.e2m3.ue8m0"),
    ("blackwell-mxf8f6f4-e3m2-e2m1", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e3m2.e2m1.ue8m0"),
    ("blackwell-mxf8f6f4-e2m3-e5m2", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e2m3.e5m2.ue8m0"),
    ("blackwell-mxf8f6f4-e2m3-e4m3", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e2m3.e4m3.ue8m0"),
    ("blackwell-mxf8f6f4-e2m3-e3m2", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e2m3.e3m2.ue8m0"),
    ("blackwell-mxf8f6f4-e2m3", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e2m3.e2m3.ue8m0"),
    ("blackwell-mxf8f6f4-e2m3-e2m1", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e2m3.e2m1.ue8m0"),
    ("blackwell-mxf8f6f4-e2m1-e5m2", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e2m1.e5m2.ue8m0"),
    ("blackwell-mxf8f6f4-e2m1-e4m3", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e2m1.e4m3.ue8m0"),
    ("blackwell-mxf8f6f4-e2m1-e3m2", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e2m1.e3m2.ue8m0"),
    ("blackwell-mxf8f6f4-e2m1-e2m3", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e2m1.e2m3.ue8m0"),
    ("blackwell-mxf8f6f4-e2m1", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k32.kind::mxf8f6f4.block32.f32.e2m1.e2m1.ue8m0"),
    ("blackwell-mxf4", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k64.kind::mxf4.block32.f32.e2m1.e2m1.ue8m0"),
    ("blackwell-mxf4nvf4-b32", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k64.kind::mxf4nvf4.block32.f32.e2m1.e2m1.ue8m0"),
    ("blackwell-mxf4nvf4-b16", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.ue8m0"),
    ("blackwell-nvfp4", "TCGen05MMABlockScale", "Blackwell",
     "m128n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3"),
    ("rtx-blackwell-e5m2-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e5m2.e5m2.f32"),
    ("rtx-blackwell-e5m2-e4m3-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e5m2.e4m3.f32"),
    ("rtx-blackwell-e5m2-e3m2-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e5m2.e3m2.f32"),
    ("rtx-blackwell-e5m2-e2m3-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e5m2.e2m3.f32"),
    ("rtx-blackwell-e5m2-e2m1-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e5m2.e2m1.f32"),
    ("rtx-blackwell-e4m3-e5m2-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e4m3.e5m2.f32"),
    ("rtx-blackwell-e4m3-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e4m3.e4m3.f32"),
    ("rtx-blackwell-e4m3-e3m2-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e4m3.e3m2.f32"),
    ("rtx-blackwell-e4m3-e2m3-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e4m3.e2m3.f32"),
    ("rtx-blackwell-e4m3-e2m1-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e4m3.e2m1.f32"),
    ("rtx-blackwell-e3m2-e5m2-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e3m2.e5m2.f32"),
    ("rtx-blackwell-e3m2-e4m3-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e3m2.e4m3.f32"),
    ("rtx-blackwell-e3m2-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e3m2.e3m2.f32"),
    ("rtx-blackwell-e3m2-e2m3-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e3m2.e2m3.f32"),
    ("rtx-blackwell-e3m2-e2m1-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e3m2.e2m1.f32"),
    ("rtx-blackwell-e2m3-e5m2-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e2m3.e5m2.f32"),
    ("rtx-blackwell-e2m3-e4m3-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e2m3.e4m3.f32"),
    ("rtx-blackwell-e2m3-e3m2-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e2m3.e3m2.f32"),
    ("rtx-blackwell-e2m3-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e2m3.e2m3.f32"),
    ("rtx-blackwell-e2m3-e2m1-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e2m3.e2m1.f32"),
    ("rtx-blackwell-e2m1-e5m2-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e2m1.e5m2.f32"),
    ("rtx-blackwell-e2m1-e4m3-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e2m1.e4m3.f32"),
    ("rtx-blackwell-e2m1-e3m2-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e2m1.e3m2.f32"),
    ("rtx-blackwell-e2m1-e2m3-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e2m1.e2m3.f32"),
    ("rtx-blackwell-e2m1-fp32", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f32.e2m1.e2m1.f32"),
    ("rtx-blackwell-e5m2-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e5m2.e5m2.f16"),
    ("rtx-blackwell-e5m2-e4m3-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e5m2.e4m3.f16"),
    ("rtx-blackwell-e5m2-e3m2-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e5m2.e3m2.f16"),
    ("rtx-blackwell-e5m2-e2m3-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e5m2.e2m3.f16"),
    ("rtx-blackwell-e5m2-e2m1-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e5m2.e2m1.f16"),
    ("rtx-blackwell-e4m3-e5m2-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e4m3.e5m2.f16"),
    ("rtx-blackwell-e4m3-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e4m3.e4m3.f16"),
    ("rtx-blackwell-e4m3-e3m2-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e4m3.e3m2.f16"),
    ("rtx-blackwell-e4m3-e2m3-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e4m3.e2m3.f16"),
    ("rtx-blackwell-e4m3-e2m1-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e4m3.e2m1.f16"),
    ("rtx-blackwell-e3m2-e5m2-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e3m2.e5m2.f16"),
    ("rtx-blackwell-e3m2-e4m3-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e3m2.e4m3.f16"),
    ("rtx-blackwell-e3m2-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e3m2.e3m2.f16"),
    ("rtx-blackwell-e3m2-e2m3-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e3m2.e2m3.f16"),
    ("rtx-blackwell-e3m2-e2m1-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e3m2.e2m1.f16"),
    ("rtx-blackwell-e2m3-e5m2-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e2m3.e5m2.f16"),
    ("rtx-blackwell-e2m3-e4m3-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e2m3.e4m3.f16"),
    ("rtx-blackwell-e2m3-e3m2-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e2m3.e3m2.f16"),
    ("rtx-blackwell-e2m3-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e2m3.e2m3.f16"),
    ("rtx-blackwell-e2m3-e2m1-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e2m3.e2m1.f16"),
    ("rtx-blackwell-e2m1-e5m2-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e2m1.e5m2.f16"),
    ("rtx-blackwell-e2m1-e4m3-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e2m1.e4m3.f16"),
    ("rtx-blackwell-e2m1-e3m2-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e2m1.e3m2.f16"),
    ("rtx-blackwell-e2m1-e2m3-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e2m1.e2m3.f16"),
    ("rtx-blackwell-e2m1-fp16", "MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4.f16.e2m1.e2m1.f16"),
    ("rtx-blackwell-e5m2-fp32", "MMA", "RTX Blackwell", "m16n8k32.f32.e5m2.e5m2.f32"),
    ("rtx-blackwell-e5m2-e4m3-fp32", "MMA", "RTX Blackwell", "m16n8k32.f32.e5m2.e4m3.f32"),
    ("rtx-blackwell-e4m3-e5m2-fp32", "MMA", "RTX Blackwell", "m16n8k32.f32.e4m3.e5m2.f32"),
    ("rtx-blackwell-e4m3-fp32", "MMA", "RTX Blackwell", "m16n8k32.f32.e4m3.e4m3.f32"),
    ("rtx-blackwell-e5m2-fp16", "MMA", "RTX Blackwell", "m16n8k32.f16.e5m2.e5m2.f16"),
    ("rtx-blackwell-e5m2-e4m3-fp16", "MMA", "RTX Blackwell", "m16n8k32.f16.e5m2.e4m3.f16"),
    ("rtx-blackwell-e4m3-e5m2-fp16", "MMA", "RTX Blackwell", "m16n8k32.f16.e4m3.e5m2.f16"),
    ("rtx-blackwell-e4m3-fp16", "MMA", "RTX Blackwell", "m16n8k32.f16.e4m3.e4m3.f16"),
    ("rtx-blackwell-e5m2-fp32", "MMA", "RTX Blackwell", "m16n8k16.f32.e5m2.e5m2.f32"),
    ("rtx-blackwell-e5m2-e4m3-fp32", "MMA", "RTX Blackwell", "m16n8k16.f32.e5m2.e4m3.f32"),
    ("rtx-blackwell-e4m3-e5m2-fp32", "MMA", "RTX Blackwell", "m16n8k16.f32.e4m3.e5m2.f32"),
    ("rtx-blackwell-e4m3-fp32", "MMA", "RTX Blackwell", "m16n8k16.f32.e4m3.e4m3.f32"),
    ("rtx-blackwell-e5m2-fp16", "MMA", "RTX Blackwell", "m16n8k16.f16.e5m2.e5m2.f16"),
    ("rtx-blackwell-e5m2-e4m3-fp16", "MMA", "RTX Blackwell", "m16n8k16.f16.e5m2.e4m3.f16"),
    ("rtx-blackwell-e4m3-e5m2-fp16", "MMA", "RTX Blackwell", "m16n8k16.f16.e4m3.e5m2.f16"),
    ("rtx-blackwell-e4m3-fp16", "MMA", "RTX Blackwell", "m16n8k16.f16.e4m3.e4m3.f16"),
    ("rtx-blackwell-fp64", "MMA", "RTX Blackwell", "m8n8k4.f64.f64.f64.f64"),
    ("rtx-blackwell-tf32-fp32", "MMA", "RTX Blackwell", "m16n8k8.f32.tf32.tf32.f32"),
    ("rtx-blackwell-tf32-fp32", "MMA", "RTX Blackwell", "m16n8k4.f32.tf32.tf32.f32"),
    ("rtx-blackwell-fp16-fp32", "MMA", "RTX Blackwell", "m16n8k16.f32.f16.f16.f32"),
    ("rtx-blackwell-fp16-fp16", "MMA", "RTX Blackwell", "m16n8k16.f16.f16.f16.f16"),
    ("rtx-blackwell-bf16-fp32", "MMA", "RTX Blackwell", "m16n8k16.f32.bf16.bf16.f32"),
    ("rtx-blackwell-bf16-fp32", "MMA", "RTX Blackwell", "m16n8k8.f32.bf16.bf16.f32"),
    ("rtx-blackwell-fp16-fp32", "MMA", "RTX Blackwell", "m16n8k8.f32.f16.f16.f32"),
    ("rtx-blackwell-fp16-fp16", "MMA", "RTX Blackwell", "m16n8k8.f16.f16.f16.f16"),
    ("rtx-blackwell-mxf8f6f4-e5m2", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e5m2.e5m2.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e5m2-e4m3", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e5m2.e4m3.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e5m2-e3m2", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e5m2.e3m2.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e5m2-e2m3", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e5m2.e2m3.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e5m2-e2m1", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e5m2.e2m1.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e4m3-e5m2", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e4m3.e5m2.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e4m3", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e4m3.e4m3.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e4m3-e3m2", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e4m3.e3m2.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e4m3-e2m3", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e4m3.e2m3.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e4m3-e2m1", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e4m3.e2m1.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e3m2-e5m2", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e3m2.e5m2.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e3m2-e4m3", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e3m2.e4m3.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e3m2", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e3m2.e3m2.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e3m2-e2m3", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e3m2.e2m3.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e3m2-e2m1", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e3m2.e2m1.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e2m3-e5m2", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e2m3.e5m2.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e2m3-e4m3", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e2m3.e4m3.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e2m3-e3m2", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e2m3.e3m2.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e2m3", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e2m3.e2m3.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e2m3-e2m1", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e2m3.e2m1.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e2m1-e5m2", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e2m1.e5m2.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e2m1-e4m3", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e2m1.e4m3.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e2m1-e3m2", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e2m1.e3m2.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e2m1-e2m3", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e2m1.e2m3.f32.ue8m0"),
    ("rtx-blackwell-mxf8f6f4-e2m1", "MMABlockScale", "RTX Blackwell",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e2m1.e2m1.f32.ue8m0"),
    ("rtx-blackwell-mxf4", "MMABlockScale", "RTX Blackwell",
     "m16n8k64.kind::mxf4.block32.f32.e2m1.e2m1.f32.ue8m0"),
    ("rtx-blackwell-mxf4nvf4-b32", "MMABlockScale", "RTX Blackwell",
     "m16n8k64.kind::mxf4nvf4.block32.f32.e2m1.e2m1.f32.ue8m0"),
    ("rtx-blackwell-mxf4nvf4-b16", "MMABlockScale", "RTX Blackwell",
     "m16n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.f32.ue8m0"),
    ("rtx-blackwell-nvfp4", "MMABlockScale", "RTX Blackwell",
     "m16n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.f32.ue4m3"),
    ("cdna1-fp32", "MFMA", "CDNA1", "f32_32x32x1f32"),
    ("cdna1-fp32", "MFMA", "CDNA1", "f32_32x32x2f32"),
    ("cdna1-fp32", "MFMA", "CDNA1", "f32_16x16x4f32"),
    ("cdna1-fp16-fp32", "MFMA", "CDNA1", "f32_32x32x4f16"),
    ("cdna1-fp16-fp32", "MFMA", "CDNA1", "f32_32x32x8f16"),
    ("cdna1-fp16-fp32", "MFMA", "CDNA1", "f32_16x16x16f16"),
    ("cdna1-bf16-fp32", "MFMA", "CDNA1", "f32_32x32x2bf16"),
    ("cdna1-bf16-fp32", "MFMA", "CDNA1", "f32_32x32x4bf16"),
    ("cdna1-bf16-fp32", "MFMA", "CDNA1", "f32_16x16x8bf16"),
    ("cdna2-fp32", "MFMA", "CDNA2", "f32_32x32x1f32"),
    ("cdna2-fp32", "MFMA", "CDNA2", "f32_32x32x2f32"),
    ("cdna2-fp32", "MFMA", "CDNA2", "f32_16x16x4f32"),
    ("cdna2-fp16-fp32", "MFMA", "CDNA2", "f32_32x32x4f16"),
    ("cdna2-fp16-fp32", "MFMA", "CDNA2", "f32_32x32x8f16"),
    ("cdna2-fp16-fp32", "MFMA", "CDNA2", "f32_16x16x16f16"),
    ("cdna2-bf16-fp32", "MFMA", "CDNA2", "f32_32x32x2bf16"),
    ("cdna2-bf16-fp32", "MFMA", "CDNA2", "f32_32x32x4bf16"),
    ("cdna2-bf16-fp32", "MFMA", "CDNA2", "f32_16x16x8bf16"),
    ("cdna2-bf16-fp32-1k", "MFMA", "CDNA2", "f32_32x32x4bf16_1k"),
    ("cdna2-bf16-fp32-1k", "MFMA", "CDNA2", "f32_32x32x8bf16_1k"),
    ("cdna2-bf16-fp32-1k", "MFMA", "CDNA2", "f32_16x16x16bf16_1k"),
    ("cdna2-fp64", "MFMA", "CDNA2", "f64_16x16x4f64"),
    ("cdna3-fp64", "MFMA", "CDNA3", "f64_16x16x4_f64"),
    ("cdna3-fp32", "MFMA", "CDNA3", "f32_32x32x1_2b_f32"),
    ("cdna3-fp32", "MFMA", "CDNA3", "f32_32x32x2_f32"),
    ("cdna3-fp32", "MFMA", "CDNA3", "f32_16x16x4_f32"),
    ("cdna3-xf32-fp32", "MFMA", "CDNA3", "f32_32x32x4_xf32"),
    ("cdna3-xf32-fp32", "MFMA", "CDNA3", "f32_16x16x8_xf32"),
    ("cdna3-fp16-fp32", "MFMA", "CDNA3", "f32_32x32x4_2b_f16"),
    ("cdna3-fp16-fp32", "MFMA", "CDNA3", "f32_32x32x8_f16"),
    ("cdna3-fp16-fp32", "MFMA", "CDNA3", "f32_16x16x16_f16"),
    ("cdna3-bf16-fp32", "MFMA", "CDNA3", "f32_32x32x4_2b_bf16"),
    ("cdna3-bf16-fp32", "MFMA", "CDNA3", "f32_32x32x8_bf16"),
    ("cdna3-bf16-fp32", "MFMA", "CDNA3", "f32_16x16x16_bf16"),
    ("cdna3-e4m3fnuz-fp32", "MFMA", "CDNA3", "f32_32x32x16_fp8_fp8"),
    ("cdna3-e4m3fnuz-fp32", "MFMA", "CDNA3", "f32_16x16x32_fp8_fp8"),
    ("cdna3-e4m3fnuz-e5m2fnuz-fp32", "MFMA", "CDNA3", "f32_32x32x16_fp8_bf8"),
    ("cdna3-e4m3fnuz-e5m2fnuz-fp32", "MFMA", "CDNA3", "f32_16x16x32_fp8_bf8"),
    ("cdna3-e5m2fnuz-e4m3fnuz-fp32", "MFMA", "CDNA3", "f32_32x32x16_bf8_fp8"),
    ("cdna3-e5m2fnuz-e4m3fnuz-fp32", "MFMA", "CDNA3", "f32_16x16x32_bf8_fp8"),
    ("cdna3-e5m2fnuz-fp32", "MFMA", "CDNA3", "f32_32x32x16_bf8_bf8"),
    ("cdna3-e5m2fnuz-fp32", "MFMA", "CDNA3", "f32_16x16x32_bf8_bf8"),
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


# ---------------------------------------------------------------------------
# tcsmt's bit patterns <-> MMA-Sim's tensors
# ---------------------------------------------------------------------------

_SIGNED = {1: "u1", 2: "i2", 4: "i4", 8: "i8"}


def _tensor(words, itemsize: int, dtype):
    """A torch tensor of ``dtype`` whose raw bits are ``words`` (uint64)."""
    import numpy as np
    import torch
    raw = np.ascontiguousarray(np.asarray(words, dtype=np.uint64).astype(f"u{itemsize}"))
    return torch.from_numpy(raw.view(_SIGNED[itemsize])).view(dtype)


def operand(op, words, fmt, which: str):
    """a or b (tcsmt bits of fmt, [N, K]) as MMA-Sim reads them: its torch
    dtype for the float types (tf32 in the top 19 bits of a float32); fp6
    and fp4 one per byte, fp6 in bits 5..0 and fp4 in bits 5..2 (MMA-Sim's
    decode_uint8_to_fp6_fp4), or, for the k64 block-scaled kinds, fp4 two
    per byte, the first in the high nibble (unpack_uint8_to_fp4)."""
    import numpy as np
    import torch
    w = np.asarray(words, dtype=np.uint64)
    dtype = {"a": op.a_type, "b": op.b_type}[which]
    if dtype != torch.uint8:
        return _tensor(w << np.uint64(fmt.storage_shift), dtype.itemsize, dtype)
    if getattr(op, "packing", 1) == 2:
        return _tensor((w[..., 0::2] << np.uint64(4)) | w[..., 1::2], 1, torch.uint8)
    return _tensor(w << np.uint64(6 - fmt.bits), 1, torch.uint8)


def scales(op, words):
    """Scale words ([N, S] container bytes: ue8m0, or ue4m3 with its sign
    bit as given) as MMA-Sim's scale tensors."""
    return _tensor(words, 1, op.s_type)


def run(op, p, a, b, c, sa=None, sb=None):
    """MMA-Sim's d (as out_format bits, uint64 [N]) for rows of tcsmt bits:
    a [N, K] in p.in_format, b in p.b_format, c [N] in p.c_format, and for a
    block-scaled instruction the scale container words sa, sb [N, S]."""
    import numpy as np
    args = [operand(op, a, p.fin, "a"), operand(op, b, p.fb, "b"),
            _tensor(np.asarray(c, dtype=np.uint64), op.c_type.itemsize, op.c_type)]
    if sa is not None:
        args += [scales(op, sa), scales(op, sb)]
    d = op.dpa(*args)
    size = d.dtype.itemsize
    return d.contiguous().numpy().view(f"u{size}").astype(np.uint64)
