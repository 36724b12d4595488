"""A schedule's time with its steps overlapping, rank by rank (a fluid simulation).

An MPI library runs a schedule (schedules.py) rank by rank, not step by step:
each rank takes its steps in order and enters the next as soon as its own flows
of the last are done (MPICH's recursive doubling and halving, Rabenseifner's
allreduce and the ring call MPIC_Sendrecv at every step; a tree's rank sends
to its children one after another). A pair that finishes a step early starts
its next while other pairs still move the last, so flows of different steps
share cables (a straggler is slowed), or the slowest flows of successive steps
are not on one rank's path (the op ends before the steps' sum).

The simulation follows that order (a discrete-event fluid model, as SimGrid's
flow-level network model runs MPI traces: Velho et al., ACM TOMACS 23(4), 2013):
- a flow starts alpha after its source enters the flow's step: its bytes leave
  as soon as the sender posts them (a receiver's socket holds what arrives
  before its receive is posted);
- the flows in flight share the network max-min (`rates`, the Network's
  solver), and time moves to the next flow's end or start, when the rates are
  solved again;
- a rank is done with a step when every flow of the step it sends or receives
  is (a sendrecv: both), and it has reduced what it received (gamma a byte);
  it then enters its next step; a rank with no flow in a step skips it.
When every flow of each step takes the same time, this is the steps' sum of
schedule_time.py (so the closed forms hold on a full-bisection network).

Why the sender's start, not the pair's: on the uneven line of four switches
(examples/testbeds/uneven-line.yaml), MPICH's recursive doubling allreduce of
256 KiB took 1.04-1.21x the steps' sum and 0.91-1.06x this (the fastest
sample of each point, four validations), where starting each flow only once
both its ends entered its step gave 1.11-1.30x: the pairs that finished
early had their next messages on the wire.

It costs a max-min solution per event, about one per flow, so the Network
uses it only for a network file's schedules of at most OVERLAP_CELLS ranks x
steps (tens of nodes); a catalog system's thousands of nodes, and larger
schedules, keep the steps' sum."""

from __future__ import annotations

import heapq

import numpy as np

# Ranks x steps up to which a schedule is timed rank by rank: a network file's tens of
# nodes (12 ranks' ring allreduce is 264), not a catalog system's thousands.
OVERLAP_CELLS = 4096
TOL = 1e-9          # flows ending within this share of the next end end with it


class _Flows:
    """The schedule's flows, flat: step, source, destination, bytes, and each rank's steps."""

    def __init__(self, steps: list, ranks: int):
        self.step = np.concatenate([np.full(len(s.src), k) for k, s in enumerate(steps)]).astype(np.int64)
        self.src = np.concatenate([s.src for s in steps]).astype(np.int64)
        self.dst = np.concatenate([s.dst for s in steps]).astype(np.int64)
        self.nbytes = np.concatenate([s.nbytes for s in steps]).astype(float)
        self.reduce = np.array([s.reduce for s in steps], bool)
        # flows each (rank, step) waits for, and the steps each rank takes, in order
        self.need = np.zeros((ranks, len(steps)), np.int64)
        np.add.at(self.need, (self.src, self.step), 1)
        np.add.at(self.need, (self.dst, self.step), 1)
        self.order = [np.flatnonzero(row) for row in self.need]
        self.red = np.zeros((ranks, len(steps)))
        red = self.reduce[self.step]
        np.add.at(self.red, (self.dst[red], self.step[red]), self.nbytes[red])
        self.sends: dict = {}
        for f in range(len(self.src)):
            self.sends.setdefault((int(self.src[f]), int(self.step[f])), []).append(f)


