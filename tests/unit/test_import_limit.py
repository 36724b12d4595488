"""`fabriclab import` takes at most imports.MAX_ROWS printed rows, so that
what it accepts is reported in seconds (bench/bench_report.py times the
largest); the limit is lowered here so that the files stay a few lines."""
from pathlib import Path

import pytest

from fabriclab import schema
from fabriclab.cli import main
from fabriclab.errors import UsageError
from fabriclab import imports

USAGE = Path(__file__).parents[2] / "docs" / "usage.md"


def osu_bw(path: Path, rows: int) -> Path:
    """osu_bw output of `rows` rows, the first a zero rate (a skipped row, which counts as one)."""
    lines = ["# OSU MPI Bandwidth Test v7.3", "# Size      Bandwidth (MB/s)", "1                   0.00"]
    lines += [f"{1 << i:<20d}{100.0 * i:.2f}" for i in range(1, rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("limit", [1, 4])
def test_an_import_of_max_rows_is_taken_and_one_more_refused_in_one_line(tmp_path, monkeypatch, capsys, limit):
    monkeypatch.setattr(imports, "MAX_ROWS", limit)
    at, out = osu_bw(tmp_path / "at.txt", limit), tmp_path / "at.json"
    assert main(["import", str(at), "--from", "osu", "-o", str(out)]) == 0
    doc = schema.load(out)
    assert len(doc.points) + len(doc.skips) == limit and len(doc.skips) == 1
    capsys.readouterr()
    over = osu_bw(tmp_path / "over.txt", limit + 1)
    assert main(["import", str(over), "--from", "osu", "-o", str(tmp_path / "over.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"holds {limit + 1:,} rows, more than the {limit:,} one import takes" in err
    assert not (tmp_path / "over.json").exists()


def test_imb_rows_count_against_the_same_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(imports, "MAX_ROWS", 2)
    head = ("# Intel(R) MPI Benchmarks 2021.3, MPI-1 part\n# Benchmarking PingPong\n# #processes = 2\n"
            "       #bytes #repetitions      t[usec]   Mbytes/sec\n")
    f = tmp_path / "imb.txt"
    f.write_text(head + "".join(f"{s:13d}{1000:13d}{1.5:13.2f}{10.0:13.2f}\n" for s in (0, 1)))
    assert len(imports.load(f, "imb").points) == 2
    f.write_text(head + "".join(f"{s:13d}{1000:13d}{1.5:13.2f}{10.0:13.2f}\n" for s in (0, 1, 2)))
    with pytest.raises(UsageError, match="holds 3 rows, more than the 2"):
        imports.load(f, "imb")


def test_the_usage_guide_states_the_limit():
    section = USAGE.read_text().split("fabriclab import osu_latency.txt", 1)[1]
    assert f"{imports.MAX_ROWS:,} rows" in section
