import json

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.analysis import merge
from fabriclab.errors import UsageError
from fabriclab.measure.runner import derive
from fabriclab.schema.run_records import SkipRecord


def _point(size=8, samples=(1e-6, 1.1e-6, 1.2e-6)):
    rec = {"bench": "message.pingpong", "size": size, "stride": 1, "bytes_per_op": 2 * size,
           "legs_per_op": 2, "samples": list(samples), "stop": "converged", "batch": 4}
    return derive(rec)


def test_round_trip_stream_and_document(tmp_path):
    w = schema.StreamWriter(tmp_path / "r.ndjson", schema.Header(run_id="r", argv=["fabriclab", "run"]))
    w.add(_point(8))
    w.add(SkipRecord("tcp.stream", 0, "no payload"))
    doc = w.close(schema.Footer("complete"))
    merge.write(doc, tmp_path / "r.json")
    from_json = docs.read(tmp_path / "r.json")
    from_stream = docs.read(tmp_path / "r.ndjson")
    assert from_json == json.loads(json.dumps(doc.to_dict()))
    assert {k: v for k, v in from_stream.items() if k not in ("merged", "findings")} == \
        {k: v for k, v in from_json.items() if k not in ("merged", "findings")}
    assert from_json["schema_version"] == schema.SCHEMA_VERSION
    p = docs.points(from_json)[0]
    assert p["summary"]["median"] == pytest.approx(1.1e-6)
    assert p["latency_s"] == pytest.approx(0.55e-6)
    assert p["bandwidth_Bps"] == pytest.approx(16 / 1.1e-6)
    assert doc.points[0].latency_s == pytest.approx(0.55e-6) and doc.skips[0].reason == "no payload"


def test_merged_points_are_computed_once_and_kept_on_the_document(tmp_path):
    """The document holds records; analysis merges them on first use and keeps the
    result on the document, for every later reader and for the file it writes."""
    w = schema.StreamWriter(tmp_path / "r.ndjson", schema.Header(run_id="r"))
    w.add(_point(8))
    doc = w.close(schema.Footer("complete"))
    assert doc.analysed is None and "merged" not in doc.to_dict()
    first = merge.merged(doc)
    assert merge.merged(doc) is first and doc.analysed == (first, merge.run_findings(doc))
    assert [m["size"] for m in doc.to_dict()["merged"]] == [8]


def test_the_header_is_written_once_it_is_complete(tmp_path):
    """Records wait for the header, which is written as it stands when the first
    hello completes it (or at the footer): the stream's header is the document's."""
    path = tmp_path / "r.ndjson"
    w = schema.StreamWriter(path, schema.Header(run_id="r"))
    w.add(_point(8))
    assert path.read_text() == ""
    w.header.hosts = ["a", "b"]
    w.complete_header()
    w.add(_point(16))
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [x["kind"] for x in lines] == ["header", "point", "point"] and lines[0]["hosts"] == ["a", "b"]
    w.header.hosts = ["changed"]           # too late: the header is out
    w.complete_header()
    doc = w.close(schema.Footer("complete"))
    assert len(path.read_text().splitlines()) == 4 and docs.read(path)["header"]["hosts"] == ["a", "b"]
    assert doc.points[1].size == 16


def test_stream_without_footer_is_incomplete_and_torn_line_dropped(tmp_path):
    w = schema.StreamWriter(tmp_path / "r.ndjson", schema.Header(run_id="r"))
    w.complete_header()
    w.add(_point(8))
    w.add(_point(16))
    w._f.write('{"kind": "point", "bench": "mess')  # killed mid-write
    w._f.flush()
    doc = docs.read(tmp_path / "r.ndjson")
    assert doc["footer"]["status"] == "incomplete"
    assert [p["size"] for p in docs.points(doc)] == [8, 16]


@pytest.mark.parametrize("content,msg", [
    ("not json", "not a fabriclab result"),
    ('{"schema": "other"}', "missing schema"),
    ('{"schema": "fabriclab.run", "schema_version": 99, "header": {}, "footer": {"status": "complete"}, '
     '"records": []}', "not supported"),
    ('{"schema": "fabriclab.run", "schema_version": 1, "header": {}, "footer": {"status": "complete"}, '
     '"records": [{"kind": "point", "bench": "x"}]}', "lacks"),
])
def test_invalid_documents(tmp_path, content, msg):
    f = tmp_path / "bad.json"
    f.write_text(content)
    with pytest.raises(UsageError, match=msg):
        docs.read(f)


def test_unreadable_file():
    with pytest.raises(UsageError, match="cannot read"):
        docs.read("/nonexistent/run.json")


def test_non_finite_samples_rejected(tmp_path):
    rec = _point(8).to_dict()
    rec["samples"] = [1e-6, float("inf")]
    doc = docs.document({"kind": "header"}, [{"kind": "point", **rec}], {"status": "complete"})
    with pytest.raises(UsageError, match="non-finite"):
        docs.typed(doc)


def test_working_set_and_allocation_are_typed_and_kept_merged(tmp_path):
    """Version 12: the core's working set and every rank's allocation reach the
    typed point, the stored document and the merged point; a wrong one is named."""
    rec = {"bench": "deposit.put_bw", "size": 65536, "stride": 1, "bytes_per_op": 65536, "samples": [1e-6, 2e-6],
           "stop": "converged", "batch": 64, "buffers": 64, "working_set_bytes": 4 << 20,
           "rank_alloc_bytes": [4 << 20, 4 << 20]}
    p = derive(rec)
    assert (p.working_set_bytes, p.rank_alloc_bytes, p.extra) == (4 << 20, [4 << 20, 4 << 20], {})
    w = schema.StreamWriter(tmp_path / "r.ndjson", schema.Header(run_id="r"))
    w.add(p)
    merge.write(w.close(schema.Footer("complete")), tmp_path / "r.json")
    doc = docs.read(tmp_path / "r.json")
    assert docs.points(doc)[0]["rank_alloc_bytes"] == [4 << 20, 4 << 20]
    assert [m["working_set_bytes"] for m in doc["merged"]] == [4 << 20]
    with pytest.raises(ValueError, match="rank_alloc_bytes"):
        derive({**rec, "rank_alloc_bytes": [-1, 0]})
