"""compare-algorithms asks the candidate search (tcsmt.cases.compare_pool)
before the solvers: other architectures' witnesses, their mutations and a
structured pool, each replayed on the concrete model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_run import tcsmt

from tcsmt.cases import compare, compare_pool
from tcsmt.regen.cases import compare_jobs
from tcsmt.regen.check import check_job
from tcsmt.regen.jobs import solver_setting
from tcsmt.search.vectors import Vector

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "results" / "compare-algorithms"
FOUND = [("rdna4", 4), ("rdna4", 8), ("blackwell-ultra", 4)]


def test_the_seeds_are_the_other_files_witnesses():
    path = compare.result_path("rdna4", 4, False, ROOT / "results")
    seeds = compare_pool.seeds_from(FOLDER, skip=path)
    assert len(seeds) == len(compare_pool.seeds_from(FOLDER)) - 1 >= 20
    assert all(isinstance(v, Vector) and len(v.a) in (4, 8) for v in seeds)


def test_fit_keeps_the_live_terms_and_pads_with_zeros():
    v = Vector((0x3C000000, 0, 0, 0x40000000), (0x3F800000, 0, 0, 0x3F800000), 0x3F800000)
    w = compare_pool.fit(v, 8)
    assert len(w.a) == 8 and w.c == v.c
    assert [x for x in w.a if x] == [0x3C000000, 0x40000000]


def test_the_search_finds_a_replayed_witness_from_other_architectures():
    for arch, k in FOUND:
        tc = compare.arch_model(arch)
        seeds = compare_pool.seeds_from(FOLDER, skip=compare.result_path(arch, k, False, ROOT / "results"))
        found = compare.searched(tc, k, seeds, False)
        assert found is not None
        vec, seconds = found
        ev = compare.check_witness(tc, list(vec.a), list(vec.b), vec.c)
        assert ev.error("ootomo-yokota") > ev.error("markidis") and seconds >= 0


def test_without_an_answering_candidate_nothing_is_taken():
    """Table 5's outcome (--reproduce) is one vector; seeds that do not give
    it and no structured pool find nothing, so the solvers are asked."""
    tc = compare.arch_model("rdna4")
    seeds = [Vector((0,) * 4, (0,) * 4, 0x3F800000)]
    assert list(compare_pool.candidates(4, [], extra=0)) == []
    assert compare.searched(tc, 4, seeds, True) is None


def test_the_files_found_by_the_search_say_so_and_replay():
    for arch, k in FOUND:
        doc = json.loads(compare.result_path(arch, k, False, ROOT / "results").read_text())
        assert doc["verdict"] == "sat" and doc["run"]["solver"]["formula"] == compare.CANDIDATES
        v = doc["vectors"][0]
        a = [int(x["hex"], 16) for x in v["a"]]
        b = [int(x["hex"], 16) for x in v["b"]]
        compare.check_witness(compare.arch_model(arch), a, b, int(v["c"]["hex"], 16))


def test_regen_check_finds_the_files_current():
    """regen --check's test of each file (its answers restated by the code
    that writes it, the witness replayed) on the compare-algorithms files."""
    jobs = compare_jobs(["rdna4", "blackwell-ultra"], 1.0, "code", ROOT / "results",
                        solver_setting("portfolio", 1.0))
    names = {job.name for job in jobs}
    assert {f"compare-algorithms/{a}-k{k}" for a, k in FOUND} <= names
    assert [check_job(job) for job in jobs] == [None] * len(jobs)


def test_the_command_takes_other_files_as_seeds(tmp_path, monkeypatch, capsys):
    """compare-algorithms seeds its search with the other files in the
    output's folder, or with --seeds (RDNA4 at k = 4: the structured pool
    alone finds nothing, Ada's witness answers); a seed path that is not
    there is one line and exit 2, before any work."""
    assert compare.searched(compare.arch_model("rdna4"), 4, [], False) is None
    for name in ("ada-k4.json", "ada-k8.json"):
        shutil.copy(FOLDER / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    args = ["compare-algorithms", "markidis", "ootomo-yokota", "--arch", "rdna4", "--k", "4",
            "--solver", "z3", "--timeout", "1", "--format", "json"]
    code, out, _ = tcsmt(args, capsys)
    doc = json.loads(out)
    assert code == 0 and doc["verdict"] == "sat" and doc["run"]["solver"]["formula"] == compare.CANDIDATES
    code, out, _ = tcsmt(args + ["--seeds", tmp_path / "ada-k4.json", "-o", tmp_path / "else" / "r.json"],
                         capsys)
    assert code == 0 and json.loads(out)["verdict"] == "sat"
    code, out, err = tcsmt(args + ["--seeds", tmp_path / "missing"], capsys)
    assert code == 2 and err.count("\n") == 1 and "--seeds" in err and not out
