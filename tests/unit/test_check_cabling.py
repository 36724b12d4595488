"""`fabriclab check --network REF --fabric ...`: the cabling test (acceptance/cabling.py) on saved
ibnetdiscover outputs of one small fabric (tests/data/ibnetdiscover): small.healthy.txt (every
cable 4x HDR), small.topology.txt (as ibsim trained it: leaf01 [35] -- spine01 [35] at 1x SDR and
node04's cable at 4x EDR), small.ports.txt (its -p report), small.unplugged.txt (healthy, less
leaf01 [34] -- spine01 [34]). A fake ibnetdiscover on the PATH stands in for `--fabric discover`."""
import io
import json
import os
from pathlib import Path

import pytest

from fabriclab.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "ibnetdiscover"
HDR = "25000 MB/s (200 Gb/s)"
TRUNK35 = (f"cable leaf01 [35] -- spine01 [35]: active 1X SDR, where both ends run 4X HDR on other cables; "
           f"{HDR} in the reference")
NODE04 = (f"cable node04 [1] -- spine01 [2]: active 4X EDR, where both ends run 4X HDR on other cables; "
          f"{HDR} in the reference")


@pytest.fixture
def ref(tmp_path, capsys):
    """The reference: the healthy fabric imported."""
    out = tmp_path / "ref.yaml"
    assert main(["topology", "import", str(DATA / "small.healthy.txt"), "-o", str(out)]) == 0
    capsys.readouterr()
    return str(out)


def check(tmp_path, capsys, *argv, folder="c"):
    rc = main(["check", "--tests", "cabling", "-q", "-o", str(tmp_path / folder), *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def failing(out: str) -> list:
    return [line.removeprefix("FAIL cabling: ") for line in out.splitlines() if line.startswith("FAIL cabling: ")]


def test_an_unchanged_fabric_passes_and_its_text_is_kept(tmp_path, capsys, ref):
    rc, out, err = check(tmp_path, capsys, "--network", ref, "--fabric", str(DATA / "small.healthy.txt"))
    assert rc == 0, err
    assert out.splitlines()[0] == "PASS     cabling (1 attempt)" and out.splitlines()[-1] == "check passed"
    assert f"4 hosts, 2 switches, 9 cables against {ref}: 0 missing, 0 degraded, 0 changed in rate, 0 added" in out
    c = tmp_path / "c"
    doc = json.loads((c / "check.json").read_text())
    assert doc["passed"] is True and doc["thresholds"]["tests"] == ["cabling"]
    assert doc["tests"][0]["attempts"][0]["document"] == str(c / "cabling-fabric.txt")
    assert (c / "cabling-fabric.txt").read_text() == (DATA / "small.healthy.txt").read_text()
    assert sorted(p.name for p in c.iterdir()) == ["cabling-fabric.txt", "check.json"]    # nothing measured


@pytest.mark.parametrize("fabric", ["small.topology.txt", "small.ports.txt"])
def test_every_degraded_cable_fails_named_by_its_ports(tmp_path, capsys, ref, fabric):
    rc, out, _ = check(tmp_path, capsys, "--network", ref, "--fabric", str(DATA / fabric))
    assert rc == 1 and out.splitlines()[0] == "FAIL     cabling (1 attempt)"
    assert failing(out) == [NODE04, TRUNK35]
    assert "check FAILED: 2 failing items" in out
    doc = json.loads((tmp_path / "c" / "check.json").read_text())
    assert doc["passed"] is False and doc["tests"][0]["verdict"] == "fail"
    assert doc["tests"][0]["attempts"][0]["items"] == [NODE04, TRUNK35]


def test_a_missing_cable_fails_and_an_added_one_is_reported(tmp_path, capsys, ref, monkeypatch):
    rc, out, _ = check(tmp_path, capsys, "--network", ref, "--fabric", str(DATA / "small.unplugged.txt"))
    assert rc == 1 and failing(out) == [f"cable leaf01 [34] -- spine01 [34]: missing ({HDR} in the reference)"]
    less = tmp_path / "less.yaml"
    assert main(["topology", "import", str(DATA / "small.unplugged.txt"), "-o", str(less)]) == 0
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO((DATA / "small.healthy.txt").read_bytes())))
    rc, out, _ = check(tmp_path, capsys, "--network", str(less), "--fabric", "-", folder="d")
    assert rc == 0 and "0 missing, 0 degraded, 0 changed in rate, 1 added" in out
    assert f"    cable leaf01 [34] -- spine01 [34]: added ({HDR}), not in the reference" in out.splitlines()


def test_a_cable_at_another_rate_fails_and_a_repaired_one_is_reported(tmp_path, capsys, ref):
    edr = tmp_path / "edr.txt"                      # every cable at 4x EDR: slower, none degraded
    edr.write_text((DATA / "small.healthy.txt").read_text().replace("4xHDR", "4xEDR"))
    rc, out, _ = check(tmp_path, capsys, "--network", ref, "--fabric", str(edr))
    assert rc == 1 and len(failing(out)) == 9
    assert "cable leaf01 [33] -- spine01 [33]: 12500 MB/s (100 Gb/s), 25000 MB/s (200 Gb/s) in the reference" \
        in failing(out)
    bad = tmp_path / "bad.yaml"
    assert main(["topology", "import", str(DATA / "small.topology.txt"), "-o", str(bad)]) == 0
    rc, out, _ = check(tmp_path, capsys, "--network", str(bad), "--fabric", str(DATA / "small.healthy.txt"),
                       folder="d")
    assert rc == 0 and "0 changed in rate" in out
    assert (f"    cable leaf01 [35] -- spine01 [35]: {HDR}, 250 MB/s (2 Gb/s) in the reference, which flagged "
            "it degraded: repaired") in out.splitlines()


