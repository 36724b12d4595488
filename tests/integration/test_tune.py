"""`fabriclab tune` on real ranks under MPICH and Open MPI: the library's algorithms measured
beside its own choice, the library's selection file written (MPICH's JSON tree, Open MPI's
coll_tuned rules) and read by the library in the check's tuned runs (the points'
`selection_read`: MPI_T reports the file, or the process maps it), the default and tuned runs
alternating with the file's environment recorded on the tuned ones only. Which algorithm wins
is this machine's business, not the test's."""
import json
from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)
from mpihome import mpi_home
from fabriclab.cli import main

pytestmark = pytest.mark.integration

FAST = ["--point-time", "0.05", "--min-samples", "5", "--warmup", "2", "-t", "120", "-q"]
FILES = {"mpich": ("mpich-selection.json", "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE"),
         "openmpi": ("openmpi-coll-tuned.rules", "OMPI_MCA_coll_tuned_dynamic_rules_filename")}


def test_tune_writes_the_librarys_file_and_the_library_reads_it(flavour, tmp_path, capsys):
    name, home = flavour
    out = tmp_path / "tune"
    store = tmp_path / "store.sqlite"
    assert main(["tune", "allreduce", "-s", "1K,64K", "-L", "2", "--rounds", "2", "-o", str(out),
                 "--mpi-home", home, "--store", str(store), *FAST]) == 0
    printed, said = capsys.readouterr()
    assert "6 documents added to the store" in said and "not added" not in said    # its runs and tune.json
    assert main(["history", "list", "--store", str(store), "--kind", "tune"]) == 0
    assert "tune-" in capsys.readouterr().out
    t = json.loads((out / "tune.json").read_text())
    file, var = FILES[name]
    assert t["file"] == str(out / file) and (out / file).is_file()
    assert t["environment"][var] == str((out / file).resolve())
    assert [c["size"] for c in t["choices"]] == [1024, 65536] and t["measured"]
    assert "auto" not in t["measured"] and set(t["left_out"]) >= {"auto" if name == "mpich" else "ignore"}
    for c in t["choices"]:      # a choice is the fastest, and only where the interval beats the library
        assert c["algorithm"] in (None, c["fastest"])
        assert (c["algorithm"] is not None) == (c["verdict"] == "faster")
    assert [c["size"] for c in t["check"]] == [1024, 65536] and len(t["check_runs"]) == 4
    assert t["read"] is True, "the library did not show that it read the file"
    for run in t["check_runs"]:
        doc, tuned = docs.read(run), Path(run).name.startswith("check-tuned-")
        env = [j.get("env", {}) for j in doc["header"]["plan"]["jobs"]]
        assert all((var in e) == tuned for e in env), (run, env)
        assert all(bool(p["info"]["selection_file"]) == tuned for p in docs.points(doc))
    if name == "mpich":      # the library's own tree, its 2-rank branch tuned where a choice was made
        intra = json.loads((out / file).read_text())["collective=allreduce"]["comm_type=intra"]
        assert ("comm_size<=2" in intra) == any(c["algorithm"] for c in t["choices"])
    assert "use it: " in printed and "the library read the file: yes" in printed


def test_a_dry_run_prints_the_candidates_run_and_writes_nothing(tmp_path, capsys):
    """The measuring run's commands: the library's choice and each candidate, each with its
    control in the environment; no folder is made."""
    out = tmp_path / "t"
    assert main(["tune", "allreduce", "-n", "2", "-s", "8,64K", "--dry-run", "-o", str(out), *FAST]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "fabriclab-core coll.allreduce" in ln]
    assert any("algorithm=auto" in ln and "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM" not in ln for ln in lines)
    assert sum(ln.startswith("MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=") for ln in lines) >= 2
    assert not out.exists()
