"""The applications' arithmetic without MPI (suite/apps.py): who owns what
in balanced blocks, which rank a sort key goes to, how many elements each
rank sends each other rank, for divisions that are not even, and the memory
and refusals the footprint derives from them."""
import math

import pytest

from fabriclab.suite import apps, footprint, footprint_apps
from fabriclab.suite.footprint import At

UNEVEN = [(10, 3), (7, 4), (10007, 4), (5, 5), (3, 4), (1000003, 7), (1, 1)]


@pytest.mark.parametrize("n,nranks", UNEVEN)
def test_blocks_cover_every_item_once_and_differ_by_at_most_one(n, nranks):
    sizes = apps.blocks(n, nranks)
    assert sum(sizes) == n and max(sizes) - min(sizes) <= 1
    assert [apps.lo(n, r, nranks) for r in range(nranks + 1)] == [sum(sizes[:r]) for r in range(nranks + 1)]
    if n <= 10007:  # each item's owner is the one rank whose block holds it
        owners = [r for r in range(nranks) for _ in range(apps.count(n, r, nranks))]
        assert owners == sorted(owners) and len(owners) == n


def test_who_owns_what_in_small_uneven_divisions():
    assert apps.blocks(10, 3) == [3, 3, 4]       # lo = 0, 3, 6, 10
    assert apps.blocks(7, 4) == [1, 2, 2, 2]     # lo = 0, 1, 3, 5, 7
    assert apps.blocks(3, 4) == [0, 1, 1, 1]     # more ranks than items: refused before a run
    assert apps.lo(10007, 3, 4) == 7505 and apps.count(10007, 3, 4) == 2502


@pytest.mark.parametrize("nranks", [1, 2, 3, 5, 7, 64, 1000])
def test_bucket_boundaries_split_the_32_bit_keys_in_key_order(nranks):
    """Bucket d starts at the first k with k N >= d 2^32, ceil(d 2^32 / N)."""
    assert apps.bucket_of(0, nranks) == 0 and apps.bucket_of(2**32 - 1, nranks) == nranks - 1
    for d in range(1, min(nranks, 50)):
        first = -(-(d << 32) // nranks)
        assert apps.bucket_of(first, nranks) == d and apps.bucket_of(first - 1, nranks) == d - 1


def test_draw_is_splitmix64():
    """splitmix64's published first outputs from state 0 (Steele, Lea and Flood, 2014)."""
    assert [apps.draw(0, g) for g in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    assert apps.draw(1, 5) != apps.draw(2, 5)


@pytest.mark.parametrize("keys,nranks", [(10007, 1), (10007, 2), (10007, 3), (10007, 4), (5003 * 4, 4)])
def test_sort_counts_per_destination(keys, nranks):
    counts = apps.sort_counts(keys, nranks, seed=1)
    assert [sum(row) for row in counts] == apps.blocks(keys, nranks)   # every element goes somewhere
    assert sum(map(sum, counts)) == keys
    for a in range(nranks):       # close to the uniform expectation exchange_pairs gives
        for b in range(nranks):
            mean = apps.count(keys, a, nranks) / nranks
            assert abs(counts[a][b] - mean) < 5 * math.sqrt(mean), (a, b, counts)


def test_sort_counts_follow_the_keys_not_the_ranks():
    """The same keys at any N: what rank b receives at N ranks is the keys of
    its key range, wherever they were drawn."""
    keys = 4001
    into = [sum(col) for col in zip(*apps.sort_counts(keys, 3, seed=7))]
    direct = [0, 0, 0]
    for g in range(keys):
        direct[apps.bucket_of(apps.draw(7, g) >> 32, 3)] += 1
    assert into == direct


def test_exchange_pairs_of_the_sort():
    pairs = apps.SORT.exchange(10007, 3, {"elem": "16", "scale": "strong"})
    assert set(pairs) == {(a, b) for a in range(3) for b in range(3) if a != b}
    assert pairs[(0, 1)] == 3335 * 16 / 3 and pairs[(2, 0)] == 3336 * 16 / 3   # blocks 3335, 3336, 3336
    weak = apps.SORT.exchange(1000, 4, {"elem": "8", "scale": "weak"})
    assert all(v == 1000 * 8 / 4 for v in weak.values())
    assert apps.SORT.exchange(1000, 1, {}) == {}


def test_weak_scaling_keeps_each_ranks_keys():
    assert apps.sort_keys(5003, 4, "weak") == 20012 and apps.sort_keys(5003, 4, "strong") == 5003
    assert apps.SORT.problem(5003, 3, {"scale": "weak"}) == 15009


def test_sort_footprint_and_refusal():
    at = At(size=10007, buffers=1, active=3, nranks=4, params={"elem": "16", "scale": "strong"})
    keys = 3336   # the largest block of 10007 over 3
    arrive = keys + 8 * int(math.sqrt(keys)) + 64
    page = footprint.page
    # state and requests, the four arrays, five tables of N, the radix histograms, verify's table
    assert footprint_apps.APP_SORT.bytes("b", at) == (2 * 4096 + 2 * page(keys * 16) + 2 * page(arrive * 16) + 5 * 4096
                                                 + 8192 + 4096)
    assert apps.SORT.refusal(10007, 3, {"elem": "16", "scale": "strong"}) is None
    assert "key count 3 over 4 ranks" in apps.SORT.refusal(3, 4, {"elem": "8", "scale": "strong"})
    assert apps.SORT.refusal(1, 4, {"elem": "8", "scale": "weak"}) is None   # one key per rank
