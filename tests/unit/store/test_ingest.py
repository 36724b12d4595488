"""A document's rows for the results store (store/ingest.py, ingest_verdicts.py): a run's
runs, versions and points rows with the merged points' own figures, a cut-short stream, a
pair matrix on a network file with a degraded cable, congestion impacts, check.json's
findings, tune.json's choices, OSU and IMB output read as `fabriclab import` reads it, and a
bad document refused in one line."""
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from op_histogram import histogram  # noqa: E402  (tests/support)
from fabriclab import imports, schema
from fabriclab.acceptance.check import FAIL, PASS, Attempt, Outcome, to_dict
from fabriclab.analysis import merge
from fabriclab.errors import UsageError
from fabriclab.measure.runner import derive
from fabriclab.store import ingest
from fabriclab.store.rows import Rows
from fabriclab.verdicts.coll_prediction import placed
from store_docs import HEADER, UID  # noqa: E402  (tests/support)
from store_docs import ping as _ping, rec as _rec, write as _write  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "tests" / "data" / "imports"
HOSTS = [f"h{i}" for i in range(8)]

@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A run of pingpong in two variants and two params, three launches each, its rows and its document."""
    rng = np.random.default_rng(1)
    folder = tmp_path_factory.mktemp("run")
    path = _write(folder / "run-a.json", _ping(rng) + _ping(rng, "b") + _ping(rng, "c", {"window": "64"}))
    other = _write(folder / "run-b.json", _ping(rng, "c", {"window": "8"}), {**HEADER, "run_id": "run-b"})
    return {"path": path, "rows": ingest.rows(path, samples=True), "doc": schema.load(path), "other": other}


def test_the_runs_row_says_what_ran_where_and_when(run):
    r = run["rows"].run
    assert r["uid"] == UID and r["kind"] == "run" and r["status"] == "complete"
    assert r["digest"] == hashlib.sha256(run["path"].read_bytes()).hexdigest()
    assert r["started"] == "2026-11-02T10:00:00+00:00" and r["ended_s"] - r["started_s"] == 300
    assert r["hosts"] == "n2,n1,n3" and r["cluster"] == "n2" and r["nranks"] == 4
    assert (r["mpi"], r["mpi_version"], r["fabriclab_version"]) == ("openmpi", "5.0.3", "0.3.0")
    assert r["network"] is None and r["source"] == str(run["path"]) and r["added_s"] > 0
    v = {x["component"]: x["version"] for x in run["rows"].versions}
    assert v["mpi"] == "5.0.3" and v["mpi_library"].startswith("Open MPI v5.0.3") and v["libfabric"] == "1.21.0"
    assert v["ucx"] == "1.16.0" and v["core"] == "abc123" and v["kernel"] == "6.1.0" and v["mpi_standard"] == "3.1"
    assert ingest.rows(run["path"], cluster="alps").run["cluster"] == "alps"


def test_one_run_id_started_twice_is_two_runs_and_its_stream_one(run, tmp_path):
    """A check's pairs-1.json is named alike in every check folder: the start tells them apart,
    and a run's .ndjson stream shares its .json's uid (added once)."""
    again = _write(tmp_path / "run-a.json", _ping(np.random.default_rng(2)),
                   {**HEADER, "start_time": "2026-11-03T10:00:00+00:00"})
    assert ingest.rows(again).run["uid"] == "run-a@2026-11-03T10:00:00+00:00" != run["rows"].run["uid"]


def test_points_carry_the_merged_points_figures_and_launch_medians(run):
    pts, merged = run["rows"].points, merge.merged(run["doc"])
    assert len(pts) == len(merged) == 3
    for row, m in zip(pts, merged):
        assert (row["median"], row["ci_low"], row["ci_high"]) == (m.summary.median, m.summary.ci_low, m.summary.ci_high)
        assert row["unit"] == "s" and row["launches"] == 3 and row["samples"] == 90 and row["cache"] == "warm"
        kids = row["children"]
        assert [x["median"] for x in kids["launches"]] == [x.median for x in m.launches] == m.spread.launch_medians
        assert len(kids["samples"]) == 90 and {x["launch"] for x in kids["samples"]} == {0, 1, 2}
        assert kids["tails"] == []
    assert pts[0]["children"]["launches"][1]["median"] == pytest.approx(
        float(np.median(run["doc"].groups()[merged[0].key][1].samples)))


def test_series_keys_are_stable_and_distinct_across_variants_and_params(run):
    keys = [p["series"] for p in run["rows"].points]
    assert keys == ["message.pingpong||8|1|1||", "message.pingpong|b|8|1|1||", "message.pingpong|c|8|1|1||window=64"]
    assert [p["series"] for p in ingest.rows(run["path"]).points] == keys
    assert [p["series"] for p in ingest.rows(run["other"]).points] == ["message.pingpong|c|8|1|1||window=8"]
    assert ingest.series_key({"bench": "coll.allreduce", "variant": "rabenseifner", "size": 262144, "stride": 1,
                              "conns": 1, "active": 4, "params": {"algorithm": "rabenseifner", "a": "1"}}) == \
        "coll.allreduce|rabenseifner|262144|1|1|4|a=1;algorithm=rabenseifner"
    assert ingest.series_key({"size": 8, "src": 0, "dst": 1, "src_host": "a", "dst_host": "b"}, "pairs") == "pair|8|a>b"
    assert ingest.series_key({"victim": "latency", "aggressor": "alltoall", "size": 8}, "impacts") == \
        "impact|latency|alltoall|8"


def test_samples_come_only_when_asked(run):
    assert all(p["children"]["samples"] == [] for p in ingest.rows(run["path"]).points)


def test_a_run_document_laid_out_by_another_tool_is_still_a_run(run, tmp_path):
    data = json.loads(run["path"].read_text())
    path = tmp_path / "moved.json"
    path.write_text(json.dumps({"header": {**data["header"], "pad": "x" * 5000}, **data}, indent=2))
    r = ingest.rows(path)
    assert r.run["uid"] == UID and [p["median"] for p in r.points] == [p["median"] for p in run["rows"].points]


def test_a_stream_cut_short_gives_the_same_points_and_no_end(run, tmp_path):
    lines = [json.dumps({"kind": "header", "schema": "fabriclab.run", "schema_version": 15, **HEADER})]
    lines += [json.dumps({"kind": "point", **p.to_dict()}) for p in run["doc"].points[:3]]
    path = tmp_path / "run-a.ndjson"
    path.write_text("\n".join(lines) + "\n" + lines[-1][:40])          # a torn last line
    r = ingest.rows(path)
    assert r.run["status"] == "incomplete" and r.run["ended"] is None and r.run["uid"] == UID
    assert len(r.points) == 1 and r.points[0]["median"] == merge.merge(run["doc"].points[:3]).summary.median




def test_single_op_tails_are_per_op_as_the_median(tmp_path):
    from fabriclab.analysis.tails import tails
    ops = np.linspace(1e-6, 2e-6, 1001)
    recs = [derive({**_rec("message.pingpong", 8, [3e-6] * 5, k, op_histogram=histogram(ops)), "legs_per_op": 2})
            for k in range(2)]
    (p,) = ingest.rows(_write(tmp_path / "t.json", recs)).points
    got = {t["pct"]: t["value"] for t in p["children"]["tails"]}
    (t,) = tails(recs)
    assert set(got) == {50.0, 90.0, 99.0, 99.9, 99.99, 100.0}
    assert got[50.0] == pytest.approx(2 * t.estimates["p50"][0]) == pytest.approx(1.5e-6, rel=0.01)


# ---- pair matrix and congestion


def _network(tmp_path) -> str:
    """two-switches.yaml with a trunk as fast as four host cables and h5's cable degraded to a
    tenth of its rate."""
    text = (REPO / "examples" / "testbeds" / "two-switches.yaml").read_text()
    path = tmp_path / "degraded.yaml"
    path.write_text(text.replace("  - [h5, s1]", "  - {a: h5, b: s1, rate_MBps: 6, name: h5-bad}")
                    .replace("rate_MBps: 20, name: trunk", "rate_MBps: 240, name: trunk"))
    return str(path)


def _shift(rate, size=1 << 16) -> list:
    """message.shift's records: at step k every rank r sends to r + k at rate(r, c) bytes/s."""
    out = []
    for k in range(1, 8):
        t = [size / rate(r, (r + k) % 8) for r in range(8)]
        out.append(derive(_rec("message.shift", size, [max(t)] * 5, active=k, concurrent=True, roles="b" * 8,
                               peers=[(r + k) % 8 for r in range(8)], rank_samples=[[x] * 5 for x in t],
                               rank_sent_bytes=[size] * 8, rank_recv_bytes=[size] * 8), HOSTS))
    return out


