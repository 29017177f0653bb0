"""The property queries from the command line: tcsmt properties, find,
prove carry-bits, regen, and replay of what they write.

Every witness is checked twice: by ``tcsmt replay`` and by running the
hypotheses' parameters (as stored in the file) through tcsmt.sim.dot here.
No test pins the bits a solver happens to return (DESIGN.md, testing habit 6).
Solver-backed tests name one solver where the question allows, so that a test
starts one solver process at a time rather than the whole portfolio.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
from pathlib import Path

import pytest
from cli_run import script, tcsmt

from tcsmt.model.formats import get_format
from tcsmt.model.load import params_from_dict
from tcsmt.sim.dot import Result, dot
from tcsmt.smt import service

ROOT = Path(__file__).resolve().parent.parent
QUERY_FILES = sorted(p for p in (ROOT / "queries").glob("*.py") if not p.name.startswith("_"))


# ---------------------------------------------------------------------------
# Reading result files independently of tcsmt.report.results
# ---------------------------------------------------------------------------

def models_of(doc: dict) -> dict:
    """Hypothesis id -> ModelParams, from the parameters stored in the file."""
    return {h["id"]: params_from_dict({**h["parameters"], "name": f"h-{h['id']}", "arch": "test"},
                                      "result file")
            for h in doc["hypotheses"]}


def inputs_of(vec: dict) -> tuple[list[int], list[int], int]:
    return ([int(x["hex"], 16) for x in vec["a"]], [int(x["hex"], 16) for x in vec["b"]],
            int(vec["c"]["hex"], 16))


def simulated(doc: dict, vec: dict) -> dict[str, int]:
    a, b, c = inputs_of(vec)
    return {hid: dot(m, a, b, c).bits for hid, m in models_of(doc).items()}


def check_separations(doc: dict, every_pair: bool = True) -> None:
    """Stored outputs are the models' outputs; a pair is claimed separated
    exactly when its outputs differ; with ``every_pair``, every pair is
    separated by some vector or has a verdict in ``pairs``."""
    ids = [h["id"] for h in doc["hypotheses"]]
    separated = set()
    for i, vec in enumerate(doc["vectors"]):
        sim = simulated(doc, vec)
        assert {k: int(v["hex"], 16) for k, v in vec["outputs"].items()} == sim, f"vector {i}"
        claimed = {tuple(p) for p in vec["separates"]}
        differ = {(x, y) for x, y in itertools.combinations(ids, 2) if sim[x] != sim[y]}
        assert claimed == differ, f"vector {i}: claims {claimed}, outputs differ on {differ}"
        separated |= claimed
    if not every_pair:
        return
    with_verdict = {tuple(p["pair"]) for p in doc["pairs"]}
    assert separated | with_verdict == set(itertools.combinations(ids, 2))


def effective_subtraction(doc: dict, vec: dict) -> bool:
    """Non-zero terms (products and c) of both signs."""
    fin, fc = get_format(doc["formats"]["a"]), get_format(doc["formats"]["c"])
    a, b, c = inputs_of(vec)
    top = fin.bits - 1
    signs = {((x >> top) ^ (y >> top)) & 1 for x, y in zip(a, b)
             if x & ((1 << top) - 1) and y & ((1 << top) - 1)}
    if c & ((1 << (fc.bits - 1)) - 1):
        signs.add(c >> (fc.bits - 1))
    return signs == {0, 1}


# ---------------------------------------------------------------------------
# tcsmt properties
# ---------------------------------------------------------------------------

def property_rows(text: str) -> dict[str, str]:
    """Property name -> the text of its table row (wrapped lines joined)."""
    rows: dict[str, str] = {}
    name = None
    for line in text.splitlines()[1:]:
        if line and not line[0].isspace():
            name = line.split()[0]
            rows[name] = line
        elif name:
            rows[name] += "\n" + line
    return rows


def test_properties_lists_every_query_with_its_hypotheses(capsys):
    from tcsmt.properties.registry import all_properties
    from tcsmt.properties.run import hypotheses, resolve_base

    code, out, err = tcsmt(["properties", "--arch", "volta"], capsys)
    assert code == 0 and err == ""
    rows = property_rows(out)
    names = set()
    for path in QUERY_FILES:
        m = re.search(r'name="([a-z0-9-]+)"', path.read_text())
        assert m, f"{path.name} defines no PROPERTY name"
        names.add(m.group(1))
    assert set(rows) == names
    props = all_properties()
    assert set(props) == names
    for name, prop in props.items():
        words = set(re.split(r",?\s+", rows[name]))
        assert prop.description.split()[0] in words
        if prop.kind != "separate":
            assert "x <= y" in rows[name]
            continue
        try:
            hyps = hypotheses(prop, resolve_base(prop, "volta"))
        except Exception:   # noqa: BLE001 - the row must say why it does not apply
            assert "(not for volta" in rows[name]
            continue
        assert len(hyps) >= 2
        for h in hyps:
            assert set(h.id.split()) <= words, (name, h.id, rows[name])


def test_unknown_property_is_one_line(capsys):
    code, out, err = tcsmt(["find", "no-such-property", "--arch", "volta"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "unknown property" in err and "rounding" in err


# ---------------------------------------------------------------------------
# tcsmt find rounding --arch ampere: the file, its replay, a damaged copy
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ampere_rounding(tmp_path_factory):
    path = tmp_path_factory.mktemp("find") / "ampere-rounding.json"
    code, _, _ = tcsmt(["find", "rounding", "--arch", "ampere", "--solver", "bitwuzla",
                        "--timeout", "30", "-o", path])
    assert code == 0
    return path


def test_find_writes_a_file_that_separates_what_it_claims(ampere_rounding):
    doc = json.loads(ampere_rounding.read_text())
    assert doc["query"]["kind"] == "rounding" and doc["query"]["model"] == "ampere-fp16-fp32"
    assert doc["verdict"] == "sat" and doc["vectors"]
    assert [h["id"] for h in doc["hypotheses"]] == ["truncate", "rz", "rne", "ru", "rd"]
    for vec in doc["vectors"]:
        assert len(vec["a"]) == len(vec["b"]) == doc["query"]["k"] == 8
    check_separations(doc)
    # rz equals rd on a positive sum and ru on a negative one, so no single
    # vector can tell all five apart: the file must never claim one does.
    assert doc["query"]["one_vector_for_all_pairs"] != "sat"
    assert len(doc["vectors"]) >= 2


def test_every_vector_replays(ampere_rounding, capsys):
    code, out, err = tcsmt(["replay", ampere_rounding], capsys)
    assert code == 0, out + err
    n = len(json.loads(ampere_rounding.read_text())["vectors"])
    assert f"{n} vector(s) x 5 hypotheses: all {5 * n} outputs match" in out


def test_one_flipped_output_bit_fails_replay(ampere_rounding, tmp_path, capsys):
    doc = json.loads(ampere_rounding.read_text())
    out_fmt = get_format("float32")
    hid = doc["hypotheses"][1]["id"]
    slot = doc["vectors"][0]["outputs"][hid]
    flipped = Result(int(slot["hex"], 16) ^ 1, out_fmt)
    # the hex alone changed: the file contradicts itself (its decimal)
    bad = dict(slot, hex=flipped.hex)
    doc["vectors"][0]["outputs"][hid] = bad
    path = tmp_path / "flipped-hex.json"
    path.write_text(json.dumps(doc))
    code, out, err = tcsmt(["replay", path], capsys)
    assert code != 0 and "vector 0" in out + err
    # hex and decimal changed together: a well-formed file the model disagrees with
    doc["vectors"][0]["outputs"][hid] = {"hex": flipped.hex, "decimal": flipped.decimal}
    path = tmp_path / "flipped.json"
    path.write_text(json.dumps(doc))
    code, out, err = tcsmt(["replay", path], capsys)
    assert code == 1
    assert re.search(rf"vector 0, hypothesis {hid}: the file says {flipped.hex}", out), out


# ---------------------------------------------------------------------------
# Volta: truncation against round-toward-zero
# ---------------------------------------------------------------------------

def test_volta_truncation_and_rz_differ_on_an_effective_subtraction(tmp_path):
    """VLPG 4.2: truncating the aligned terms and rounding the exact sum
    toward zero differ on effective subtraction (2 - 2^-40 truncates to 2,
    RZ gives 2 - 2^-23). The ``rounding`` property holds both hypotheses
    (``block-rounding`` too, with the final rounding as shipped: rz on
    Volta's fp32 output, so the same pair)."""
    path = tmp_path / "volta-rounding.json"
    code, _, _ = tcsmt(["find", "rounding", "--arch", "volta", "--solver", "bitwuzla",
                        "--timeout", "30", "-o", path])
    assert code == 0
    doc = json.loads(path.read_text())
    assert doc["query"]["model"] == "volta-fp16-fp32"
    check_separations(doc)
    tr_rz = [v for v in doc["vectors"] if ["truncate", "rz"] in v["separates"]]
    assert tr_rz, "no vector tells truncation from rz"
    assert any(effective_subtraction(doc, v) for v in tr_rz)
    # the published vector itself: 2 + (-2^-40) with fp16 inputs 2*1 and
    # -2^-20*2^-20, c = 0: truncate gives 2, rz gives 2 - 2^-23
    hyps = models_of(doc)
    a, b = [0x4000, 0x8000 | 0x0010, 0, 0], [0x3C00, 0x0010, 0, 0]   # 2^-20 = 16 * 2^-24
    got = {h: dot(hyps[h], a, b, 0).bits for h in ("truncate", "rz")}
    assert got == {"truncate": 0x40000000, "rz": 0x3FFFFFFF}


# ---------------------------------------------------------------------------
# tcsmt prove carry-bits
# ---------------------------------------------------------------------------

def test_prove_carry_bits_volta_is_three(tmp_path, capsys):
    """VLPG 4.3: 3 carry bits are needed and sufficient for Volta's 5-term adder."""
    path = tmp_path / "carry.json"
    code, out, err = tcsmt(["prove", "carry-bits", "--arch", "volta", "--timeout", "60",
                            "-o", path], capsys)
    assert code == 0, err
    m = re.search(r"volta-fp16-fp32: (\d+) carry bits suffice.*\(proved by ([a-z0-9, ]+)\)", out)
    assert m and m.group(1) == "3", out
    assert set(m.group(2).split(", ")) <= set(service.SOLVERS)
    assert "2 are not enough" in out and "replayed" in out
    doc = json.loads(path.read_text())
    assert doc["query"]["fewest"] == 3 and doc["verdict"] == "unsat"
    assert len(doc["run"]["proved_by"]) >= 2 and doc["proof"]["cross_checked"]
    assert doc["query"]["lemmas"]["3"] == "unsat"
    assert doc["query"]["lemmas"]["2"] == "sat"
    # the witness: replays, and 2 carry bits give other bits than 3 or unbounded
    assert len(doc["vectors"]) == 1
    check_separations(doc, every_pair=False)     # 3 | unbounded is the proof's, not a vector's
    sim = simulated(doc, doc["vectors"][0])
    assert sim["2"] != sim["unbounded"] and sim["3"] == sim["unbounded"]
    code, out, _ = tcsmt(["replay", path], capsys)
    assert code == 0 and "all 3 outputs match" in out


def test_prove_with_a_tiny_timeout_is_one_line(tmp_path, capsys):
    path = tmp_path / "p.json"
    code, out, err = tcsmt(["prove", "carry-bits", "--arch", "hopper", "--solver", "z3",
                            "--timeout", "0.1", "-o", path], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "timeout" in err and "Traceback" not in err
    assert not path.exists()


# ---------------------------------------------------------------------------
# A query that runs out of time reports unknown with the reason
# ---------------------------------------------------------------------------

def test_find_with_a_tiny_timeout_reports_unknown_with_the_reason(tmp_path, capsys):
    path = tmp_path / "t.json"
    code, out, err = tcsmt(["find", "carry-bits", "--arch", "hopper", "--no-pool", "--solver", "z3",
                            "--timeout", "0.1", "-o", path], capsys)
    assert code == 0, err
    doc = json.loads(path.read_text())
    unknown = [p for p in doc["pairs"] if p["verdict"] == "unknown"]
    assert unknown, "a 17-term carry question answered in 0.1 s?"
    assert doc["verdict"] in ("unknown", "sat")
    if not doc["vectors"]:
        assert doc["verdict"] == "unknown"
    reasons = {tuple(p["pair"]): p["reason"] for p in doc["run"]["pairs"]}
    for p in unknown:
        reason = reasons[tuple(p["pair"])]
        assert "timeout" in reason and "z3" in reason
        assert f"{p['pair'][0]} | {p['pair'][1]}: unknown: {reason}" in out
    check_separations(doc)


# ---------------------------------------------------------------------------
# tcsmt regen (a subprocess: it runs its queries in worker processes)
# ---------------------------------------------------------------------------

def regen(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([script(), "regen", *args], capture_output=True, text=True, timeout=300)


def test_regen_caches_and_repairs(tmp_path):
    root = tmp_path / "results"
    args = ("volta", "--property", "align-bits", "--root", str(root), "--jobs", "1",
            "--timeout", "30")
    r = regen(*args)
    assert r.returncode == 0, r.stdout + r.stderr
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.json"))
    assert files == [".cache/regen-keys.json", "volta/align-bits.json"]
    path = root / "volta" / "align-bits.json"
    text = path.read_text()
    doc = json.loads(text)
    keys = json.loads((root / ".cache" / "regen-keys.json").read_text())
    assert keys[str(path)] and "1 new" in r.stdout
    check_separations(doc)
    mtime = path.stat().st_mtime_ns

    r = regen(*args)
    assert r.returncode == 0 and "1 cached" in r.stdout and "new" not in r.stdout, r.stdout
    assert path.read_text() == text and path.stat().st_mtime_ns == mtime

    path.write_text(text[: len(text) // 2])          # truncated JSON
    r = regen(*args)
    assert r.returncode == 0 and "cached" not in r.stdout, r.stdout
    again = json.loads(path.read_text())        # whole again: the same stable content
    assert again["verdict"] == doc["verdict"] and again["vectors"] == doc["vectors"]
    check_separations(again)

    # --force runs a query whose key has not changed; the same answer leaves the file alone
    text = path.read_text()
    r = regen(*args, "--force")
    assert r.returncode == 0 and "cached" not in r.stdout and "1 unchanged" in r.stdout, r.stdout
    assert path.read_text() == text


def test_regen_plans_the_models_beside_the_architectures(tmp_path):
    """A model named (not an architecture) has its files under its own name,
    and a property that does not apply to it says why in its own words."""
    from tcsmt.regen import jobs as regen_jobs
    from tcsmt.regen import plan as regen_plan
    plan = regen_plan.plan_jobs(["blackwell-e2m1-fp32"], ["align-bits", "exact-accumulation"],
                                30.0, tmp_path)
    assert [j.path.relative_to(tmp_path).as_posix() for j in plan.jobs] == \
        ["blackwell-e2m1-fp32/align-bits.json"]
    [skipped] = plan.skipped
    assert skipped.name == "blackwell-e2m1-fp32/exact-accumulation" and "fp16 output" in skipped.note
    everything = regen_plan.plan_jobs(None, ["carry-bits-proof", "saturation"], 30.0, tmp_path)
    named = {j.name.split("/")[0] for j in everything.jobs}
    assert set(regen_jobs.MODELS) <= named and "blackwell" in named     # integer ones: saturation


@pytest.mark.parametrize("args,words", [
    (["pascal"], ["unknown architecture", "pascal"]),
    (["volta", "--property", "no-such-property"], ["unknown property"]),
])
def test_regen_bad_input_is_exit_2(tmp_path, args, words):
    r = regen(*args, "--root", str(tmp_path / "results"))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    for w in words:
        assert w in r.stderr
    assert not (tmp_path / "results").exists()
