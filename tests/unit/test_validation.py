"""`testbed validate` as a library (testbed/validation.py), on real hosts standing for
the file's nodes (no root, no namespace) and a measuring function that answers
with fixed rows: the runs it asks for, the calibration, the verdict, the document."""
import json
from pathlib import Path

import pytest

from fabriclab import schema
from fabriclab.errors import UsageError
from fabriclab.report import figures
from fabriclab.report.rows import Row
from fabriclab.schema.records import MergedPoint, Summary
from fabriclab.testbed.validation import Site, validate

TWO = str(Path(__file__).resolve().parents[2] / "examples" / "testbeds" / "two-switches.yaml")


def _point(bench: str, size: int, bandwidth: float, active=None) -> MergedPoint:
    """A merged point whose op (1 s, 95% interval 0.95..1.05 s) moves `bandwidth` bytes;
    with an active count, a pattern (its aggregate is that bandwidth)."""
    return MergedPoint(bench=bench, size=size, active=active, bytes_per_op=round(bandwidth),
                       summary=Summary(median=1.0, ci_low=0.95, ci_high=1.05), roles="sr" if active else None)


class FakeRuns:
    """Answers each `fabriclab run` with merged points: the trunk saturates at 16 MB/s one way
    and 15 MB/s per direction both ways; all-to-all moves `share` of the calibrated prediction."""

    def __init__(self, share: float):
        self.share, self.requests = share, []

    def __call__(self, request):
        self.requests.append(request)
        bench = request.benches[0]
        if bench == "message.saturation":
            points = [_point(bench, 65536, min(k, 2) * 8e6, active=k) for k in (1, 2, 3, 4)]
        elif bench == "message.bibw":
            points = [_point(bench, 65536, 30e6)]
        elif bench.startswith("coll."):      # each algorithm asked for, as the library reports it
            (param,) = request.params
            points = [MergedPoint(bench=bench, size=int(request.sizes), active=8, bytes_per_op=int(request.sizes),
                                  summary=Summary(median=0.05), roles="b" * 8, params={"algorithm": a},
                                  variant=f"algorithm={a}", info={"algorithm_in_force": a})
                      for a in param.split("=", 1)[1].split(",")]
            if "coll.reduce_local" in request.benches:      # 1 GB/s: gamma 1 ns a byte
                points.append(_point("coll.reduce_local", int(request.sizes), 1e9, active=8))
        elif bench == "message.pingpong":                    # 100 us a round trip: alpha 50 us
            points = [MergedPoint(bench=bench, size=8, bytes_per_op=16, legs_per_op=2, summary=Summary(median=1e-4))]
        else:
            points = [_point(bench, s, 8 * self.share * 7 / 16 * 16e6) for s in (16384, 65536)]
        return schema.Document(schema.Header(nranks=8), [], schema.Footer("complete"), merged=points,
                               findings={"run": []})


def test_validation_calibrates_through_the_model_and_writes_the_block_the_report_reads(tmp_path):
    runs = FakeRuns(share=0.95)
    site = Site.of(TWO, "two", ["node%d" % i for i in range(8)])
    v = validate(site, "16K,64K", tmp_path / "v.json", runs)
    assert [r.benches for r in runs.requests] == [
        ("message.saturation",), ("message.bibw",), ("message.alltoall",), ("message.pingpong",),
        ("coll.allreduce", "coll.reduce_local"), ("coll.bcast",), ("coll.allgather",)]
    # the collectives at the largest size, one rank a host, each timed as the algorithm the library ran,
    # with alpha and gamma as the ping-pong between the first and last host and the local reduction gave them
    assert runs.requests[3].launch.hosts == "node0,node7" and runs.requests[3].sizes == "8"
    assert all(r.sizes == "65536" and r.active == "8" for r in runs.requests[4:])
    assert v.collective_costs == {"alpha_s": pytest.approx(5e-5), "gamma_s_per_byte": pytest.approx(1e-9),
                                  "from": {"alpha": "measured", "gamma": "measured"}}
    assert [(c["bench"], c["algorithm"], c["as"]) for c in v.collectives] == [
        ("coll.allreduce", "ring", "the library's"), ("coll.allreduce", "recursive_doubling", "the library's"),
        ("coll.allreduce", "rabenseifner", "the library's"), ("coll.bcast", "binomial", "the library's"),
        ("coll.allgather", "ring", "the library's")]
    assert all(c["predicted_s"] > 0 and c["bottleneck"] and "busiest_cable" not in c for c in v.collectives)
    sat = runs.requests[0]
    assert sat.launch.hosts == "node0,node1,node2,node3,node4,node5,node6,node7" and sat.counters
    assert sat.launch.ranks == 8 and sat.site.testbed is None and sat.sampling.point_time == 3.0
    assert v.saturation.rate_Bps == 16e6 and v.saturation.active == 2
    assert v.saturation.low_Bps == pytest.approx(16e6 / 1.05) and v.bidirectional.rate_Bps == 15e6
    # seed 001 Eq. 4-5 with the measured trunk: 7/16 x 16 MB/s, the trunk still the bottleneck
    assert v.predicted == (pytest.approx(7 / 16 * 16e6), "link trunk (s0→s1)")
    assert v.nominal[0] == pytest.approx(7 / 16 * 20e6) and v.predicted_both_ways_Bps == pytest.approx(7 / 16 * 15e6)
    assert [r.size for r in v.per_size] == [16384, 65536] and v.top.ratio == pytest.approx(0.95) and v.agrees
    block = json.loads((tmp_path / "v.json").read_text())["validation"]
    assert block == json.loads(json.dumps(v.to_dict())) and block["hosts"]["h7"] == "node7"
    assert list(block) == ["network", "testbed", "hosts", "bottleneck", "bottleneck_load", "pairs", "saturation",
                           "bidirectional", "calibrated_rate_Bps", "predicted_both_ways_Bps", "alltoall",
                           "calibrated_links", "nominal_Bps", "nominal_bottleneck", "predicted_Bps",
                           "predicted_bottleneck", "per_size", "tolerance", "verdict", "duration_s", "cables",
                           "emulation", "explanation", "interfaces", "collectives", "collective_costs"]
    assert block["cables"] == [] and block["emulation"] is None    # real hosts: no shaped cables to read
    assert block["testbed"] is None and block["verdict"] == "agrees" and block["tolerance"] == 0.10
    doc = schema.Document(schema.Header(), [], schema.Footer("complete"))
    doc.add_block("validation", block)
    run = figures.RunView("v", doc, rows=[Row.of(_point("message.alltoall", 16384, 1e6))])
    (fig,) = figures.validation([run])
    assert "0.950 of the prediction (agrees" in fig.note


def test_a_slower_fabric_is_named_and_bad_hosts_are_refused(tmp_path):
    v = validate(Site.of(TWO, "two", ["x"] * 8), "16K", tmp_path / "v.json", FakeRuns(share=0.5))
    assert not v.agrees and v.top.verdict == "slower"
    with pytest.raises(UsageError, match="names 2 hosts for the file's 8 nodes"):
        Site.of(TWO, "two", ["a", "b"])