class _Run:
    """The simulation's state: the clock, the events ahead, the flows in flight."""

    def __init__(self, fl: _Flows, local: np.ndarray, rates, alpha: float, gamma: float):
        self.fl, self.local, self.rates, self.alpha, self.gamma = fl, local, rates, alpha, gamma
        ranks, steps = fl.need.shape
        self.t, self.events = 0.0, []                  # heap of (time a flow starts, the flow)
        self.left = fl.nbytes.copy()
        self.active: list = []
        self.rate, self.label = np.zeros(0), np.zeros(0, np.int64)
        self.flow_label = np.full(len(fl.src), -1, np.int64)
        self.flow_end = np.zeros(len(fl.src))
        self.last = np.zeros((ranks, steps))           # the latest end of a rank's flows in a step
        self.entered = np.full((ranks, steps), np.nan)
        self.done = np.full((ranks, steps), np.nan)
        self.pos = np.zeros(ranks, np.int64)           # each rank's place in its order of steps
        self.stale = True

    def enter(self, r: int, at: float) -> None:
        """Rank r enters its next step at `at` (its sends start alpha later), and the
        steps after it that it finds already done."""
        order = self.fl.order[r]
        while self.pos[r] < len(order):
            k = int(order[self.pos[r]])
            self.entered[r, k] = at
            for f in self.fl.sends.get((r, k), ()):
                heapq.heappush(self.events, (at + self.alpha, f))
            if self.fl.need[r, k]:
                return
            at = self._finish(r, k)

    def _finish(self, r: int, k: int) -> float:
        """Rank r done with step k: when its last flow ended and it reduced what it received."""
        self.done[r, k] = max(self.entered[r, k], self.last[r, k]) + self.gamma * self.fl.red[r, k]
        self.pos[r] += 1
        return self.done[r, k]

    def end(self, f: int) -> None:
        fl = self.fl
        k = int(fl.step[f])
        self.flow_end[f] = self.t
        for r in (int(fl.src[f]), int(fl.dst[f])):
            fl.need[r, k] -= 1
            self.last[r, k] = max(self.last[r, k], self.t)
            if not fl.need[r, k] and not np.isnan(self.entered[r, k]) and np.isnan(self.done[r, k]):
                self.enter(r, self._finish(r, k))

    def start(self, f: int) -> None:
        if self.local[f] or self.left[f] <= 0:
            self.end(f)
        else:
            self.active.append(f)
            self.stale = True

    def solve(self) -> None:
        if self.stale and self.active:
            self.rate, self.label = self.rates(np.array(self.active))
            self.stale = False

    def advance(self, dt: float) -> None:
        if self.active and dt > 0:
            self.left[self.active] -= self.rate * dt
        self.t += dt

    def step(self) -> None:
        """Move to the next event: the earliest flow's end or the next start."""
        self.solve()
        ahead = self.events[0][0] if self.events else np.inf
        finish = self.left[self.active] / self.rate if self.active else np.zeros(0)
        soonest = float(finish.min()) if len(finish) else np.inf
        if self.t + soonest <= ahead:
            self.advance(soonest)
            over = finish <= soonest * (1 + TOL) + 1e-15     # a femtosecond: a rounding's remains
            ended = [f for f, o in zip(self.active, over) if o]
            self.flow_label[ended] = self.label[over]
            self.active = [f for f, o in zip(self.active, over) if not o]
            self.stale = True
            for f in ended:
                self.end(f)
        else:
            self.advance(ahead - self.t)
            while self.events and self.events[0][0] <= self.t:
                self.start(heapq.heappop(self.events)[1])


def simulate(steps: list, ranks: int, local: np.ndarray, rates, alpha: float, gamma: float):
    """(the time each step's last rank is done, the bottleneck label of each step's last
    flow to end, -1 where none) of `steps` (each taken once) on `ranks` ranks. `local[f]`
    marks the flows (in the steps' order) that never reach the network; `rates(flows)`
    gives the max-min rates and bottleneck labels of the remote flows given by index."""
    fl = _Flows(steps, ranks)
    run = _Run(fl, local, rates, alpha, gamma)
    for r in range(ranks):
        run.enter(r, 0.0)
    while run.events or run.active:
        run.step()
    ends = np.where(np.isnan(run.done), 0.0, run.done).max(axis=0)
    labels = np.full(len(steps), -1, np.int64)
    for k in range(len(steps)):
        mine = np.flatnonzero(fl.step == k)
        if len(mine):
            labels[k] = run.flow_label[mine[np.argmax(run.flow_end[mine])]]
    return ends, labels