def test_a_degraded_cable_in_the_network_file_is_named_on_the_slow_pairs(tmp_path):
    net_file = _network(tmp_path)
    net, where = placed(net_file, HOSTS)
    pred = {}
    for k in range(1, 8):
        rates, _ = net.rates(where, (where + k) % 8)
        pred.update({(r, (r + k) % 8): float(rates[r]) for r in range(8)})
    header = {**HEADER, "nranks": 8, "hosts": HOSTS, "network": net_file}
    r = ingest.rows(_write(tmp_path / "pairs.json", _shift(lambda a, b: pred[(a, b)]), header))
    assert len(r.pairs) == 56 and r.run["network"] == net_file
    assert r.run["network_digest"] == hashlib.sha256(Path(net_file).read_bytes()).hexdigest()
    for row in r.pairs:
        assert row["bandwidth"] == pytest.approx(pred[(row["src"], row["dst"])], rel=1e-9)
        assert row["expected"] == pytest.approx(pred[(row["src"], row["dst"])], rel=1e-9)
        assert (row["src_host"], row["dst_host"]) == (HOSTS[row["src"]], HOSTS[row["dst"]])
    slow = [row for row in r.pairs if "h5" in (row["src_host"], row["dst_host"])]
    assert len(slow) == 14 and all(row["bandwidth"] == pytest.approx(6e6) for row in slow)
    assert all(row["cable"] == ("link h5-bad (h5→s1)" if row["src_host"] == "h5" else "link h5-bad (s1→h5)")
               for row in slow)
    rest = [row for row in r.pairs if row not in slow]
    assert all(row["bandwidth"] >= 30e6 and "h5" not in row["cable"] for row in rest)
    # the file gone: the pairs alone, its name's digest
    Path(net_file).unlink()
    gone = ingest.rows(tmp_path / "pairs.json")
    assert len(gone.pairs) == 56 and all(x["expected"] is None and x["cable"] is None for x in gone.pairs)
    assert gone.run["network_digest"] == hashlib.sha256(net_file.encode()).hexdigest()


