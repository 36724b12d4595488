"""Halo exchanges and neighbourhoods: who exchanges with whom, and the rules
a run is checked against before anything is launched.

The same arithmetic runs in the core (csrc/families/halo.h,
csrc/families/coll_neighbor.c); here it decides whether a run can start,
and how many neighbours each rank's buffers hold (footprint.py).

- IMB-P2P's grids (imb_p2p_stencil2d.c, imb_p2p_stencil3d.c): a periodic
  grid of every rank, 2 or 3 sides of at least 2 each, found by IMB's loops;
  rank r at x = r mod X, y = r div X mod Y, z = r div XY; its neighbours in
  IMB's order x-1, x+1, y-1, y+1 (z-1, z+1):

      6 ranks, 2-D: X = 2, Y = 3      rank 2's neighbours: 3, 3, 0, 4
          y=2   4  5
          y=1   2  3
          y=0   0  1

- OSU's Cartesian neighbourhoods (osu_util_mpi.c, omb_neighborhood_create):
  MPI_Dims_create's grid of DIM sides, periodic, and every rank within
  RADIUS steps in each dimension, diagonals included ((2 RADIUS + 1)^DIM - 1
  of them); OSU refuses RADIUS > (smallest side - 1) / 2, where a rank would
  be its own neighbour or a neighbour twice.
- A graph file (docs/halo.md): one edge "SRC DST" (or OSU's "SRC,DST") a
  line, SRC sending to DST; `#` starts a comment line."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import UsageError
from ..inputs import read_text

MAX_DEGREE = 65536          # coll_neighbor.c MAX_DEGREE: neighbours of one rank
MAX_DIM = 8                 # coll_neighbor.c: dims[8]
GRAPH_BYTES = 4 << 20       # a graph file's size at most
_EDGE = re.compile(r"^\s*(\d+)\s*[, \t]\s*(\d+)\s*$")


def imb_grid(n: int, dims: int) -> tuple | None:
    """IMB-P2P's grid of n ranks, (X, Y) or (X, Y, Z); None where IMB calls it invalid."""
    x = y = 2
    z = 2 if dims == 3 else 1
    while x * y * z < n:
        x, y, z = x + 1, y + 1, z + (dims == 3)
    if dims == 2 and x * y > n:
        while y > 1 and n % y:
            y -= 1
        x = n // y
    while dims == 3 and x * y * z > n and z >= 1:
        z -= 1
        while z > 1 and n % z:
            z -= 1
        m = n // z if z else 0
        lx = ly = 2
        while lx * ly < m:
            lx, ly = lx + 1, ly + 1
        if lx * ly > m:
            while ly > 1 and m % ly:
                ly -= 1
            lx = m // ly
        if ly >= z:
            x, y = lx, ly
    sides = (x, y, z)[:dims]
    return sides if min(sides) >= 2 and x * y * z == n else None


def imb_neighbours(rank: int, grid: tuple) -> list[int]:
    """Rank's neighbours on an IMB grid, in IMB's order (x-1, x+1, y-1, y+1, z-1, z+1)."""
    coords, r = [], rank
    for side in grid:
        coords.append(r % side)
        r //= side
    out = []
    for d in range(len(grid)):
        for step in (-1, 1):
            at = list(coords)
            at[d] = (at[d] + step) % grid[d]
            q = 0
            for k in reversed(range(len(grid))):
                q = q * grid[k] + at[k]
            out.append(q)
    return out


