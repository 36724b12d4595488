"""`fabriclab check`'s inputs and folder checked before the first launch: a baseline that
lacks the collectives' points, and a link in place of a file the check writes, each one
line and exit code 2 with nothing launched or made."""
import json

from fabriclab.cli import main


def _runs(fake_core) -> list:
    return ["-n", "4", "--tests", "collectives", "--attempts", "1", "-q", "--core", fake_core["core"],
            "--mpiexec", fake_core["mpiexec"]]


def test_a_baseline_without_the_checks_points_is_refused_before_the_run(tmp_path, fake_core, capsys):
    base = tmp_path / "base.json"
    assert main(["run", "coll.allreduce", "-n", "4", "-s", "1K", "-L", "1", "-q", "--core", fake_core["core"],
                 "--mpiexec", fake_core["mpiexec"], "-o", str(base)]) == 0
    capsys.readouterr()
    assert main(["check", *_runs(fake_core), "--baseline", str(base), "-o", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"fabriclab: error: the baseline {base} lacks coll.allreduce at 1M on 4 ranks: judge against "
                   "a run of the same collectives, sizes and ranks")
    assert not (tmp_path / "c").exists()


def test_a_baseline_with_the_checks_points_is_judged(tmp_path, fake_core, capsys):
    assert main(["check", *_runs(fake_core), "-o", str(tmp_path / "first")]) == 0
    assert main(["check", *_runs(fake_core), "--baseline", str(tmp_path / "first" / "collectives-1.json"),
                 "-o", str(tmp_path / "second")]) == 0
    assert "1.00x the baseline's time" in capsys.readouterr().out


def test_a_link_in_the_check_folder_is_refused_before_the_run(tmp_path, fake_core, capsys):
    out = tmp_path / "c"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("keep")
    (out / "check.json").symlink_to(elsewhere)
    assert main(["check", *_runs(fake_core), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"cannot write {out / 'check.json'}: it is a symbolic link" in err and len(err.splitlines()) == 1
    assert elsewhere.read_text() == "keep" and sorted(p.name for p in out.iterdir()) == ["check.json"]


def test_a_check_with_a_store_adds_its_runs_and_its_verdicts(tmp_path, fake_core, capsys):
    store = tmp_path / "s.sqlite"
    assert main(["check", *_runs(fake_core), "-o", str(tmp_path / "c"), "--store", str(store)]) == 0
    assert "2 documents added to the store" in capsys.readouterr().err      # collectives-1.json, check.json
    assert main(["history", "list", "--store", str(store), "-f", "json"]) == 0
    kinds = sorted(r["kind"] for r in json.loads(capsys.readouterr().out))
    assert kinds == ["check", "run"]
