"""`fabriclab import`: OSU and IMB text output read into run documents that
show, compare and the schema treat as imported (figures, no samples)."""
import json
import math
import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.analysis import merge
from fabriclab.analysis.compare import compare
from fabriclab.report.changes import format_changes
from fabriclab.cli import main
from fabriclab.errors import UsageError
from fabriclab import imports
from fabriclab.imports import imb, osu
from fabriclab.suite.collectives import COLLECTIVES as REGISTRY_COLL
from fabriclab.measure.runner import derive

DATA = Path(__file__).parents[1] / "data" / "imports"


def load(name: str, tool: str) -> dict:
    """The imported document's JSON form, with its merged points."""
    doc = imports.load(DATA / name, tool)
    merge.analysed(doc)
    return doc.to_dict()


def pts(doc: dict, bench: str | None = None) -> dict:
    """Points by (bench, size, active), or by size for one benchmark."""
    out = {}
    for p in docs.points(doc):
        if bench is None:
            out[(p["bench"], p["size"], p["active"])] = p
        elif p["bench"] == bench:
            out[p["size"]] = p
    return out


# ---- OSU


def test_osu_latency_is_half_a_round_trip():
    doc = load("osu_latency_v5.txt", "osu")
    p = pts(doc, "message.pingpong")
    assert len(p) == 24 and set(p) == {0} | {1 << k for k in range(23)}
    eight = p[8]
    assert eight["imported"] == {"benchmark": "osu_latency", "value": 1.60, "unit": "us", "column": "Latency (us)",
                                 "row": {"Size": "8", "Latency (us)": "1.60"}}
    # fabriclab's ping-pong op is the round trip: 2 legs, both messages' bytes
    assert eight["summary"]["median"] == pytest.approx(3.2e-6)
    assert eight["summary"]["mean"] == eight["summary"]["median"]
    assert eight["latency_s"] == pytest.approx(1.6e-6)
    assert (eight["legs_per_op"], eight["bytes_per_op"], eight["concurrent"]) == (2, 16, False)
    assert eight["bandwidth_Bps"] == pytest.approx(2 * 8 / 3.2e-6)
    assert eight["samples"] == [] and eight["stop"] == "imported" and eight["launch"] == 0
    assert (eight["variant"], eight["stride"], eight["conns"], eight["active"]) == ("", 1, 1, None)
    assert set(eight["summary"]) == set(schema.SUMMARY_KEYS)
    assert eight["summary"]["n"] is None and eight["summary"]["ci_low"] is None and eight["summary"]["p99"] is None
    assert p[0]["summary"]["median"] == pytest.approx(3.04e-6) and p[0]["bandwidth_Bps"] is None
    assert p[4194304]["latency_s"] == pytest.approx(1554.99e-6)


def test_osu_header_says_what_was_imported():
    path = DATA / "osu_latency_v5.txt"
    doc = load("osu_latency_v5.txt", "osu")
    h = doc["header"]
    imp = h["imported"]
    import hashlib
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    assert (imp["tool"], imp["tool_version"], imp["sha256"], imp["source"]) == ("osu", "5.6.3", sha, str(path))
    assert imp["benchmarks"] == ["osu_latency"] and "half the round trip" in imp["averaging"]
    assert h["run_id"] == f"imported-osu-{sha[:12]}" and h["nranks"] == 2
    assert h["start_time"] == datetime.fromtimestamp(os.stat(path).st_mtime, timezone.utc).isoformat()
    assert doc["schema_version"] == schema.SCHEMA_VERSION == 18
    assert doc["footer"] == {"status": "complete", "error": None, "points": 24}


def test_osu7_full_columns_give_iterations():
    doc = load("osu_latency_v7_full.txt", "osu")
    p = pts(doc, "message.pingpong")[8]
    assert p["imported"]["column"] == "Avg Latency(us)" and p["imported"]["value"] == 1.60
    assert p["imported"]["row"]["Max Latency(us)"] == "2.26"
    assert p["summary"]["n"] == 10000
    assert p["latency_s"] == pytest.approx(1.6e-6)
    assert doc["header"]["imported"]["tool_version"] == "7.3"


