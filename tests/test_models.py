"""The shipped model files (models/*.toml): they load, every value names its
source, a malformed file is a one-line error naming the file and the key,
and the values agree with what FACTS.md (../shared/FACTS.md) publishes.

Not here: the datapath's refusal of Python ``if`` on data words (test_bv.py
and test_data_branch.py), the models against the recorded data (test_batch.py).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from tcsmt.errors import ModelFileError, UserError
from tcsmt.model.catalogue import all_models, architectures, load_model, models_dir
from tcsmt.model.choose import choose
from tcsmt.model.params import FIELD_NAMES, REQUIRED

MODELS = Path(__file__).resolve().parent.parent / "models"
FILES = sorted(MODELS.glob("*.toml"))
# The file's own identity: named by the file, not measured, so no source.
IDENTITY_KEYS = ("name", "arch", "description")
KEY_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*=")


def test_the_library_reads_the_source_tree_models():
    assert len(FILES) >= 30
    assert {p.name for p in models_dir().glob("*.toml")} == {p.name for p in FILES}
    assert sorted(m.name for m in all_models()) == sorted(p.stem for p in FILES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_model_file_loads(path):
    m = load_model(path)
    assert m.name == path.stem
    assert path.stem.startswith(m.arch + "-")
    assert m.source_file == str(path)
    keys = set(tomllib.loads(path.read_text()))
    if "base" not in keys:      # a file with a base lists only what differs from it
        assert set(REQUIRED) <= keys, "a required key is missing"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_value_carries_a_source_comment(path):
    """The files' convention: each `key = value` line is directly preceded by
    a `# source: <text>` line (the identity keys excepted), and every key of
    the TOML document is on such a line (no inline tables hiding keys)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    keys = []
    for i, line in enumerate(lines):
        m = KEY_LINE.match(line)
        if not m:
            continue
        key = m.group(1)
        keys.append(key)
        if key in IDENTITY_KEYS:
            continue
        prev = lines[i - 1] if i else ""
        assert prev.startswith("# source:"), f"{path.name}:{i + 1}: {key} has no '# source:' line above"
        assert len(prev[len("# source:"):].strip()) >= 3, f"{path.name}:{i}: empty source for {key}"
    assert sorted(keys) == sorted(tomllib.loads(path.read_text())), f"{path.name}: keys off their lines"
    assert set(keys) <= set(FIELD_NAMES) | {"base"}


def test_every_architecture_has_exactly_one_default_model():
    for arch in architectures():
        defaults = [m.name for m in all_models() if m.arch == arch and m.default]
        assert len(defaults) == 1, (arch, defaults)
        assert choose(arch).name == defaults[0]


# ---------------------------------------------------------------------------
# Malformed model files
# ---------------------------------------------------------------------------

GOOD = MODELS / "ampere-fp16-fp32.toml"


def _edit(text: str, key: str, new_line: str | None) -> str:
    """Replace (or with None, drop) the line `key = ...`."""
    out, hit = [], False
    for line in text.splitlines():
        if line.startswith(f"{key} ="):
            hit = True
            if new_line is not None:
                out.append(new_line)
        else:
            out.append(line)
    assert hit, key
    return "\n".join(out) + "\n"


BROKEN = [
    # what, key, edited text, words the message must hold
    ("missing key", "block_size", lambda t: _edit(t, "block_size", None), "missing"),
    ("wrong type int", "block_size", lambda t: _edit(t, "block_size", 'block_size = "eight"'),
     "not an integer"),
    ("float for int", "align_bits", lambda t: _edit(t, "align_bits", "align_bits = 1.0"),
     "not an integer"),
    ("bool for int", "carry_bits", lambda t: _edit(t, "carry_bits", "carry_bits = true"),
     "not an integer"),
    ("wrong type str", "final_rounding", lambda t: _edit(t, "final_rounding", "final_rounding = 3"),
     "not a string"),
    ("wrong type bool", "default", lambda t: _edit(t, "default", 'default = "yes"'), "true or false"),
    ("wrong type list", "devices", lambda t: _edit(t, "devices", 'devices = "A100"'), "list"),
    ("unknown key", "bogus_key", lambda t: t + "# source: nowhere\nbogus_key = 1\n", "unknown key"),
    ("unknown choice", "final_rounding",
     lambda t: _edit(t, "final_rounding", 'final_rounding = "chop"'), "not one of"),
    ("out of range", "block_size", lambda t: _edit(t, "block_size", "block_size = 0"), "1..256"),
    ("unknown format", "in_format", lambda t: _edit(t, "in_format", 'in_format = "float17"'),
     "float17"),
    ("unknown out format", "out_format", lambda t: _edit(t, "out_format", 'out_format = "fp33"'),
     "fp33"),
    ("bad TOML syntax", "block_size", lambda t: _edit(t, "block_size", "block_size = = 8"),
     "not valid TOML"),
]


