"""`fabriclab check --tests cabling --fabric discover` against a simulated fabric: the real tools.

A small fat tree is written as an ibsim fabric (support/ibsim.py) and served by ibsim; the
real ibnetdiscover reads it, through an `ibnetdiscover` on the PATH that preloads
libumad2sim and names ibsim's socket, as ibsim-run does. Its import is the reference. The
unchanged fabric passes; with one port set to `w=1 s=1 e=0` its cable trains at 1x SDR and
every check (three) fails naming that cable by its ports; with one cable unlinked (its two
port lines left out of the net file, ibsim restarted) the check fails naming it missing.
ibsim-utils and infiniband-diags come with `make debs`."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ibsim  # noqa: E402  (tests/support)
from fabriclab.topology.cables import rate

FABRICLAB = str(Path(sys.executable).parent / "fabriclab")
NET = ibsim.fat_tree(leaves=2, per_leaf=2, spines=2, parallel=1)
TRUNK, OTHER = 5, 6          # leaf0 -- spine1, degraded; leaf1 -- spine0, unlinked


@pytest.fixture
def on_path(tmp_path, monkeypatch):
    """`sock(sim)` points the `ibnetdiscover` first on the PATH at ibsim `sim`'s socket, once
    ibsim answers."""
    real = shutil.which("ibnetdiscover")
    assert real, "ibnetdiscover (infiniband-diags) is not installed: make debs"
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    monkeypatch.setenv("PATH", f"{bin_}:{os.environ['PATH']}")

    def sock(sim) -> None:
        prog = bin_ / "ibnetdiscover"
        prog.write_text(f"#!/bin/sh\nexport IBSIM_SOCKNAME={sim.env['IBSIM_SOCKNAME']}\n"
                        f"export LD_PRELOAD={ibsim.UMAD2SIM}\nexec {real} \"$@\"\n")
        prog.chmod(0o755)
        sim.discover()                               # through it, retried until ibsim listens
    return sock


def check(ref: Path, out: Path) -> tuple[int, list, str]:
    p = subprocess.run([FABRICLAB, "check", "--network", str(ref), "--fabric", "discover", "--tests", "cabling",
                        "-q", "-o", str(out)], capture_output=True, text=True, timeout=60)
    return p.returncode, [ln.removeprefix("FAIL cabling: ") for ln in p.stdout.splitlines()
                          if ln.startswith("FAIL cabling: ")], p.stdout + p.stderr


def imported(sim, tmp_path: Path, name: str) -> tuple[Path, str]:
    """The fabric ibsim serves now, discovered and imported (`topology import`), and what
    `topology show` says of it."""
    (tmp_path / f"{name}.txt").write_text(sim.discover())
    out = tmp_path / f"{name}.yaml"
    subprocess.run([FABRICLAB, "topology", "import", str(tmp_path / f"{name}.txt"), "-o", str(out)], check=True,
                   capture_output=True, timeout=60)
    show = subprocess.run([FABRICLAB, "topology", "show", str(out)], capture_output=True, text=True, timeout=60)
    assert show.returncode == 0, show.stderr
    return out, show.stdout


def diff(old: Path, new: Path) -> tuple[int, list]:
    p = subprocess.run([FABRICLAB, "topology", "diff", str(old), str(new)], capture_output=True, text=True,
                       timeout=60)
    return p.returncode, p.stdout.splitlines()


def served(tmp_path: Path, name: str, text: str) -> ibsim.IbSim:
    f = tmp_path / f"{name}.net"
    f.write_text(text)
    return ibsim.IbSim(f)


def test_a_degraded_and_a_missing_cable_fail_named_by_their_ports(tmp_path, on_path):
    text, k, cables = ibsim.net_text(NET)
    assert k == 1
    with served(tmp_path, "healthy", text) as sim:
        (tmp_path / "now.txt").write_text(sim.discover())
        ref = tmp_path / "ref.yaml"
        subprocess.run([FABRICLAB, "topology", "import", str(tmp_path / "now.txt"), "-o", str(ref)], check=True,
                       capture_output=True)
        on_path(sim)
        rc, failing, said = check(ref, tmp_path / "healthy")
        assert rc == 0 and failing == [] and "check passed" in said, said
        assert "0 missing, 0 degraded, 0 changed in rate, 0 added" in said
        again, shown = imported(sim, tmp_path, "again")
        assert diff(ref, again) == (0, []) and "degraded  none flagged" in shown     # an unchanged fabric diffs clean

    a, pa, b, pb, width, speed = cables[TRUNK]
    was = rate(NET["links"][-1]["rate_MBps"])
    degraded, _, _ = ibsim.net_text(NET, degrade=(TRUNK,))
    with served(tmp_path, "degraded", degraded) as sim:
        on_path(sim)
        slow, shown = imported(sim, tmp_path, "slow")
        assert f"{a} [{pa}] -- {b} [{pb}]" in shown.split("degraded", 1)[1], shown   # show names the port
        for run in range(3):
            rc, failing, said = check(ref, tmp_path / f"degraded-{run}")
            assert rc == 1 and failing == [f"cable {a} [{pa}] -- {b} [{pb}]: active 1X SDR, where both ends run "
                                           f"{width} {speed} on other cables; {was} in the reference"], said

    a, pa, b, pb, _, _ = cables[OTHER]
    cut = re.sub(rf'\[{pa}\]\t"{b}"\[{pb}\]\t[^\n]*\n|\[{pb}\]\t"{a}"\[{pa}\]\t[^\n]*\n', "", text)
    assert cut.count("\n") == text.count("\n") - 2
    with served(tmp_path, "unlinked", cut) as sim:
        on_path(sim)
        rc, failing, said = check(ref, tmp_path / "unlinked")
        assert rc == 1 and failing == [f"cable {a} [{pa}] -- {b} [{pb}]: missing ({was} in the reference)"], said
        gone, _ = imported(sim, tmp_path, "gone")
        rc, lines = diff(ref, gone)
        assert rc == 1 and lines == [f"- cable {a} [{pa}] -- {b} [{pb}]  {was}"], lines      # diff names the cable