def test_osu_bw_is_one_message_per_op_in_decimal_megabytes():
    doc = load("osu_bw_v7.txt", "osu")
    p = pts(doc, "message.stream")
    assert len(p) == 23
    big = p[4194304]
    assert big["imported"]["unit"] == "MB/s" and big["imported"]["value"] == 11329.56
    assert big["summary"]["median"] == pytest.approx(4194304 / 11329.56e6)
    assert big["bandwidth_Bps"] == pytest.approx(11329.56e6)  # OSU's MB/s: 10^6 B/s
    assert (big["bytes_per_op"], big["legs_per_op"], big["concurrent"]) == (4194304, 1, False)
    # the 0-byte row printed 0.00 MB/s: no time per op, so a skip record, not a point
    assert 0 not in p
    skips = [r for r in doc["records"] if r["kind"] == "skip"]
    assert [(s["bench"], s["size"]) for s in skips] == [("message.stream", 0)] and "0.00 MB/s" in skips[0]["reason"]


def test_osu_bibw_counts_both_directions():
    p = pts(load("osu_bibw_v5.txt", "osu"), "message.bibw")[1024]
    b = p["imported"]["value"]
    assert p["bytes_per_op"] == 2048 and p["concurrent"] is True
    assert p["summary"]["median"] == pytest.approx(2048 / (b * 1e6))
    assert p["latency_s"] == p["summary"]["median"] and p["bandwidth_Bps"] == pytest.approx(b * 1e6)
    assert p["active"] == 1  # fabriclab's bibw at 2 ranks: one pair


def test_osu_one_sided_settings_become_variants():
    put = pts(load("osu_put_latency_v7.txt", "osu"), "deposit.put_lat")[8]
    assert put["variant"] == ""  # MPI_Win_allocate + MPI_Win_flush: fabriclab's defaults
    assert put["summary"]["median"] == pytest.approx(3.04e-6) and put["latency_s"] == put["summary"]["median"]
    assert (put["legs_per_op"], put["bytes_per_op"]) == (1, 8)
    get = pts(load("osu_get_latency_fence_v5.txt", "osu"), "deposit.get_lat")[8]
    assert get["variant"] == "sync=fence,win=create"


def test_osu_concatenated_outputs_and_library_noise():
    doc = load("osu_rma_bw_v7.txt", "osu")
    imp = doc["header"]["imported"]
    assert imp["benchmarks"] == ["osu_put_bw", "osu_get_bw", "osu_put_bibw"]
    assert imp["settings"]["osu_put_bibw"]["Synchronization"] == "MPI_Win_post/start/complete/wait"
    by = pts(doc)
    assert by[("deposit.put_bw", 4096, None)]["imported"]["value"] == 5085.30
    assert by[("deposit.get_bw", 1, None)]["bytes_per_op"] == 1
    bibw = by[("deposit.put_bibw", 64, 1)]
    assert bibw["concurrent"] and bibw["bytes_per_op"] == 128 and bibw["variant"] == ""
    assert len(docs.points(doc)) == 3 * 13


def test_osu_unsupported_and_empty_sections():
    text = "# OSU MPI Multi Latency Test v7.3\n# Size  Latency (us)\n8  3.1\n"
    with pytest.raises(UsageError, match="Multi Latency Test, which fabriclab does not import"):
        osu.parse(text)
    mixed = osu.parse(text + (DATA / "osu_latency_v5.txt").read_text())
    assert mixed.ignored == ["MPI Multi Latency Test"] and len(mixed.figures) == 24
    with pytest.raises(UsageError, match="no data rows"):
        osu.parse((DATA / "osu_header_only.txt").read_text())


# ---- IMB