def dims_create(n: int, d: int) -> list[int]:
    """MPI_Dims_create(n, d) with every dimension free: of the d sides whose product is n, in
    non-increasing order (MPI 4.1 sec. 8.5.2), the smallest largest side, then the smallest sum
    of squares. MPICH 5's answer for every n up to 128 in 1..4 dimensions; Open MPI 5 gives the
    same but for 72 ranks in 2-D (12 x 6 where this gives 9 x 8)."""
    def splits(left: int, k: int, most: int) -> list[list[int]]:
        if k == 1:
            return [[left]] if left <= most else []
        return [[f, *rest] for f in range(min(most, left), 0, -1) if left % f == 0
                for rest in splits(left // f, k - 1, f)]
    return min(splits(n, d, n), key=lambda c: (c[0], sum(x * x for x in c)))


def cart_neighbours(rank: int, n: int, d: int, r: int) -> list[int]:
    """OSU's Cartesian neighbours of rank: every displacement in -r..r per dimension (the last
    fastest) but the rank itself, on MPI_Dims_create's periodic grid, ranks in row-major order."""
    dims = dims_create(n, d)
    me, q = [], rank
    for side in reversed(dims):
        me.append(q % side)
        q //= side
    me.reverse()
    out = []

    def walk(k: int, at: list[int]) -> None:
        if k == d:
            q = 0
            for i in range(d):
                q = q * dims[i] + (me[i] + at[i]) % dims[i]
            if q != rank:
                out.append(q)
            return
        for step in range(-r, r + 1):
            walk(k + 1, at + [step])

    walk(0, [])
    return out


@dataclass(frozen=True)
class Graph:
    """A graph file's edges (SRC, DST), in file order."""
    edges: tuple

    def destinations(self, rank: int) -> list[int]:
        return [b for a, b in self.edges if a == rank]

    def sources(self, rank: int) -> list[int]:
        return [a for a, b in self.edges if b == rank]

    @property
    def ranks(self) -> int:
        """The ranks it names: 1 + the largest."""
        return 1 + max(max(e) for e in self.edges)


def parse_graph(text: str, what: str = "graph file") -> Graph:
    """A graph file's text as a Graph; UsageError naming the first line that is not an edge."""
    edges = []
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _EDGE.match(line)
        if not m:
            raise UsageError(f"{what}: line {no} is not an edge 'SRC DST' of two rank numbers: {line.strip()[:60]!r}")
        edges.append((int(m.group(1)), int(m.group(2))))
    if not edges:
        raise UsageError(f"{what}: no edges (one 'SRC DST' a line, # for comments)")
    return Graph(tuple(edges))


def read_graph(path: str) -> Graph:
    """A graph file, read as a regular file of bounded size (inputs.py) and parsed."""
    if not path:
        raise UsageError("neighborhood=graph needs graph=PATH, a file of edges 'SRC DST'")
    return parse_graph(read_text(path, "graph file", GRAPH_BYTES), f"graph file {path}")


def stencil_dims(name: str) -> int:
    return 3 if name.endswith("3d") else 2


def check_stencil(name: str, sizes, params: dict, nranks: int) -> None:
    """UsageError where IMB-P2P's grid cannot hold the run's ranks."""
    dims = stencil_dims(name)
    if imb_grid(nranks, dims) is None:
        raise UsageError(f"{name}: IMB-P2P's Stencil{dims}D has no grid of {nranks} ranks (every side at least "
                         f"2, {'X x Y' if dims == 2 else 'X x Y x Z'} = {nranks}); "
                         f"{'4, 6, 8, 9 ...' if dims == 2 else '8, 12, 16, 18 ...'} ranks have one")


def degrees(params: dict, nranks: int) -> tuple[int, int]:
    """The most sources and destinations a rank has in the neighbourhood the params name."""
    kind = params.get("neighborhood", "cart")
    if kind in ("stencil2d", "stencil3d"):
        return (2 * stencil_dims(kind),) * 2
    if kind == "graph":
        g = read_graph(params.get("graph", ""))
        return (max(len(g.sources(r)) for r in range(nranks)), max(len(g.destinations(r)) for r in range(nranks)))
    deg = (2 * int(params.get("radius", 1)) + 1) ** int(params.get("dim", 1)) - 1
    return deg, deg


def check_neighbourhood(name: str, sizes, params: dict, nranks: int) -> None:
    """UsageError, in one line, for a neighbourhood the run's ranks cannot form."""
    kind = params.get("neighborhood", "cart")
    if kind in ("stencil2d", "stencil3d"):
        return check_stencil(kind, sizes, params, nranks)
    if kind == "graph":
        g = read_graph(params.get("graph", ""))
        if g.ranks > nranks:
            raise UsageError(f"{name}: the graph file names rank {g.ranks - 1}; this run has {nranks} ranks")
        worst = max(max(len(g.sources(r)), len(g.destinations(r))) for r in range(nranks))
        if worst > MAX_DEGREE:
            raise UsageError(f"{name}: a rank of the graph file has {worst} edges; at most {MAX_DEGREE}")
        return None
    d, r = int(params.get("dim", 1)), int(params.get("radius", 1))
    if d > MAX_DIM:
        raise UsageError(f"{name}: dim {d} is above {MAX_DIM}")
    if (2 * r + 1) ** d - 1 > MAX_DEGREE:
        raise UsageError(f"{name}: (2 x radius + 1)^dim - 1 = {(2 * r + 1) ** d - 1} neighbours; at most {MAX_DEGREE}")
    dims = dims_create(nranks, d)
    if min(dims) < 2:
        raise UsageError(f"{name}: {nranks} ranks cannot fill {d} dimensions (MPI_Dims_create gives "
                         f"{' x '.join(map(str, dims))}); {_fix(nranks, d, r)}")
    if r > (min(dims) - 1) // 2:
        raise UsageError(f"{name}: radius {r} is larger than the grid allows: {nranks} ranks in {d} dimension{'s' if d > 1 else ''} "
                         f"make {' x '.join(map(str, dims))}, and OSU's rule radius <= (smallest side - 1) / 2 "
                         f"allows {(min(dims) - 1) // 2}; {_fix(nranks, d, r)}")
    return None


def _fix(nranks: int, d: int, r: int) -> str:
    """What makes a Cartesian neighbourhood fit: the dims that `nranks` ranks fill with sides of
    2r + 1 or more at radius r, else the next rank count that dim d does (MPI_Dims_create's
    sides, not the count alone, decide: 10 ranks in 2-D are 5 x 2; (2r + 1)^d always fits)."""
    fits = [k for k in range(1, d) if min(dims_create(nranks, k)) >= 2 * r + 1]
    side = 2 * r + 1
    n = next((n for n in range(nranks + 1, 4 * nranks + side ** d + 1) if min(dims_create(n, d)) >= side),
             side ** d * -(-nranks // side ** d))
    more = f"{n:,} ranks ({' x '.join(map(str, dims_create(n, d)))})"
    return f"give dim <= {fits[-1]} or {more}" if fits else f"give {more}" + (" or a smaller radius" if r > 1 else "")


def sent_per_rank(params: dict, nranks: int, size: int) -> int:
    """Bytes one rank sends per op at most: its destinations x SIZE (the stencil's and the
    neighbourhood collectives' alike)."""
    return degrees(params, nranks)[1] * size


def destinations(bench: str, params: dict, nranks: int) -> list[list[int]] | None:
    """Each rank's destinations in one op of a halo benchmark (message.stencil2d/3d, or a
    coll.neighbor_* on its neighbourhood), a list per rank; None where they cannot be known
    (no IMB grid, a graph file no longer readable)."""
    kind = stencil_dims(bench) if bench.startswith("message.stencil") else None
    name = f"stencil{kind}d" if kind else params.get("neighborhood", "cart")
    if name in ("stencil2d", "stencil3d"):
        grid = imb_grid(nranks, stencil_dims(name))
        return [imb_neighbours(r, grid) for r in range(nranks)] if grid else None
    if name == "graph":
        try:
            g = read_graph(params.get("graph", ""))
        except UsageError:
            return None
        return [g.destinations(r) for r in range(nranks)]
    d, r = int(params.get("dim", 1)), int(params.get("radius", 1))
    return [cart_neighbours(q, nranks, d, r) for q in range(nranks)]
