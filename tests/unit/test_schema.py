import json

import pytest

from fabriclab import schema
from fabriclab.errors import UsageError
from fabriclab.measure.runner import derive


def _point(size=8, samples=(1e-6, 1.1e-6, 1.2e-6)):
    rec = {"bench": "message.pingpong", "size": size, "stride": 1, "bytes_per_op": 2 * size,
           "legs_per_op": 2, "samples": list(samples), "stop": "converged", "batch": 4}
    rec = derive(rec).to_dict()
    return rec


def test_round_trip_stream_and_document(tmp_path):
    w = schema.StreamWriter(tmp_path / "r.ndjson", {"run_id": "r", "argv": ["fabriclab", "run"]})
    w.add("point", _point(8))
    w.add("skip", {"bench": "tcp.stream", "size": 0, "stride": 1, "reason": "no payload"})
    doc = w.close({"status": "complete", "error": None})
    from_json = schema.load(tmp_path / "r.json")
    from_stream = schema.load(tmp_path / "r.ndjson")
    assert from_json == doc
    assert from_stream == json.loads(json.dumps(doc))
    assert doc["schema_version"] == schema.SCHEMA_VERSION
    p = schema.points(doc)[0]
    assert p["summary"]["median"] == pytest.approx(1.1e-6)
    assert p["latency_s"] == pytest.approx(0.55e-6)
    assert p["bandwidth_Bps"] == pytest.approx(16 / 1.1e-6)


def test_stream_without_footer_is_incomplete_and_torn_line_dropped(tmp_path):
    w = schema.StreamWriter(tmp_path / "r.ndjson", {"run_id": "r"})
    w.add("point", _point(8))
    w.add("point", _point(16))
    w._f.write('{"kind": "point", "bench": "mess')  # killed mid-write
    w._f.flush()
    doc = schema.load(tmp_path / "r.ndjson")
    assert doc["footer"]["status"] == "incomplete"
    assert [p["size"] for p in schema.points(doc)] == [8, 16]


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
        schema.load(f)


def test_unreadable_file():
    with pytest.raises(UsageError, match="cannot read"):
        schema.load("/nonexistent/run.json")


def test_non_finite_samples_rejected(tmp_path):
    rec = _point(8)
    rec["samples"] = [1e-6, float("inf")]
    doc = schema.document({"kind": "header"}, [{"kind": "point", **rec}], {"status": "complete"})
    with pytest.raises(UsageError, match="non-finite"):
        schema.validate(doc)