def test_imb_blocks_of_every_benchmark_and_process_count():
    doc = load("imb_mpi1_2021.txt", "imb")
    h = doc["header"]
    assert h["nranks"] == 4 and h["imported"]["tool_version"] == "2021.3"
    assert h["imported"]["benchmarks"] == ["PingPong", "PingPing", "Sendrecv", "Exchange", "Alltoall", "Allreduce"]
    assert h["imported"]["ignored"] == []
    assert h["imported"]["settings"]["MPI Version"] == "3.1"
    assert h["imported"]["settings"]["Mbytes/sec"] == "1000000 B/s"
    by = pts(doc)
    pp = by[("message.pingpong", 8, None)]
    assert pp["imported"]["column"] == "t[usec]" and pp["imported"]["value"] == 1.60
    assert pp["summary"]["median"] == pytest.approx(3.2e-6) and pp["latency_s"] == pytest.approx(1.6e-6)
    assert pp["summary"]["n"] == 1000 and pp["bandwidth_Bps"] == pytest.approx(2 * 8 / 3.2e-6)
    ping = by[("imb.pingping", 1024, None)]
    assert ping["concurrent"] and ping["bytes_per_op"] == 2048 and ping["summary"]["median"] == pytest.approx(9e-6)
    # Sendrecv and Exchange: one point per #processes block, t_max the time of the op
    two, four = by[("imb.sendrecv", 64, None)], by[("imb.sendrecv", 64, 4)]
    assert two["imported"]["column"] == "t_max[usec]" and two["imported"]["value"] == 2.28
    assert (two["bytes_per_op"], four["bytes_per_op"]) == (2 * 64, 4 * 64)
    assert four["summary"]["median"] == pytest.approx(2.98e-6)
    assert by[("imb.exchange", 64, 4)]["bytes_per_op"] == 8 * 64
    # Alltoall is MPI_Alltoall, the coll level's: #bytes is each process's block, the op is about N of them
    a2, a4 = by[("coll.alltoall", 128, 2)], by[("coll.alltoall", 128, 4)]
    assert (a2["bytes_per_op"], a4["bytes_per_op"]) == (2 * 128, 4 * 128)
    assert a4["summary"]["median"] == pytest.approx(3.64e-6) and a4["latency_s"] == a4["summary"]["median"]
    assert a4["bus_bandwidth_Bps"] == pytest.approx(a4["bandwidth_Bps"] * 3 / 4)
    assert by[("coll.alltoall", 0, 4)]["bandwidth_Bps"] is None
    assert len([p for p in docs.points(doc) if p["bench"] != "coll.allreduce"]) == 12 * 8


@pytest.mark.parametrize("name,mega", [("imb_mpi1_2021.txt", 1e6), ("imb_mpi1_v3.txt", 1048576)])
def test_imb_megabytes_by_version(name, mega):
    """PingPong's Mbytes/sec is size / t[usec] in IMB's Mbyte: 10^6 B from 2018, 2^20 B before."""
    doc = load(name, "imb")
    assert imb.mega(doc["header"]["imported"]["tool_version"]) == mega
    for p in docs.points(doc):
        if p["bench"] == "message.pingpong" and p["size"] >= 64:
            printed = float(p["imported"]["row"]["Mbytes/sec"])
            assert p["bandwidth_Bps"] == pytest.approx(printed * mega, rel=5e-3)
            other = 1048576 if mega == 1e6 else 1e6
            assert abs(p["bandwidth_Bps"] / (printed * other) - 1) > 0.04


def test_imb_failed_samples_are_skips():
    text = ("# Benchmarking Alltoall\n# #processes = 4\n"
            "       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n"
            "         1024         1000         5.00         6.00         5.50\n"
            "      4194304 out-of-mem.; needed X=   1.001 GB; use flag \"-mem X\" or MAX_MEM_USAGE>=X\n")
    parsed = imb.parse(text)
    assert parsed.tool_version is None and parsed.nranks == 4
    assert [f.size for f in parsed.figures] == [1024]
    assert parsed.skips[0][:2] == ("coll.alltoall", 4194304) and "out-of-mem" in parsed.skips[0][2]


# ---- the document, merged, shown and compared


def test_schema_accepts_points_without_samples_only_when_imported(tmp_path):
    doc = load("osu_latency_v5.txt", "osu")
    docs.typed(doc)
    f = tmp_path / "imp.json"
    schema.write_json(doc, f)
    assert docs.read(f) == json.loads(json.dumps(doc))
    plain = json.loads(json.dumps(doc))
    del plain["header"]["imported"]
    with pytest.raises(UsageError, match="empty or non-finite samples"):
        docs.typed(plain)
    broken = json.loads(json.dumps(doc))
    broken["records"][0]["summary"]["median"] = None
    with pytest.raises(UsageError, match="no time per op"):
        docs.typed(broken)