@pytest.mark.parametrize("what,key,edit,words", BROKEN, ids=[b[0] for b in BROKEN])
def test_malformed_model_file_names_the_file_and_the_key(tmp_path, what, key, edit, words):
    path = tmp_path / "broken-model.toml"
    path.write_text(edit(GOOD.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(ModelFileError) as info:
        load_model(path)
    msg = str(info.value)
    assert isinstance(info.value, UserError) and info.value.exit_code == 2
    assert "\n" not in msg
    assert str(path) in msg
    assert f"'{key}'" in msg, msg
    assert words in msg, msg


def test_bad_toml_syntax_names_the_line(tmp_path):
    text = _edit(GOOD.read_text(encoding="utf-8"), "align_bits", "align_bits = = 1")
    line = text.splitlines().index("align_bits = = 1") + 1
    path = tmp_path / "m.toml"
    path.write_text(text)
    with pytest.raises(ModelFileError, match=rf"key 'align_bits'.*line {line}\b"):
        load_model(path)
    # an error after the last statement (an array never closed) still names the file
    path.write_text(text.replace("align_bits = = 1", "align_bits = 1") + 'devices2 = ["x",\n')
    with pytest.raises(ModelFileError, match=re.escape(str(path)) + ".*not valid TOML"):
        load_model(path)


def test_unreadable_model_file(tmp_path):
    with pytest.raises(ModelFileError, match="cannot read"):
        load_model(tmp_path / "nothing.toml")


def test_a_file_without_a_name_is_named_by_its_stem(tmp_path):
    path = tmp_path / "my-model.toml"
    path.write_text(_edit(GOOD.read_text(), "name", None))
    m = load_model(path)
    assert m.name == "my-model"
    assert m.parameter_dict() == load_model(GOOD).parameter_dict()


# ---------------------------------------------------------------------------
# Published facts (../shared/FACTS.md)
# ---------------------------------------------------------------------------
# One row per shipped model that FACTS.md states values for. "-mma" models are
# named readings of open questions (FACTS: "B200 fp8 via mma.sync: how is c
# added?"; hwdata README), not the architecture's published model, so they
# are left out. None: FACTS.md does not state the value.
#
# model                   block  align  carry  FACTS.md line
FACTS = {
    "volta-fp16-fp32":     (4,  0, 3,      "| Volta (V100) | fp16 | 4 | 0 | "
                                            "... VLPG: 3 carry bits needed and sufficient for 5 terms |"),
    "volta-fp16-fp16":     (4,  0, 3,      "| Volta (V100) | fp16 | 4 | 0 |"),
    "turing-fp16-fp32":    ((4, 8), 1, None, "| Turing (T4) | fp16 | 4 (F21 tests) or 8 (MMA-Sim) | 1 | "
                                              "disputed block size |"),
    "turing-fp16-fp16":    ((4, 8), 1, None, "| Turing (T4) | fp16 | 4 (F21 tests) or 8 (MMA-Sim) | 1 |"),
    "ampere-fp16-fp32":    (8,  1, None,   "| Ampere (A100, A30, A2, RTX 3060) | fp16, bf16 | 8 | 1 |"),
    "ampere-fp16-fp16":    (8,  1, None,   "| Ampere (A100, A30, A2, RTX 3060) | fp16, bf16 | 8 | 1 |"),
    "ampere-bf16-fp32":    (8,  1, None,   "| Ampere (A100, A30, A2, RTX 3060) | fp16, bf16 | 8 | 1 |"),
    "ampere-tf32-fp32":    (4,  1, None,   "| Ampere | tf32 | 4 | 1 |"),
    "ampere-fp64":         (1,  None, None, "| Ampere | fp64 | 1 | – | "
                                             "IEEE FMA chain, round to nearest even |"),
    "ada-fp16-fp32":       (8,  1, None,   "| Ada (L40S, RTX 1000 Ada, 4090) | "
                                            "fp16, bf16 / tf32 | 8 / 4 | 1 |"),
    "ada-fp16-fp16":       (8,  1, None,   "| Ada ... | fp16, bf16 / tf32 | 8 / 4 | 1 |"),
    "ada-bf16-fp32":       (8,  1, None,   "| Ada ... | fp16, bf16 / tf32 | 8 / 4 | 1 |"),
    "ada-tf32-fp32":       (4,  1, None,   "| Ada ... | fp16, bf16 / tf32 | 8 / 4 | 1 |"),
    "ada-e4m3-fp32":       (16, None, None, "| Ada | fp8 e4m3, e5m2 | 16 | – | "
                                             "block result truncated to 13 fraction bits (e8m13) |"),
    "ada-e5m2-fp32":       (16, None, None, "| Ada | fp8 e4m3, e5m2 | 16 | – | ... (e8m13) |"),
    "hopper-fp16-fp32":    (16, 2, None,   "| Hopper (H100, H200, H800) | fp16, bf16 | 16 | 2 |"),
    "hopper-fp16-fp16":    (16, 2, None,   "| Hopper (H100, H200, H800) | fp16, bf16 | 16 | 2 |"),
    "hopper-bf16-fp32":    (16, 2, None,   "| Hopper (H100, H200, H800) | fp16, bf16 | 16 | 2 |"),
    "hopper-tf32-fp32":    ((4, 8), 2, None, "| Hopper | tf32 | 4 (wmma) or 8 (mma.sync, wgmma) | 2 |"),
    "hopper-e4m3-fp32":    (32, None, None, "| Hopper (wgmma) | fp8 | 32 | – | 13 fraction bits kept |"),
    "hopper-e5m2-fp32":    (32, None, None, "| Hopper (wgmma) | fp8 | 32 | – | 13 fraction bits kept |"),
    "blackwell-fp16-fp32": (16, 2, None,   "| Blackwell (B200) | fp16, bf16 / tf32 | 16 / 8 | 2 |"),
    "blackwell-fp16-fp16": (16, 2, None,   "| Blackwell (B200) | fp16, bf16 / tf32 | 16 / 8 | 2 |"),
    "blackwell-bf16-fp32": (16, 2, None,   "| Blackwell (B200) | fp16, bf16 / tf32 | 16 / 8 | 2 |"),
    "blackwell-tf32-fp32": (8,  2, None,   "| Blackwell (B200) | fp16, bf16 / tf32 | 16 / 8 | 2 |"),
    "blackwell-e4m3-fp32": (32, 2, None,   "| Blackwell tcgen05 | fp8, fp6, fp4 | 32 | 2 |"),
    "blackwell-e5m2-fp32": (32, 2, None,   "| Blackwell tcgen05 | fp8, fp6, fp4 | 32 | 2 |"),
    "cdna3-fp16-fp32":     (8,  1, None,   "| AMD CDNA3 (MI300) | fp16, bf16 | 8 | 1 | "
                                            "c added after the product sum ... then RNE |"),
    "cdna3-bf16-fp32":     (8,  1, None,   "| AMD CDNA3 (MI300) | fp16, bf16 | 8 | 1 |"),
    "cdna3-xf32-fp32":     (4,  1, None,   "| CDNA3 fp16/bf16 (xf32: 4 products) | ... |"),
    "cdna3-e4m3fnuz-fp32": (16, 1, None,   "| CDNA3 fp8/bf8 (fnuz) | 16 products; even and odd products "
                                            "summed separately, combined with round-down; c dropped "
                                            "below max - 25 |"),
    "cdna3-e5m2fnuz-fp32": (16, 1, None,   "| CDNA3 fp8/bf8 (fnuz) | 16 products; ... |"),
    "cdna3-e4m3fnuz-e5m2fnuz-fp32": (16, 1, None, "| CDNA3 fp8/bf8 (fnuz) | 16 products; ... |"),
    "cdna3-e5m2fnuz-e4m3fnuz-fp32": (16, 1, None, "| CDNA3 fp8/bf8 (fnuz) | 16 products; ... |"),
    "cdna2-fp16-fp32":     (4,  0, None,   "| AMD CDNA2 (MI250) | fp16, bf16 | 4 | – | pairwise fp32 "
                                            "RNE adds; fp16/bf16 subnormals flushed (AMD docs) |"),
    "cdna2-bf16-fp32":     ((2, 4), 0, None, "| CDNA2 | denormals flushed, pairwise fp32 rne multiply-adds "
                                              "(2 or 4 per step; bf16_1k 4) |"),
    "cdna2-bf16-fp32-1k":  (4,  0, None,   "| CDNA2 | ... (2 or 4 per step; bf16_1k 4) |"),
    "cdna1-fp16-fp32":     (4,  None, None, "| CDNA1 fp16/bf16 | the products (4 or 2) and c summed "
                                             "exactly, rounded once, rne |"),
    "cdna1-bf16-fp32":     (2,  None, None, "| CDNA1 fp16/bf16 | the products (4 or 2) and c ... |"),
}


def test_the_facts_table_covers_every_published_model():
    """Every model is in FACTS, or is one of MMA-Sim's configurations (its
    parameters are checked against MMA-Sim's in test_mmasim.py), or is a
    named reading of an open question (-mma, -sftensor), or a model from
    sources of a unit nobody has measured (docs/units-next.md); integer and
    sparse models (outside MMA-Sim) are checked in test_integer.py and
    test_sparse.py."""
    from tcsmt.peer.mmasim import PAIRS
    named = {m.name for m in all_models()
             if not m.name.endswith(("-mma", "-sftensor")) and not m.from_sources
             and not m.fout.is_integer and m.sparsity == "dense"}
    assert set(FACTS) <= named
    assert named - set(FACTS) <= {r[0] for r in PAIRS}


@pytest.mark.parametrize("name", sorted(FACTS))
def test_published_block_size_and_alignment_bits(name):
    block, align, carry, _line = FACTS[name]
    m = choose(name)
    assert m.block_size in (block if isinstance(block, tuple) else (block,))
    if align is not None:
        assert m.align_bits == align
    if carry is not None:
        assert m.carry_bits == carry


@pytest.mark.parametrize("m", [m for m in all_models() if not m.arch.startswith(("cdna", "rdna"))
                               and m.normalisation == "block" and not m.name.endswith("-mma")
                               and not m.fout.is_integer],
                         ids=lambda m: m.name)
def test_the_common_nvidia_block_model(m):
    """FACTS 'The common NVIDIA block model': raw products, terms truncated
    to F = 23 + align_bits fraction bits (fp8 on Ada/Hopper: 13), one
    normalisation per block, rz for fp32 output and rne for fp16 output,
    recursive chaining, subnormals kept."""
    assert m.product_alignment == "raw"
    assert m.align_rounding == "truncate"
    assert m.c_placement == "global"
    assert m.chaining == "recursive"
    assert m.subnormals == "keep"
    assert m.product_rounding == "exact"
    assert m.final_rounding == {"float32": "rz", "float16": "rne"}[m.out_format]
    if m.final_frac_bits is None:
        assert m.F == m.facc.frac_bits + m.align_bits
        assert m.acc_format == "float32" or m.out_format == "float16"
    else:   # "fp8 on Ada and Hopper: the block result keeps 13 fraction bits (an e8m13 value)"
        assert m.arch in ("ada", "hopper") and m.in_format.startswith("float8")
        assert m.final_frac_bits == 13 and m.F == 13
    if m.acc_format == "e8m13":      # fp8 on Ada and Hopper, also with fp16 output
        assert m.F == 13 and m.arch in ("ada", "hopper")


def test_fp8_on_ada_and_hopper_keeps_13_fraction_bits():
    for name in ("ada-e4m3-fp32", "ada-e5m2-fp32", "hopper-e4m3-fp32", "hopper-e5m2-fp32"):
        assert choose(name).final_frac_bits == 13


def test_ampere_fp64_is_an_ieee_fma_chain():
    m = choose("ampere-fp64")
    assert (m.normalisation, m.align_rounding, m.final_rounding) == ("every_add", "rne", "rne")


def test_cdna3_adds_c_late_then_rounds_to_nearest_even():
    for m in all_models():
        if m.arch == "cdna3" and m.block_size > 1:
            assert m.c_placement == "late" and m.final_rounding == "rne"
            assert (m.F, m.late_frac_bits) == (24, 31)            # FACTS: 24 bits, then 31
    for name in ("cdna3-e4m3fnuz-fp32", "cdna3-e5m2fnuz-e4m3fnuz-fp32"):
        m = choose(name)       # FACTS: even and odd products apart; c dropped below max - 25
        assert (m.product_groups, m.late_c_window, m.block_size) == (2, 25, 16)
    assert choose("cdna3-e5m2fnuz-e4m3fnuz-fp32").fb.name == "float8_e4m3fnuz"


def test_cdna1_sums_exactly_and_cdna2_adds_pairwise_with_flushing():
    for m in all_models():
        if m.arch == "cdna1" and m.block_size > 1:     # FACTS: summed exactly, rounded once, rne
            assert (m.align_rounding, m.final_rounding, m.c_placement) == ("exact", "rne", "global")
        if m.arch == "cdna2" and m.block_size > 1:     # FACTS: flushed, pairwise fp32 RNE additions
            assert (m.normalisation, m.add_order, m.align_rounding, m.subnormals) == \
                ("every_add", "pairwise", "rne", "flush_every_step")
        if m.arch.startswith("cdna") and m.block_size == 1:   # fp32 and fp64 MFMA: FMA chains
            assert (m.normalisation, m.align_rounding, m.final_rounding) == ("every_add", "rne", "rne")
            assert m.fin == m.fc == m.fout == m.facc


def test_every_amd_device_of_the_issue_has_its_architecture():
    devices = {m.arch: set(m.devices) for m in all_models() if m.arch.startswith("cdna")}
    assert devices == {"cdna1": {"MI100"}, "cdna2": {"MI210", "MI250", "MI250X"},
                       "cdna3": {"MI300A", "MI300X", "MI325X"}}


def test_alignment_exponent_floors():
    """FACTS: 'about -132 on A100, -133 on H100/B200 for fp32 output'."""
    assert choose("ampere-fp16-fp32").min_exponent == -132
    for name in ("hopper-fp16-fp32", "blackwell-fp16-fp32"):
        assert choose(name).min_exponent == -133


def test_a_model_file_with_base_differs_by_its_keys_alone(tmp_path):
    path = tmp_path / "hopper-wide.toml"
    path.write_text('# source: a test\nbase = "hopper-fp16-fp32"\n# source: a test\nalign_bits = 3\n')
    base = choose("hopper-fp16-fp32")
    m = load_model(path)
    diff = {k for k, v in m.parameter_dict().items() if v != base.parameter_dict()[k]}
    assert diff == {"align_bits"} and m.align_bits == 3
    assert m.name == "hopper-wide" and not m.default and m.devices == base.devices


def test_a_base_beside_the_file_and_cycles(tmp_path):
    (tmp_path / "one.toml").write_text('base = "hopper-fp16-fp32"\nblock_size = 8\n')
    (tmp_path / "two.toml").write_text('base = "one"\ncarry_bits = 5\n')
    two = load_model(tmp_path / "two.toml")
    assert (two.block_size, two.carry_bits, two.align_bits) == (8, 5, 2)
    (tmp_path / "x.toml").write_text('base = "y"\n')
    (tmp_path / "y.toml").write_text('base = "x"\n')
    with pytest.raises(ModelFileError, match="cycle"):
        load_model(tmp_path / "x.toml")
    (tmp_path / "z.toml").write_text('base = "no-such-model"\n')
    with pytest.raises(ModelFileError, match="key 'base'"):
        load_model(tmp_path / "z.toml")


# ---------------------------------------------------------------------------
# tcsmt model save and tcsmt params
# ---------------------------------------------------------------------------

def test_model_save_writes_base_and_one_changed_key(tmp_path):
    from cli_run import run
    path = tmp_path / "hopper-a1.toml"
    r = run(["model", "save", "hopper-a1", "--arch", "hopper", "--set", "align_bits=1",
             "-o", path])
    assert r.exit_code == 0, r.output
    text = path.read_text()
    data = tomllib.loads(text)
    assert data["base"] == "hopper-fp16-fp32" and data["align_bits"] == 1
    assert set(data) == {"base", "name", "description", "align_bits"}
    for line in (ln for ln in text.splitlines() if re.match(r"^[a-z_]+ = ", ln)):
        before = text.splitlines()[text.splitlines().index(line) - 1]
        assert before.startswith("# source:"), line
    saved, base = load_model(path), choose("hopper-fp16-fp32")
    differs = [k for k in FIELD_NAMES if getattr(saved, k) != getattr(base, k)]
    assert sorted(differs) == ["align_bits", "default", "description", "name"]
    (tmp_path / "sub").mkdir()
    again = run(["model", "save", "two", "--arch", path, "--set", "carry_bits=5",
                 "-o", tmp_path / "sub" / "two.toml"])
    assert again.exit_code == 0, again.output
    two = load_model(tmp_path / "sub" / "two.toml")
    assert (two.align_bits, two.carry_bits, two.block_size) == (1, 5, base.block_size)


@pytest.mark.parametrize("args,match", [
    (["--set", "align_bits=2"], "own value"),
    (["--set", "alig=2"], "unknown parameter"),
    (["--set", "align_bits=99"], "align_bits"),
])
def test_model_save_refuses_in_one_line(tmp_path, args, match):
    from cli_run import run
    r = run(["model", "save", "x", "--arch", "hopper", *args, "-o", tmp_path / "x.toml"])
    assert r.exit_code == 2 and match in r.output and r.output.count("\n") == 1, r.output
    assert not (tmp_path / "x.toml").exists()


def test_params_documents_every_parameter_from_the_record():
    from tcsmt.model.choices import CHOICES
    from tcsmt.model.paramdoc import DESCRIPTIVE, parameter_docs
    docs = {d["name"]: d for d in parameter_docs()}
    assert set(docs) == set(FIELD_NAMES) - set(DESCRIPTIVE)
    for name, d in docs.items():
        assert d["meaning"] and d["section"], name
    for name, allowed in CHOICES.items():
        assert docs[name]["values"] == ", ".join(allowed)
    from cli_run import run
    r = run(["params"])
    assert r.exit_code == 0 and "align_rounding" in r.output and "fma-chain" in r.output
    assert max(len(ln) for ln in r.output.splitlines()) <= 100
    assert "tcsmt params" in run(["simulate", "--help"]).output


def test_params_of_one_model_say_each_value_and_its_source():
    """tcsmt params --arch X: the model's values as its file writes them,
    each with the `# source:` line of its file (or its base's), the
    defaults marked, --set shown as the source of what it changed."""
    import json

    from cli_run import run

    import tcsmt.api
    from tcsmt.model.paramdoc import DESCRIPTIVE
    doc = tcsmt.api.params("hopper", overrides=["align_bits=1"])
    rows = {r["name"]: r for r in doc["parameters"]}
    assert doc["model"] == "hopper-fp16-fp32[align_bits=1]"
    assert set(rows) == set(FIELD_NAMES) - set(DESCRIPTIVE)
    assert rows["carry_bits"]["value"] == "unbounded" and rows["block_size"]["value"] == "16"
    assert rows["block_size"]["source"].startswith("KM-TC")
    assert rows["align_bits"] == {"name": "align_bits", "section": "Inside one block", "value": "1",
                                  "source": "changed by --set (overrides=)"}
    assert rows["scale_format"]["source"] is None                    # a default the file leaves
    r = run(["params", "--arch", "hopper", "--formats", "e4m3:fp32"])
    assert r.exit_code == 0 and r.output.startswith("hopper-e4m3-fp32: ")
    assert "  block_size         32\n" in r.output and "(default)" in r.output
    assert max(len(ln) for ln in r.output.splitlines()) <= 100
    r = run(["params", "--arch", "ampere", "--format", "json"])
    assert json.loads(r.output)["model"] == "ampere-fp16-fp32"
    r = run(["params", "--set", "align_bits=1"])
    assert r.exit_code == 2 and "give --arch too" in r.output


def test_params_of_a_model_file_give_its_own_values_their_own_source(tmp_path):
    """A value a file changes from its base is not given the base's source
    (which was for the base's value): its own `# source:` line, else the
    file it is set in."""
    import tcsmt.api
    f = tmp_path / "design.toml"
    f.write_text('base = "hopper-fp16-fp32"\nname = "design"\nalign_bits = 3\n'
                 '# source: our specification, section 2\nfinal_rounding = "rne"\n', encoding="utf-8")
    rows = {r["name"]: r for r in tcsmt.api.params(str(f))["parameters"]}
    assert rows["align_bits"]["value"] == "3"
    assert rows["align_bits"]["source"] == "set in design.toml (no # source: line)"
    assert rows["final_rounding"]["source"] == "our specification, section 2"
    assert rows["block_size"]["source"].startswith("KM-TC")          # left to the base: the base's source
