"""app.matmul's arithmetic without MPI (suite/apps.py): the matrix side under weak
scaling against a high-precision cube root, and the rows and bytes each rank of an uneven
division owns and receives, against numbers worked by hand."""
from decimal import ROUND_HALF_EVEN, Decimal, getcontext

import pytest

from fabriclab.suite import apps


def _cube_root(nranks: int) -> Decimal:
    """cbrt(N) in 60-digit decimals."""
    getcontext().prec = 60
    return Decimal(nranks) ** (Decimal(1) / Decimal(3))


def _nearest(n: int, root: Decimal) -> int:
    """round(n cbrt(N)) in 60-digit decimals: an oracle apart from the integer search."""
    getcontext().prec = 60
    return int((Decimal(n) * root).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


@pytest.mark.parametrize("n, nranks, side", [(256, 8, 512), (256, 2, 323), (256, 4, 406), (256, 64, 1024),
                                             (40, 2, 50), (40, 4, 63), (1, 1, 1), (1, 7, 2), (2048, 27, 6144)])
def test_weak_sides_by_hand(n, nranks, side):
    assert apps.matmul_side(n, nranks, "weak") == side
    assert apps.matmul_side(n, nranks, "strong") == n


def test_weak_sides_are_the_nearest_integer_everywhere():
    # 64 ** (1/3) is 3.9999999999999996 in doubles: the integer search keeps such sides exact
    for nranks in range(1, 130):
        root = _cube_root(nranks)                       # one power per rank count, not per side
        for n in (1, 2, 3, 7, 97, 100, 255, 256, 1000, 4096, 12345):
            assert apps.matmul_side(n, nranks, "weak") == _nearest(n, root), (n, nranks)


@pytest.mark.parametrize("n, nranks, rows, received", [
    (97, 4, [24, 24, 24, 25], [73 * 97 * 8, 73 * 97 * 8, 73 * 97 * 8, 72 * 97 * 8]),
    (10, 3, [3, 3, 4], [560, 560, 480]),
    (5, 5, [1, 1, 1, 1, 1], [160] * 5),
    (7, 1, [7], [0]),
])
def test_rows_and_gathered_bytes_of_uneven_divisions(n, nranks, rows, received):
    assert apps.blocks(n, nranks) == rows and sum(rows) == n
    assert [apps.lo(n, r, nranks) for r in range(nranks)] == [sum(rows[:r]) for r in range(nranks)]
    assert apps.matmul_received(n, nranks) == received
    assert apps.flops(n) == 2 * n ** 3


def test_a_side_below_the_ranks_is_refused_with_the_numbers():
    assert apps.MATMUL.refusal(4, 4, {"scale": "strong"}) is None
    why = apps.MATMUL.refusal(3, 4, {"scale": "strong"})
    assert "matrix side n 3 over 4 ranks" in why
    assert apps.MATMUL.refusal(3, 4, {"scale": "weak"}) is None   # 3 cbrt(4) rounds to 5