def test_imported_point_merges_to_itself():
    doc = load("osu_latency_v5.txt", "osu")
    m = [x.to_dict(stored=True) for x in merge.merged(docs.typed(doc))]  # as stored
    again = merge.merged(docs.typed({k: v for k, v in doc.items() if k != "merged"}))  # as computed
    assert m == [x.to_dict(stored=True) for x in again] == doc["merged"]
    p = next(x for x in again if x.size == 8).to_dict()
    assert p["launches"] == [{"launch": 0, "median": pytest.approx(3.2e-6), "n": None, "stop": "imported"}]
    assert p["spread"] == {"within_rel": None, "between_rel": None, "max_min_ratio": None, "launch_medians": None}
    assert p["summary"]["ci_low"] is None and p["diagnostics"] == [] and p["stop"] == "imported"
    assert p["latency_s"] == pytest.approx(1.6e-6) and p["bandwidth_Bps"] == pytest.approx(5e6)


def test_a_point_printed_twice_is_two_launches(tmp_path):
    first = "# OSU MPI Latency Test v7.3\n# Size       Avg Latency(us)\n8    1.60\n64   1.70\n"
    second = first.replace("1.60", "2.00")
    f = tmp_path / "twice.txt"
    f.write_text(first + "\n" + second)
    doc = imports.load(f, "osu").to_dict()
    assert [(p["size"], p["launch"]) for p in docs.points(doc)] == [(8, 0), (64, 0), (8, 1), (64, 1)]
    p = next(x for x in merge.merged(docs.typed(doc)) if x.size == 8).to_dict()
    assert [x["median"] for x in p["launches"]] == pytest.approx([3.2e-6, 4.0e-6])
    assert p["summary"]["median"] == pytest.approx(3.6e-6) and p["latency_s"] == pytest.approx(1.8e-6)


def _own_pingpong(sizes, median):
    recs = []
    for size in sizes:
        for k in range(3):
            rec = {"bench": "message.pingpong", "variant": "", "size": size, "stride": 1, "conns": 1,
                   "bytes_per_op": 2 * size, "legs_per_op": 2, "samples": [median * (1 + 0.01 * (i % 3)) for i in range(30)],
                   "launch": k}
            recs.append(derive(rec))
    return docs.of(recs, {"run_id": "own"})


def test_compare_against_an_imported_run_has_no_interval():
    own = _own_pingpong([8, 64, 3], 6.4e-6)  # twice OSU's time at 8 B: still no verdict
    osu_doc = load("osu_latency_v5.txt", "osu")
    changes = {c.size: c for c in compare(own, docs.typed(osu_doc))}
    c = changes[8]
    assert c.verdict == "no-interval"
    assert c.ratio == pytest.approx(3.2e-6 / own.points[0].summary.median)
    assert c.new_median_s == pytest.approx(3.2e-6) and (c.base_launches, c.new_launches) == (3, 1)
    assert math.isnan(c.ratio_ci_low) and math.isnan(c.ratio_ci_high)
    assert changes[3].verdict == "only-in-base" and changes[16].verdict == "only-in-new"
    assert not any(x.verdict in ("faster", "slower", "same") for x in changes.values())
    text = format_changes(list(changes.values()), "table", "own", "osu")
    assert text.count("no samples, so their ratio has no interval") == 1 and "2 no-interval" in text
    assert "ignore launch-to-launch variation" not in text
    rows = json.loads(format_changes(list(changes.values()), "json", "own", "osu"))
    row8 = next(r for r in rows if r["size"] == 8)
    assert row8["ratio_ci_low"] is None and row8["verdict"] == "no-interval"


def test_imported_against_imported():
    changes = compare(docs.typed(load("osu_latency_v5.txt", "osu")), docs.typed(load("imb_mpi1_2021.txt", "imb")))
    c = next(x for x in changes if x.bench == "message.pingpong" and x.size == 1024)
    assert c.verdict == "no-interval" and c.ratio == pytest.approx(6.68 / 3.05)