def fake_ibnetdiscover(tmp_path, monkeypatch, body: str) -> Path:
    """An ibnetdiscover first on the PATH that runs `body` (sh) and leaves a mark that it ran."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    prog = bin_ / "ibnetdiscover"
    prog.write_text(f"#!/bin/sh\ntouch {tmp_path}/ran\n{body}\n")
    prog.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}:{os.environ['PATH']}")
    return prog


def test_discover_runs_ibnetdiscover_before_anything_and_a_dry_run_does_not(tmp_path, capsys, ref, monkeypatch):
    prog = fake_ibnetdiscover(tmp_path, monkeypatch, f"cat {DATA / 'small.topology.txt'}")
    rc, out, _ = check(tmp_path, capsys, "--network", ref, "--fabric", "discover", "--dry-run")
    assert rc == 0 and out.strip() == str(prog) and not (tmp_path / "ran").exists()
    rc, out, _ = check(tmp_path, capsys, "--network", ref, "--fabric", "discover")
    assert rc == 1 and failing(out) == [NODE04, TRUNK35] and (tmp_path / "ran").exists()
    assert (tmp_path / "c" / "cabling-fabric.txt").read_text() == (DATA / "small.topology.txt").read_text()


@pytest.mark.parametrize("body, argv, says", [
    ("echo 'ibwarn: [1]: umad_open_port: cannot open UMAD port' >&2; exit 1", (),
     "check: cabling: ibnetdiscover failed (exit 1): ibwarn: [1]: umad_open_port: cannot open UMAD port"),
    ("exec sleep 5", ("--timeout", "0.05"),
     "check: cabling: ibnetdiscover did not finish reading the fabric in 0.05 s (--timeout)"),
    ("echo 'Switch 36 nonsense'", (), "ibnetdiscover: line 1: not ibnetdiscover output"),
    (None, (), "check: cabling: ibnetdiscover is not on the PATH (infiniband-diags)"),
])
def test_ibnetdiscover_missing_or_failing_is_one_line_exit_2(tmp_path, capsys, ref, monkeypatch, body, argv, says):
    if body is None:
        monkeypatch.setenv("PATH", str(tmp_path))
    else:
        fake_ibnetdiscover(tmp_path, monkeypatch, body)
    rc, out, err = check(tmp_path, capsys, "--network", ref, "--fabric", "discover", *argv)
    assert rc == 2 and says in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("argv, says", [
    (["--tests", "cabling"], "the cabling test reads the fabric now: give --fabric FILE, - or discover"),
    (["--fabric", "F"], "--fabric is compared with the site's reference network: give it with --network FILE"),
    (["--fabric", "F", "--network", "REF", "--tests", "pairs"], "--fabric is read by the cabling test"),
    (["--tests", "cabling", "--fabric", "NOFILE", "--network", "REF"], "cannot read ibnetdiscover output NOFILE"),
    (["--tests", "cabling", "--fabric", "REF", "--network", "REF"], "REF: line 2: not ibnetdiscover output"),
    (["--tests", "cabling", "--fabric", "F", "--network", "SLURM"], "SLURM: its cables name no ports (a Slurm "),
])
def test_bad_input_is_one_line_exit_2_before_anything(tmp_path, capsys, ref, argv, says):
    slurm = tmp_path / "slurm.yaml"
    slurm.write_text("nodes: [a, b]\nswitches: [s]\nlinks: [[a, s], [b, s]]\ndefault_rate_MBps: 100\n")
    paths = {"F": str(DATA / "small.healthy.txt"), "REF": ref, "SLURM": str(slurm)}
    argv = [paths.get(a, a) for a in argv]
    says = says.replace("REF", ref).replace("SLURM", str(slurm))
    rc = main(["check", "-q", "-o", str(tmp_path / "c"), *argv])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and says in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "c").exists()


def test_without_fabric_the_default_tests_leave_cabling_out():
    from argparse import Namespace
    from fabriclab.cli.check import thresholds
    args = Namespace(thresholds=None, tests=None, attempts=None, fabric=None, network=None)
    assert thresholds(args)["tests"] == ["pairs", "congestion", "collectives"]
    assert thresholds(Namespace(**{**vars(args), "fabric": "f", "network": "n"}))["tests"][0] == "cabling"


def test_the_cabling_test_comes_first_and_the_rest_still_runs(tmp_path, capsys, ref, fake_core, monkeypatch):
    runs = ["-n", "2", "--hosts", "node01,node02", "--attempts", "1", "--core", fake_core["core"],
            "--mpiexec", fake_core["mpiexec"], "--network", ref]
    rc, out, _ = check(tmp_path, capsys, *runs, "--tests", "collectives,cabling", "--fabric",
                       str(DATA / "small.topology.txt"))
    assert rc == 1 and failing(out) == [NODE04, TRUNK35]
    doc = json.loads((tmp_path / "c" / "check.json").read_text())
    assert [t["test"] for t in doc["tests"]] == ["cabling", "collectives"]
    assert (tmp_path / "c" / "collectives-1.json").exists() and (tmp_path / "c" / "report.html").exists()
    fake_ibnetdiscover(tmp_path, monkeypatch, "exit 3")           # a fabric not read: nothing launches
    rc, _, err = check(tmp_path, capsys, *runs, "--tests", "cabling,collectives", "--fabric", "discover",
                       folder="d")
    assert rc == 2 and "ibnetdiscover failed (exit 3)" in err and not (tmp_path / "d").exists()
