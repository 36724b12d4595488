"""Every example of README.md's "Using it" that needs no root and no testbed runs as
written, with short sampling options added (one launch, short points, small sizes
where the example names none), and ends with exit 0 within a bounded time: a
user's first commands never hang or fail. Placeholders (RUN.json, before.json,
osu_bw.txt ...) are files made by the examples before them or recorded outputs."""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import ibsim  # noqa: E402  (tests/support)

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
# What an example needs that this machine's tests do not have: an emulated testbed (root,
# namespaces; tests/integration/test_testbed.py runs those) or hosts by name.
NEEDS_MORE = ("--testbed", "testbed ", "--hosts")
# Added to the commands that measure: one launch of short points, and a size where none is named.
SHORT = ["-L", "1", "--point-time", "0.02", "--min-samples", "3", "--warmup", "1", "-t", "60"]
MEASURING = ("run", "congestion", "check", "tune")


def examples() -> list[str]:
    """The `fabriclab ...` lines of README's "Using it" block, comments cut, continuations joined."""
    text = (REPO / "README.md").read_text()
    block = text.split("## Using it", 1)[1].split("\n## ", 1)[0]
    out = []
    for line in block.splitlines():
        if line.startswith("    fabriclab "):
            out.append(re.split(r"\s+#\s", line.strip(), maxsplit=1)[0].strip())
    return out


def _argv(example: str, tmp: Path) -> list[str] | None:
    """The example's argv as this test runs it, or None where it needs a testbed or named hosts."""
    if any(k in example for k in NEEDS_MORE):
        return None
    words = shlex.split(example)[1:]
    files = {"RUN.json": str(tmp / "run.json"), "results/RUN.json": str(tmp / "run.json"),
             "before.json": str(tmp / "run.json"), "after.json": str(tmp / "after.json"),
             "osu_bw.txt": str(DATA / "imports" / "osu_bw_v7.txt"), "pp.svg": str(tmp / "pp.svg"),
             "udp.json": str(DATA / "imports" / "iperf3" / "udp100.json"),
             "cal.yaml": str(tmp / "cal.yaml"),
             "ibnetdiscover.txt": str(tmp / "ibnetdiscover.txt")}
    words = [files.get(w, str(REPO / w) if w.startswith("examples/") else w) for w in words]
    if words[0] == "study" and "-o" in words:
        words[words.index("-o") + 1] = str(tmp / words[words.index("-o") + 1])
    if words[0] in MEASURING and "--dry-run" not in words:
        words += SHORT + ([] if "-s" in words else ["-s", "8"])
        if words[0] == "run" and "-o" not in words:
            words += ["-o", str(tmp / "results" / f"{abs(hash(example)):x}.json")]
    return words


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """The files the examples read: a run document (twice, for compare) and an earlier
    import of the fabric (last.yaml, for topology diff) made first."""
    tmp = tmp_path_factory.mktemp("readme")
    for name in ("run.json", "after.json"):
        _call(["run", "message.pingpong", "-s", "8,64K", *SHORT, "-q", "-o", str(tmp / name)], tmp)
    # a fabric as ibnetdiscover prints it (support/ibsim.py, checked against the real tool): a tree,
    # so that Slurm's topology/tree takes it
    (tmp / "ibnetdiscover.txt").write_text(ibsim.topology_text(ibsim.fat_tree(leaves=2, per_leaf=2, spines=1,
                                                                                parallel=2), False))
    _call(["topology", "import", str(tmp / "ibnetdiscover.txt"), "-o", str(tmp / "last.yaml")], tmp)
    return tmp


def _call(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "100"}
    p = subprocess.run([sys.executable, "-m", "fabriclab.cli", *argv], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, (argv, p.stdout[-2000:], p.stderr[-2000:])
    assert "Traceback" not in p.stderr, p.stderr
    return p


def test_the_readme_has_examples():
    ex = examples()
    assert len(ex) > 30 and "fabriclab run coll -n 4 --validate" in ex, ex


@pytest.mark.parametrize("example", examples())
def test_a_readme_example_runs(example, made):
    argv = _argv(example, made)
    if argv is None:
        return                     # a testbed's or named hosts' example: test_testbed.py runs those
    if argv[:2] == ["calibrate", str(made / "run.json")]:
        # calibrate reads a saturation run: make one of the smallest
        _call(["run", "-n", "4", "message.saturation", "--active", "2", *SHORT, "-s", "64K", "-q", "-o", str(made / "sat.json")],
              made)
        argv[1] = str(made / "sat.json")
    _call(argv, made)