def test_tables_and_summary_read_imported_points():
    from fabriclab.report import summary, tables
    doc = docs.typed(load("imb_mpi1_2021.txt", "imb"))
    for fmt in ("table", "md", "csv", "json"):
        tables.format_doc(doc, fmt)
    rows = tables.rows(doc)
    assert all(r.ci_low_s is None and r.stop == "imported" for r in rows)
    assert {r[4] for r in summary.benchmark_rows(doc)} == {"imported"}
    d = tables.derived(doc, rows)
    assert d["message.pingpong"]["peak_bandwidth_Bps"] == pytest.approx(1024 / 6.68e-6)


# ---- the command line


def test_cli_import_then_show(tmp_path, capsys):
    out = tmp_path / "osu.json"
    assert main(["import", str(DATA / "osu_latency_v5.txt"), "--from", "osu", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "imported 24 points of OSU osu_latency" in err and str(out) in err
    doc = docs.read(out)
    assert doc["header"]["argv"][:2] == ["fabriclab", "import"]
    assert main(["show", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "imported from OSU 5.6.3" in shown and "averaging: OSU prints means" in shown
    line8 = next(ln for ln in shown.splitlines() if ln.split()[:1] == ["8"])
    assert line8.split() == ["8", "1.6", "us", "-", "5.0", "imported"]


def test_an_import_is_written_a_record_to_a_line_without_merged_points(tmp_path, capsys):
    """The document is streamed as it is written, and an imported point, which merges to
    itself, is stored once: readers derive the same merged points as the document gives."""
    out = tmp_path / "osu.json"
    assert main(["import", str(DATA / "osu_latency_v5.txt"), "--from", "osu", "-o", str(out)]) == 0
    lines = out.read_text().splitlines()
    rows = [ln for ln in lines if ln.startswith('{"kind":"point"')]
    assert len(rows) == 24 and all(json.loads(ln.rstrip(","))["stop"] == "imported" for ln in rows)
    stored = json.loads(out.read_text())
    assert "merged" not in stored and "findings" not in stored
    whole = load("osu_latency_v5.txt", "osu")
    assert [m.to_dict(stored=True) for m in merge.merged(schema.load(out))] == whole["merged"]
    assert main(["import", str(DATA / "osu_latency_v5.txt"), "--from", "osu", "-o", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["records"] == stored["records"]


def test_cli_default_output_and_stdout(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["import", str(DATA / "imb_mpi1_2021.txt"), "--from", "imb"]) == 0
    path = tmp_path / "results" / "imported-imb-imb_mpi1_2021.json"
    assert docs.read(path)["header"]["imported"]["tool"] == "imb"
    assert "imported 99 points of IMB PingPong, PingPing, Sendrecv, Exchange, Alltoall, Allreduce" in capsys.readouterr().err
    assert main(["import", str(DATA / "osu_bw_v7.txt"), "--from", "osu", "-o", "-"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["header"]["imported"]["benchmarks"] == ["osu_bw"]
    assert "-> stdout" in cap.err and "skipped 1 row without a time" in cap.err
    # a file of the same name from another folder: a name of its own, the first import kept
    other = tmp_path / "other" / "imb_mpi1_2021.txt"
    other.parent.mkdir()
    other.write_bytes((DATA / "imb_mpi1_2021.txt").read_bytes())
    before = path.read_bytes()
    assert main(["import", str(other), "--from", "imb"]) == 0
    assert path.read_bytes() == before and "-> results/imported-imb-imb_mpi1_2021-2.json" in capsys.readouterr().err
    assert docs.read(path.with_name("imported-imb-imb_mpi1_2021-2.json"))["header"]["imported"]["tool"] == "imb"


@pytest.mark.parametrize("line,says", [("# #processes = 0", "'# #processes = 0' is not a process count of 1 or more"),
                                       ("# #processes = many", "'# #processes = many' is not a process count"),
                                       ("", "IMB Bcast's rows have no '# #processes = N' line above them")])
def test_an_imb_block_without_a_process_count_is_refused(line, says):
    """The collectives' figures and bus bandwidth follow the block's process count: never guessed."""
    text = (DATA / "imb_collectives_ompi.txt").read_text().replace("# #processes = 42", line, 1)
    with pytest.raises(UsageError) as e:
        imb.parse(text, "imb.txt")
    assert says in str(e.value)


def test_rows_of_nan_inf_or_a_negative_time_are_skipped_and_counted():
    text = "# OSU MPI Latency Test v7.1\n# Size          Latency (us)\n0 nan\n8 inf\n16 -1.0\n128 2.0\n"
    got = osu.parse(text)
    assert [f.size for f in got.figures] == [128]
    assert [(size, why) for _, size, why in got.skips] == [(0, "osu_latency printed nan: no time"),
                                                           (8, "osu_latency printed inf: no time"),
                                                           (16, "osu_latency printed -1.0: no time")]


def test_a_failed_write_leaves_no_placeholder_under_the_default_name(tmp_path, monkeypatch, capsys):
    from fabriclab.schema import Document
    monkeypatch.chdir(tmp_path)

    def full(self, path, **kw):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(Document, "write", full)
    assert main(["import", str(DATA / "osu_bw_v7.txt"), "--from", "osu"]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert list((tmp_path / "results").iterdir()) == []


def test_an_output_that_is_the_file_read_is_refused(tmp_path, capsys):
    """-o naming the input would replace the tool's output by the import: one line, the file kept."""
    f = tmp_path / "osu.txt"
    f.write_bytes((DATA / "osu_bw_v7.txt").read_bytes())
    assert main(["import", str(f), "--from", "osu", "-o", str(tmp_path / "." / "osu.txt")]) == 2
    err = capsys.readouterr().err
    assert "cannot write" in err and "this command reads it" in err and len(err.strip().splitlines()) == 1
    assert f.read_bytes() == (DATA / "osu_bw_v7.txt").read_bytes()
    run = tmp_path / "r.json"
    assert main(["import", str(f), "--from", "osu", "-o", str(run)]) == 0
    for argv in (["report", str(run), "-o", str(run)], ["show", str(run), "-o", str(run)],
                 ["compare", str(run), str(run), "-o", str(run)]):
        before = run.read_bytes()
        capsys.readouterr()
        assert main(argv) == 2, argv
        assert "this command reads it" in capsys.readouterr().err and run.read_bytes() == before


def _fabriclab_json(tmp_path):
    f = tmp_path / "run.json"
    _own_pingpong([8], 1e-6).write(f)
    return f


@pytest.mark.parametrize("make,tool,msg", [
    (lambda d: d / "empty.txt", "osu", "is empty"),
    (lambda d: d / "blob.bin", "osu", "binary file"),
    (_fabriclab_json, "osu", "is a fabriclab result already"),
    (lambda d: DATA / "osu_header_only.txt", "osu", "no data rows"),
    (lambda d: DATA / "imb_mpi1_2021.txt", "osu", "not OSU Micro-Benchmarks output"),
    (lambda d: DATA / "osu_latency_v5.txt", "imb", "is not IMB output"),
    (lambda d: d / "missing.txt", "imb", "cannot read"),
])
def test_cli_bad_input_is_one_line_exit_2(tmp_path, capsys, make, tool, msg):
    (tmp_path / "empty.txt").write_text("\n  \n")
    (tmp_path / "blob.bin").write_bytes(bytes(range(256)) * 4)
    path = make(tmp_path)
    assert main(["import", str(path), "--from", tool, "-o", str(tmp_path / "out.json")]) == 2
    err = capsys.readouterr().err
    assert msg in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "out.json").exists()


def test_cli_wrong_tool_hints_the_right_one(capsys):
    assert main(["import", str(DATA / "imb_mpi1_2021.txt"), "--from", "osu", "-o", "-"]) == 2
    assert "--from imb" in capsys.readouterr().err
    assert main(["import", str(DATA / "osu_bw_v7.txt"), "--from", "imb", "-o", "-"]) == 2
    assert "--from osu" in capsys.readouterr().err
    assert main(["import", str(DATA / "osu_bw_v7.txt"), "--from", "nccl"]) == 2
    assert main(["import", str(DATA / "osu_bw_v7.txt")]) == 2


OSU_LAT = "# OSU MPI Latency Test v7.3\n# Size       Avg Latency(us)\n{size}    {value}\n"
IMB_PP = ("# Benchmarking PingPong\n# #processes = {nprocs}\n#-----\n"
          "       #bytes #repetitions      t[usec]   Mbytes/sec\n            {size}  {reps}  1.56  0.00\n")


@pytest.mark.parametrize("tool,text,msg", [
    ("osu", OSU_LAT.format(size="9" * 5000, value="1.6"), "digits"),
    ("osu", OSU_LAT.format(size=10 ** 32, value="1.6"), "beyond any transfer"),
    ("osu", OSU_LAT.format(size=8, value="2e302"), "outside what a machine measures"),
    ("osu", OSU_LAT.format(size=8, value="1e-320"), "outside what a machine measures"),
    ("imb", IMB_PP.format(nprocs="9" * 4400, size=8, reps=1000), "digits"),
    ("imb", IMB_PP.format(nprocs=10 ** 23, size=8, reps=1000), "processes is beyond any job"),
    ("imb", IMB_PP.format(nprocs=2, size=8, reps="7" * 4400), "digits"),
])
def test_impossible_printed_figures_are_refused(tmp_path, capsys, tool, text, msg):
    f = tmp_path / "out.txt"
    f.write_text(text)
    assert main(["import", str(f), "--from", tool, "-o", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert msg in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "r.json").exists()


# ---- collectives


def test_imb_collectives_with_their_process_counts_and_printed_times():
    """Real IMB-MPI1 output of an Open MPI cluster: Bcast on 42 processes, Barrier on 160."""
    doc = load("imb_collectives_ompi.txt", "imb")
    assert doc["header"]["imported"]["benchmarks"] == ["Bcast", "Barrier"] and doc["header"]["nranks"] == 160
    by = pts(doc)
    b = by[("coll.bcast", 4194304, 42)]
    assert b["summary"]["median"] == pytest.approx(20791.20e-6) and b["imported"]["column"] == "t_max[usec]"
    assert b["bytes_per_op"] == 4194304 and b["bus_bandwidth_Bps"] == pytest.approx(b["bandwidth_Bps"])
    assert b["info"]["printed_times"] == pytest.approx([6275.51e-6, 13687.10e-6, 20791.20e-6])
    (bar,) = [p for p in docs.points(doc) if p["bench"] == "coll.barrier"]
    assert (bar["size"], bar["active"], bar["bytes_per_op"]) == (0, 160, 0)
    assert bar["summary"]["median"] == pytest.approx(49.77e-6) and bar["summary"]["n"] == 1000


def test_imb_nbc_rows_are_the_overlap_and_pure_rows_the_nonblocking_form():
    """IMB-NBC's columns as its IMB_output.c prints them: I<name> gives t_ovrl, t_pure, t_CPU
    and overlap[%]; I<name>_pure gives the times of the op alone."""
    text = ("#    Intel(R) MPI Benchmarks 2021.7, MPI-NBC part\n"
            "# Benchmarking Iallreduce\n# #processes = 4\n"
            "       #bytes #repetitions t_ovrl[usec] t_pure[usec]  t_CPU[usec]   overlap[%]\n"
            "         4096         1000        30.00        20.00        20.00        50.00\n"
            "# Benchmarking Iallreduce_pure\n# #processes = 4\n"
            "       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n"
            "         4096         1000        18.00        20.00        19.00\n"
            "# Benchmarking Ibarrier\n# #processes = 4\n"
            "  #repetitions t_ovrl[usec] t_pure[usec]  t_CPU[usec]   overlap[%]\n"
            "         1000         5.00         4.00         4.00        75.00\n")
    parsed = imb.parse(text)
    doc = imports.build(parsed, "imb", "nbc.txt", text.encode(), 0.0).to_dict()
    ovl, pure, bar = docs.points(doc)
    assert (ovl["bench"], ovl["variant"]) == ("coll.allreduce", "form=nonblocking,overlap=on")
    assert ovl["summary"]["median"] == pytest.approx(30e-6) and ovl["overlap"]["percent"] == pytest.approx(50.0)
    assert (pure["variant"], pure["summary"]["median"]) == ("form=nonblocking", pytest.approx(20e-6))
    assert bar["bench"] == "coll.barrier" and bar["overlap"]["percent"] == pytest.approx(75.0)


@pytest.mark.parametrize("name,bench,variant,size,column,median", [
    ("osu_allreduce_v6_full.txt", "coll.allreduce", "", 3200000, "Max Latency(us)", 9220.24e-6),
    ("osu_barrier_allreduce_v5.txt", "coll.barrier", "", 0, "Avg Latency(us)", 8.32e-6),
    ("osu_barrier_allreduce_v5.txt", "coll.allreduce", "", 1048576, "Avg Latency(us)", 2066.89e-6),
    ("osu_reduce_v7.txt", "coll.reduce", "accel=cuda", 1024, "Max Latency(us)", 134.61e-6),
    ("osu_iallgather_v5.txt", "coll.allgather", "form=nonblocking,overlap=on", 1, "Overall(us)", 216.50e-6)])
def test_osu_collectives_real_outputs(name, bench, variant, size, column, median):
    """Real OSU outputs (5.3 to 7.3): the slowest process's time where -f printed it, the
    mean otherwise; the barrier without a size; the library's noise around the tables ignored."""
    doc = imports.load(DATA / name, "osu", nranks=8).to_dict()
    (p,) = [p for p in docs.points(doc) if (p["bench"], p["size"]) == (bench, size)]
    assert (p["variant"], p["active"], p["imported"]["column"]) == (variant, 8, column)
    assert p["summary"]["median"] == pytest.approx(median)
    assert p["bytes_per_op"] == REGISTRY_COLL[bench[5:]].bytes_per_op(size, 8)


def test_osu_nonblocking_overlap_is_imbs_from_osus_times():
    doc = imports.load(DATA / "osu_iallgather_v5.txt", "osu", nranks=16).to_dict()
    (p,) = docs.points(doc)
    assert p["overlap"]["percent"] == pytest.approx(float(p["imported"]["row"]["Overlap(%)"]), abs=0.01)
    assert p["info"]["overlap"] == {"t_pure_s": pytest.approx(135.61e-6), "t_cpu_s": pytest.approx(140.95e-6)}


def test_the_import_line_shows_a_test_name_s_escape_sequences_not_obeys_them(tmp_path, capsys):
    f = tmp_path / "esc.txt"
    f.write_text("# OSU MPI Latency Test v5.6.3\n# Size          Latency (us)\n0   1.5\n8   1.6\n"
                 "# OSU MPI \x1b[2J\x1b]0;owned\x07 Test v5.6.3\n# Size   Foo\n8  1.0\n")
    assert main(["import", "--from", "osu", str(f), "-o", str(tmp_path / "esc.json")]) == 0
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "not imported: MPI \\x1b[2J\\x1b]0;owned\\x07 Test" in err


def test_osu_ranks_is_checked(tmp_path, capsys):
    assert main(["import", str(DATA / "osu_iallgather_v5.txt"), "--from", "osu", "--ranks", "0",
                 "-o", str(tmp_path / "x.json")]) == 2
    assert main(["import", str(DATA / "imb_collectives_ompi.txt"), "--from", "imb", "--ranks", "4",
                 "-o", str(tmp_path / "y.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "0 is not between 1 and 16,777,216" in err[0] and "imb output prints its own" in err[1]
    assert not list(tmp_path.iterdir())


def test_a_block_without_a_counterpart_is_named_as_not_imported(tmp_path, capsys):
    text = (DATA / "imb_collectives_ompi.txt").read_text() + (
        "# Benchmarking Multi-Bcast\n# #processes = 4\n"
        "       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n"
        "            8         1000         1.00         2.00         1.50\n")
    (tmp_path / "m.txt").write_text(text)
    assert main(["import", str(tmp_path / "m.txt"), "--from", "imb", "-o", str(tmp_path / "m.json")]) == 0
    assert "not imported: Multi-Bcast" in capsys.readouterr().err
