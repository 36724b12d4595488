"""The report reads a run's rows in a fixed number of passes, whatever the
number of variants, sizes or rank counts: a pass per group made reports of
imports of many datatypes quadratic (bench/bench_report.py times them)."""
from fabriclab import imports
from fabriclab.report import figures, layers
from fabriclab.report.curves import RunView


class Passes(list):
    """A run's rows that count how often they are gone through."""
    n = 0

    def __iter__(self):
        Passes.n += 1
        return super().__iter__()


def passes(tmp_path, variants: int) -> int:
    f = tmp_path / f"osu-{variants}.txt"
    f.write_text("".join(f"# OSU MPI Latency Test v7.3\n# Datatype: MPI_T{j}.\n# Size       Avg Latency(us)\n"
                         "1                   1.50\n2                   1.60\n" for j in range(variants)))
    run = RunView.of("osu", imports.load(f, "osu"))
    run.rows = Passes(run.rows)
    Passes.n = 0
    figures.views([run])
    for bench in run.benches():
        figures.for_benchmark([run], bench)
    figures.ladder_rows(run), layers.costs(run)
    return Passes.n


def test_the_passes_over_the_rows_do_not_grow_with_the_variants(tmp_path):
    few, many = passes(tmp_path, 3), passes(tmp_path, 30)
    assert few == many and many < 60