def _victim(active, samples, launch, roles):
    peers = [4, -1, -1, -1, 0]
    return derive(_rec("message.victim_bandwidth", 1 << 16, samples, launch, active=active, roles=roles,
                       peers=peers, params={"aggressor": "alltoall", "seed": "1"},
                       rank_samples=[list(samples) if x == "v" else None for x in roles]))


def test_congestion_impacts_with_the_models_prediction_and_shared_cables(tmp_path):
    rng = np.random.default_rng(2)
    recs = []
    for k in range(3):
        base = rng.lognormal(np.log(1e-3), 0.02, 40)
        recs += [_victim(0, base, k, "viiiv"), _victim(3, 2 * base, k, "vaaav")]
    hosts = ["h0", "h1", "h5", "h6", "h4"]    # victims h0 and h4 and two aggressors across the trunk
    header = {**HEADER, "nranks": 5, "hosts": hosts,
              "network": str(REPO / "examples" / "testbeds" / "two-switches.yaml")}
    r = ingest.rows(_write(tmp_path / "cong.json", recs, header))
    (row,) = r.impacts
    assert r.run["kind"] == "congestion"
    assert (row["victim"], row["aggressor"], row["size"]) == ("bandwidth", "alltoall", 1 << 16)
    assert row["impact"] == pytest.approx(2.0, rel=1e-6) and row["ci_low"] <= 2.0 + 1e-9 <= row["ci_high"] + 2e-9
    assert row["predicted"] > 1 and "link trunk (s0→s1)" in row["cables"].split(",")
    assert ingest.series_key(row, "impacts") == "impact|bandwidth|alltoall|65536"


