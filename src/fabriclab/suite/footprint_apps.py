"""What one point of the applications, the collectives and the noise benchmarks
holds (app_*.c, coll.c, coll_ops.c, noise.c), on footprint.py's model."""

from __future__ import annotations

from . import apps
from .collectives import DTYPES
from .footprint import INT_MAX, PAGE, REQUEST, STATE, At, Footprint, ceil_div, const, page, requests


# ---- app_*.c: the applications, per active rank (apps.py has the block
# arithmetic; the largest block is ceil(n / N) items); every rank its state.
def _rows(at: At, n: int) -> int:
    return ceil_div(n, max(at.active, 1))


def _app(at: At) -> int:
    """app.c, app_begin: an active rank's state and its 2N requests."""
    return PAGE + requests(2 * max(at.active, 1))


def _transpose(at: At) -> int:
    """A and B, row blocks of M words each, and the rows table; packed adds
    a send and a receive array as large and the counts; the datatype modes
    (datatype, deposit by put) a table of 3N datatypes and one of 3N counts;
    deposit by stores a table of the peers' B."""
    m = at.size
    block = page(_rows(at, m) * m * 8)
    mode, n = at.params.get("mode", "packed"), max(at.active, 1)
    tables = {"packed": 2 * block + page(16 * n),
              "datatype": page(8 * 3 * n) + page(12 * n)}.get(mode)
    if tables is None:   # deposit: stores where every active rank shares a node (one host), puts with datatypes
        tables = page(8 * n) if at.params.get("deposit", "auto") != "put" else page(24 * n) + page(12 * n)
    return _app(at) + page(16 * n) + 2 * block + tables


def _matmul(at: At) -> int:
    """Rows of A and C and all of B (gathered), n x n doubles, and the gather's counts."""
    n = apps.matmul_side(at.size, max(at.active, 1), at.params.get("scale", "strong"))
    rows = page(_rows(at, n) * n * 8)
    return _app(at) + 2 * rows + page(n * n * 8) + 2 * page(4 * max(at.active, 1))


def _sort(at: At) -> int:
    """The keys as drawn and the buckets (keys(r) elements each), what
    arrives and the radix sort's scratch (as many): four arrays (app_sort.c;
    the bucket pass only reads the drawn keys, so no working copy); five
    tables of N counts and the radix histograms (8 digits x 256 counts), and
    verify's table of N. What arrives may exceed keys(r) by the draw's
    spread, bounded here by 8 sqrt(keys) + 64 elements."""
    keys = _rows(at, apps.sort_keys(at.size, max(at.active, 1), at.params.get("scale", "strong")))
    e = int(at.params.get("elem", 8))
    arrive = keys + 8 * int(keys ** 0.5) + 64
    n = max(at.active, 1)
    return _app(at) + 2 * page(keys * e) + 2 * page(arrive * e) + 5 * page(8 * n) + page(8 * 256 * 4) + \
        page(24 * n)


APP_TRANSPOSE = Footprint({"b": _transpose, "i": STATE})
APP_MATMUL = Footprint({"b": _matmul, "i": STATE})
APP_SORT = Footprint({"b": _sort, "i": STATE})


# ---- coll: one collective call (coll.c, coll_ops.c)

def _coll_bytes(op: str, at: At) -> tuple[int, int]:
    """The send and receive buffers' bytes of an active rank (coll_ops.c, coll_sizes): the
    vector, or N blocks where the operation gathers or scatters; reduce_scatter's result is
    this rank's block of the vector (at most ceil(SIZE / N) elements), the whole vector in place."""
    e = DTYPES.get(at.params.get("dtype", "int8"), 1)
    c, n, in_place = at.size // e, max(at.active, 1), at.params.get("in_place") == "yes"
    snd = rcv = c
    if op == "bcast":
        snd = 0
    elif op in ("allgather", "allgatherv", "gather", "gatherv"):
        rcv = c * n
    elif op in ("scatter", "scatterv"):
        snd = c * n
    elif op in ("alltoall", "alltoallv"):
        snd = rcv = c * n
    elif op == "reduce_scatter":
        rcv = c if in_place else ceil_div(c, n)
    elif op == "reduce_scatter_block":
        snd = c // n * n
        rcv = snd if in_place else c // n
    elif op == "barrier":
        snd = rcv = 0
    return snd * e, rcv * e


def coll(op: str) -> Footprint:
    """An active rank holds its state, app_begin's 2N requests, both buffers, the counts and
    displacements (N ints each) and, persistent, a request per root; the library may take
    scratch as large as both buffers (a reduction's temporary vector, a gather's staging)."""
    def alloc(at: At) -> int:
        snd, rcv = _coll_bytes(op, at)
        n = max(at.active, 1)
        roots = n if at.params.get("root_shift") == "on" else 1
        persistent = page(REQUEST * roots) if at.params.get("form") == "persistent" else 0
        return _app(at) + page(snd) + page(rcv) + 2 * page(4 * n) + persistent

    return Footprint({"b": alloc, "i": STATE}, {"b": lambda at: sum(_coll_bytes(op, at))}, limit=_coll_limit)


def _coll_limit(at: At) -> str | None:
    """coll.c, check_point: N x count elements must fit an MPI int (a v form's displacement)."""
    items = at.size // DTYPES.get(at.params.get("dtype", "int8"), 1) * max(at.active, 1)
    return f"elements of one op's buffers: {items} items exceed an MPI int count" if items > INT_MAX else None


# ---- noise.c: a page of state and the record's integer nanoseconds (8 bytes each)
NOISE_DETOUR_KEPT = 1 << 17    # noise.c: DETOUR_CAP, the detours kept, a start and a length each
NOISE_FWQ = Footprint({"b": lambda at: PAGE + page(8 * max(at.param("quanta"), 1))})
NOISE_DETOUR = Footprint({"b": const(PAGE + page(16 * NOISE_DETOUR_KEPT))})
