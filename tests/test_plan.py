import pytest

from fabriclab.benchmarks import REGISTRY, select
from fabriclab.errors import UsageError
from fabriclab.plan import Sampling, build


def test_default_plan_covers_all_levels():
    plan = build(None, None, None, None, Sampling(), False)
    levels = {j.bench.level for j in plan.jobs}
    assert levels == {"memory", "deposit", "message", "tcp"}
    assert plan.npoints > 100


def test_level_and_name_selection_without_duplicates():
    chosen = select(["message", "message.pingpong"])
    assert [b.name for b in chosen] == [n for n in REGISTRY if n.startswith("message.")]


def test_unknown_bench_is_usage_error():
    with pytest.raises(UsageError, match="unknown benchmark"):
        select(["messgae"])


def test_sizes_override_and_strides_only_for_strided():
    plan = build(["memory.copy", "memory.strided_store"], "4K,8K", "1:4", None, Sampling(), True)
    copy, strided = plan.jobs
    assert copy.sizes == (4096, 8192) and copy.strides == (1,)
    assert strided.strides == (1, 2, 4)
    assert plan.npoints == 2 + 6
    assert "--validate" not in copy.core_args()


def test_params_routed_to_benchmarks_that_accept_them():
    plan = build(["message.stream", "message.pingpong"], "1", None, ["window=8"], Sampling(), False)
    stream, ping = plan.jobs
    assert stream.params == {"window": "8"} and ping.params == {}
    assert stream.core_args()[-2:] == ["--param", "window=8"]


@pytest.mark.parametrize("param", ["windw=8", "window", "=3"])
def test_bad_params(param):
    with pytest.raises(UsageError):
        build(["message.stream"], None, None, [param], Sampling(), False)


@pytest.mark.parametrize("s", [Sampling(min_samples=0), Sampling(target_ci=1.5), Sampling(point_time=0),
                               Sampling(min_samples=10, max_samples=5), Sampling(warmup=-1)])
def test_bad_sampling(s):
    with pytest.raises(UsageError):
        s.check()


def test_rank_requirement():
    with pytest.raises(UsageError, match="at least 2 ranks"):
        build(["message.pingpong"], None, None, None, Sampling(), False, nranks=1)
    assert build(["memory.copy"], None, None, None, Sampling(), False, nranks=1).jobs