# ---- check.json and tune.json


def test_a_failed_checks_findings_name_their_cable_and_host(tmp_path):
    rng = np.random.default_rng(3)
    _write(tmp_path / "pairs-1.json", _ping(rng, launches=1), {**HEADER, "start_time": "2026-11-03T08:00:00+00:00"})
    label = "link h5-s1 (h5→s1)"
    outs = [Outcome("cabling", FAIL, [Attempt(FAIL, ["cable s0 [5] -- s1 [7]: active 1X, where both ends run 4X"],
                                              [], str(tmp_path / "fabric.txt"))]),
            Outcome("pairs", FAIL, [Attempt(FAIL, ["x"], [], "gone.json"),
                                    Attempt(FAIL, [f"cable {label}: 7 of the 7 pairs it limits low",
                                                   "host h2: 7 of its 7 pairs low (receives)"], [],
                                            str(tmp_path / "pairs-1.json"), named=[label])]),
            Outcome("collectives", FAIL, [Attempt(FAIL, [f"coll.allreduce at 1M: 1.7x (its bottleneck, {label}, "
                                                         "is a cable named above)"], [], "c.json")]),
            Outcome("congestion", PASS, [Attempt(PASS, [], ["impact 1.1"], "d.json")])]
    path = tmp_path / "check.json"
    path.write_text(json.dumps(to_dict(outs, {"attempts": 2})))
    r = ingest.rows(path, cluster="alps")
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    assert r.run["kind"] == "check" and r.run["uid"] == f"check-{sha[:12]}" and r.run["digest"] == sha
    assert r.run["started"] == "2026-11-03T08:00:00+00:00" and r.run["status"] == "failed"
    assert r.run["cluster"] == "alps" and r.run["hosts"] == "n2,n1,n3" and r.run["mpi"] == "openmpi"
    assert [(c["test"], c["verdict"], c["attempts"]) for c in r.checks] == [
        ("cabling", "fail", 1), ("pairs", "fail", 2), ("collectives", "fail", 1), ("congestion", "pass", 1)]
    assert [(f["test"], f["cable"], f["host"]) for f in r.findings] == [
        ("cabling", "s0 [5] -- s1 [7]", None), ("pairs", label, None), ("pairs", None, "h2"),
        ("collectives", label, None)]
    assert r.points == [] and r.pairs == []


def test_a_check_without_its_runs_is_dated_by_its_file(tmp_path):
    path = tmp_path / "check.json"
    path.write_text(json.dumps(to_dict([Outcome("pairs", PASS, [Attempt(PASS, [], [], "x/pairs-1.json")])], {})))
    r = ingest.rows(path)
    assert r.run["started_s"] == pytest.approx(path.stat().st_mtime) and r.run["cluster"] == "unknown"
    assert r.run["status"] == "passed" and r.findings == [] and r.versions == []
    path.write_text(json.dumps(to_dict([Outcome("pairs", PASS, [Attempt(PASS, [], [], "p.json")])], {}, "interrupted")))
    assert ingest.rows(path).run["status"] == "stopped"


def test_tune_json_gives_a_finding_per_size_chosen(tmp_path):
    path = tmp_path / "tune.json"
    choice = {"ratio": 0.8, "ratio_ci_low": 0.7, "ratio_ci_high": 0.9, "verdict": "faster", "medians_s": {}}
    path.write_text(json.dumps({"op": "allreduce", "library": "mpich", "ranks": 4, "measured": [],
                                "choices": [{"size": 8, "algorithm": "recursive_doubling", "fastest": "x", **choice},
                                            {"size": 1 << 20, "algorithm": None, "fastest": "y", **choice}],
                                "measure": str(tmp_path / "measure.json"), "check_runs": []}))
    r = ingest.rows(path)
    assert r.run["kind"] == "tune" and r.run["uid"].startswith("tune-")
    assert [(f["test"], f["item"]) for f in r.findings] == [("coll.allreduce", "8: recursive_doubling"),
                                                              ("coll.allreduce", "1048576: the library choice")]


