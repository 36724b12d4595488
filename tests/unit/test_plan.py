import pytest

from fabriclab.suite.benchmarks import REGISTRY, select
from fabriclab.errors import UsageError
from fabriclab.measure.plan import Sampling, build


def test_default_plan_covers_all_levels():
    plan = build(None, None, None, None, Sampling(), False)
    levels = {j.bench.level for j in plan.jobs}
    assert levels == {"memory", "deposit", "message", "tcp", "fabric", "ucx", "app", "coll"}
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
    from fabriclab.measure.protocol import job_argv
    argv = job_argv("core", strided, plan.sampling, plan.validate)
    assert argv[:4] == ["core", "memory.strided_store", "--sizes", "4096,8192"]
    assert argv[argv.index("--strides") + 1] == "1,2,4" and argv[-1] == "--validate"
    assert "--strides" not in job_argv("core", copy, plan.sampling, False)


def test_params_routed_to_benchmarks_that_accept_them():
    plan = build(["message.stream", "message.pingpong"], "1", None, ["window=8"], Sampling(), False)
    stream, ping = plan.jobs
    assert stream.params == {"window": "8"} and ping.params == {}
    from fabriclab.measure.protocol import job_argv
    argv = job_argv("core", stream, plan.sampling, False)
    assert argv[argv.index("--param") + 1] == "window=8" and "--param" not in job_argv("core", ping, plan.sampling, False)


@pytest.mark.parametrize("bench,param", [("message.stream", "windw=8"), ("message.stream", "window"),
                                         ("message.stream", "=3"), ("message.stream", "window=abc"),
                                         ("deposit.put_lat", "sync=bogus"), ("message.postal_restricted", "mode=x")])
def test_bad_params(bench, param):
    with pytest.raises(UsageError):
        build([bench], None, None, [param], Sampling(), False)


def test_param_choices_and_integers_accepted_in_canonical_form():
    plan = build(["deposit.put_bw", "message.postal_restricted"], "8", None,
                 ["sync=fence", "window=4K", "mode=ssend"], Sampling(), False)
    assert plan.jobs[0].params == {"sync": "fence", "window": "4096"}
    assert plan.jobs[1].params == {"window": "4096", "mode": "ssend"}
    assert REGISTRY["deposit.put_bw"].defaults == {"sync": "flush", "window": "64", "window_buffers": "per-op"}


def test_alltoall_window_only_with_the_concurrent_schedule():
    a2a = REGISTRY["message.alltoall"]
    assert a2a.defaults == {"variant": "collective", "window": "1", "fill": "0",   # one exchange per op, as before
                            "window_buffers": "shared"}
    plan = build(["message.alltoall"], "8", None, ["variant=concurrent", "window=1K"], Sampling(), False, 4)
    assert plan.jobs[0].params == {"variant": "concurrent", "window": "1024"}
    assert a2a.idle({"variant": "pairwise", "window": "1"}) == {}
    assert a2a.idle({"window": "2"}) == {"window": "message.alltoall: parameter window=2 applies only with "
                                                    "variant=concurrent, not variant=collective"}
    with pytest.raises(UsageError, match="window=8 applies only with variant=concurrent, not variant=collective"):
        build(["message.alltoall"], "8", None, ["variant=concurrent,collective", "window=8"], Sampling(), False, 4)


def test_window_given_for_a_level_leaves_the_alltoall_schedules_that_take_none_alone():
    """`run message -p window=8`: the window is for the benchmarks that stream windows; the all-to-all's
    collective and pairwise schedules keep one exchange per op, the concurrent one takes it."""
    plan = build(["message"], "8", None, ["window=8", "variant=collective,concurrent"], Sampling(), False, 4)
    a2a = [j.params for j in plan.jobs if j.bench.name == "message.alltoall"]
    assert a2a == [{"variant": "collective"}, {"variant": "concurrent", "window": "8"}]
    assert next(j for j in plan.jobs if j.bench.name == "message.stream").params == {"window": "8"}
    plan = build(["message"], "8", None, ["window=1,8"], Sampling(), False, 4)
    assert [j.params for j in plan.jobs if j.bench.name == "message.alltoall"] == [{"window": "1"}]   # one job


@pytest.mark.parametrize("s", [Sampling(min_samples=0), Sampling(target_ci=1.5), Sampling(point_time=0),
                               Sampling(min_samples=10, max_samples=5), Sampling(warmup=-1)])
def test_bad_sampling(s):
    with pytest.raises(UsageError):
        s.check()


def test_rank_requirement():
    with pytest.raises(UsageError, match="at least 2 ranks"):
        build(["message.pingpong"], None, None, None, Sampling(), False, nranks=1)
    assert build(["memory.copy"], None, None, None, Sampling(), False, nranks=1).jobs
