"""Progressive filling against a plain reference implementation and known answers."""

import numpy as np
import pytest

from fabriclab.errors import UsageError
from fabriclab.model.maxmin import check_max_min, max_min
from fabriclab.model.topologies import FatTree, NodeModel, Paths, Torus
from fabriclab.model.traffic import all_pairs


def reference(paths_list, cap, demand=None):
    """Textbook progressive filling, one resource at a time, pure Python."""
    F = len(paths_list)
    rate = [0.0] * F
    live = set(range(F))
    used = [0.0] * len(cap)
    while live:
        best = None
        for r in range(len(cap)):
            w = sum(wt for f in live for (rr, wt) in paths_list[f] if rr == r)
            if w > 0:
                inc = (cap[r] - used[r]) / w
                best = inc if best is None else min(best, inc)
        if demand is not None:
            for f in live:
                best = min(best, demand[f] - rate[f])
        for f in live:
            rate[f] += best
            for rr, wt in paths_list[f]:
                used[rr] += best * wt
        done = set()
        for f in live:
            if demand is not None and rate[f] >= demand[f] - 1e-12:
                done.add(f)
            for rr, wt in paths_list[f]:
                if used[rr] >= cap[rr] - 1e-9 * cap[rr]:
                    done.add(f)
        live -= done
    return np.array(rate)


def make_paths(paths_list):
    cols = [(np.full(len(p), f), np.array([r for r, _ in p]), np.array([w for _, w in p]))
            for f, p in enumerate(paths_list)]
    return Paths.from_columns(cols, len(paths_list))


@pytest.mark.parametrize("seed", range(12))
def test_random_instances_match_reference(seed):
    rng = np.random.default_rng(seed)
    R, F = int(rng.integers(3, 9)), int(rng.integers(2, 25))
    cap = rng.uniform(1, 5, R)
    pl = []
    for _ in range(F):
        rs = rng.choice(R, size=int(rng.integers(1, min(4, R) + 1)), replace=False)
        pl.append([(int(r), float(rng.choice([1.0, 0.5]))) for r in rs])
    demand = rng.uniform(0.1, 3, F) if seed % 3 == 0 else None
    res = max_min(make_paths(pl), cap, demand)
    assert np.allclose(res.rates, reference(pl, cap, demand), rtol=1e-7)
    if demand is None:
        assert check_max_min(make_paths(pl), cap, res)


def test_classic_example():
    # two links of capacity 1; flow A uses both, B only link 0, C only link 1: all get 1/2
    pl = [[(0, 1.0), (1, 1.0)], [(0, 1.0)], [(1, 1.0)]]
    assert np.allclose(max_min(make_paths(pl), np.array([1.0, 1.0])).rates, [0.5, 0.5, 0.5])
    # link 1 has capacity 3: A stays at 1/2 (bottleneck link 0), C takes the rest, 2.5
    r = max_min(make_paths(pl), np.array([1.0, 3.0]))
    assert np.allclose(r.rates, [0.5, 0.5, 2.5])
    assert list(r.bottleneck) == [0, 0, 1]


@pytest.mark.parametrize("topo", [Torus((4, 4), False, NodeModel(adapter_bus=True)), FatTree.kary_ntree(3, 2),
                                  Torus((3, 5), True)])
def test_alltoall_min_rate_equals_hot_resource_bound(topo):
    s, d = all_pairs(topo.n_nodes)
    p = topo.paths(s, d)
    cap = np.linspace(1.0, 2.0, topo.n_resources)
    r = max_min(p, cap)
    load = np.bincount(p.res, weights=p.weight, minlength=topo.n_resources)
    hot = np.min(cap[load > 0] / load[load > 0])
    assert r.rates.min() == pytest.approx(hot)
    assert check_max_min(p, cap, r)


def test_errors():
    with pytest.raises(UsageError):
        max_min(make_paths([[(0, 1.0)]]), np.array([0.0]))
    with pytest.raises(UsageError):
        max_min(make_paths([[]]), np.array([1.0]))
    with pytest.raises(UsageError):
        max_min(make_paths([[(3, 1.0)]]), np.array([1.0]))