# ---- imported output and bad documents


def test_osu_and_imb_output_are_read_as_fabriclab_import_reads_them():
    path = DATA / "osu_latency_v5.txt"
    r = ingest.rows(path)
    doc = imports.load(path, "osu")
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    assert r.run["kind"] == "import" and r.run["digest"] == sha and r.run["uid"] == f"{doc.header.run_id}@{doc.header.start_time}"
    assert {"component": "osu", "version": "5.6.3"} in r.versions
    merged = merge.merged(doc)
    assert [p["median"] for p in r.points] == [m.summary.median for m in merged] and len(r.points) == 24
    assert r.points[0]["imported"] == "osu:osu_latency" and r.points[0]["ci_low"] is None
    assert r.points[0]["series"] == "message.pingpong||0|1|1||"
    imb = ingest.rows(DATA / "imb_collectives_ompi.txt", cluster="c")
    assert imb.run["kind"] == "import" and imb.points and imb.run["cluster"] == "c"


@pytest.mark.parametrize("text, says", [
    ('{"schema": "fabriclab.run", "schema_version": 15, "header": {}, "records": [{"kind": "point"}], "footer": '
     '{"status": "complete"}}', "lacks 'bench'"),
    ('{"schema": "fabriclab.run", "schema_version": 15, "header": {', "is not a fabriclab result"),
    ('{"tests": 3}', "not a fabriclab document"),
    ('{"passed": false, "tests": [{"verdict": "fail"}]}', "not a valid check document"),
    ("some text\nthat no tool printed\n", "not a fabriclab document"),
])
def test_a_bad_document_is_one_line_naming_the_file(tmp_path, text, says):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(UsageError) as e:
        ingest.rows(path)
    assert says in str(e.value) and str(path) in str(e.value) and "\n" not in str(e.value)


def test_a_missing_file_or_a_folder_is_one_line(tmp_path):
    for path, says in ((tmp_path / "none.json", "no such file"), (tmp_path, "not a regular file")):
        with pytest.raises(UsageError, match=says):
            ingest.rows(path)


def test_rows_are_a_rows_of_plain_data(run):
    r = run["rows"]
    assert isinstance(r, Rows) and json.loads(json.dumps(r.run)) == r.run
    json.dumps([r.points, r.versions, r.pairs, r.impacts])


def test_a_cable_slower_than_the_network_file_says_is_a_finding_of_the_run(tmp_path):
    """Measured against the nominal network, the pairs through h5 at a tenth of their rate: the
    run's pair matrix names h5's cable, kept as a finding (test "pairs") the history reads."""
    bad = _network(tmp_path)
    nominal = tmp_path / "nominal.yaml"
    nominal.write_text(Path(bad).read_text().replace("{a: h5, b: s1, rate_MBps: 6, name: h5-bad}",
                                                     "{a: h5, b: s1, name: h5-cable}"))
    net, where = placed(bad, HOSTS)
    pred = {}
    for k in range(1, 8):
        rates, _ = net.rates(where, (where + k) % 8)
        pred.update({(r, (r + k) % 8): float(rates[r]) for r in range(8)})
    header = {**HEADER, "nranks": 8, "hosts": HOSTS, "network": str(nominal)}
    r = ingest.rows(_write(tmp_path / "pairs.json", _shift(lambda a, b: pred[(a, b)]), header))
    assert r.findings and {f["test"] for f in r.findings} == {"pairs"}
    assert {f["cable"] for f in r.findings if f["cable"]} <= {"link h5-cable (h5→s1)", "link h5-cable (s1→h5)"}
    assert any(f["cable"] for f in r.findings)
