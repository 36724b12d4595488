"""bench/bench_apps.py and its reference (bench/reference/dgemm_ref.c), without MPI: the
reference times cblas_dgemm alone with one BLAS thread, as the core does, and the script asks
fabriclab for the same multiply with registered parameters."""
import re
import sys
from pathlib import Path

from fabriclab.suite.benchmarks import REGISTRY

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import bench_apps as ba  # noqa: E402  (bench/ holds scripts, not a package)


def test_the_reference_times_dgemm_alone_with_one_thread():
    text = (ba.REF_DIR / "dgemm_ref.c").read_text()
    timed = re.search(r"^static double multiply\(.*?^\}$", text, re.S | re.M).group(0)
    assert "cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n" in timed
    assert not re.search(r"\bMPI_\w+\s*\(", timed)
    assert "openblas_set_num_threads(1)" in text
    core = (BENCH.parent / "csrc" / "families" / "app_matmul.c").read_text()
    assert "openblas_set_num_threads(1)" in core and "cblas_dgemm(CblasRowMajor" in core


def test_the_script_asks_for_one_blas_rank_with_registered_parameters():
    args = ba.matmul_args(2048)
    facts = REGISTRY[args[0]]
    assert args[args.index("-s") + 1] == "2048" and args[args.index("-n") + 1] == "1"
    assert args[args.index("--active") + 1] == "1" and args[args.index("-p") + 1] == "local=blas"
    assert "blas" in facts.params["local"].choices and facts.metric == "latency"
    opts = ba.parse_args([])
    assert opts.size == ba.MATMUL_N == 2048 and opts.rounds >= 3
