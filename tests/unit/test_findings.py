"""Warnings at the right level, on synthetic runs: what most points share is
one finding of the run; a point is named only for what is particular to it."""

import numpy as np

from fabriclab.analysis import findings, merge
from fabriclab.analysis.diagnostics import check_point
from fabriclab.analysis.stats import summarize
from fabriclab.report import rows as report_rows
from fabriclab.schema.records import Point

SIZES = [2 ** k for k in range(3, 23)]    # 8 B .. 4 MiB, 20 points


def hockney(size: int) -> float:
    return 1e-6 + size / 1e9              # 1 us + size / (1 GB/s)


def launch_point(size, samples, launch, stop="converged", errors=0):
    p = Point(bench="message.pingpong", size=size, bytes_per_op=2 * size, summary=summarize(samples),
              legs_per_op=2, samples=list(samples), stop=stop, launch=launch,
              validation={"checked_bytes": size, "errors": errors})
    p.diagnostics = [{**d.to_dict(), "bench": p.bench, "size": size, "stride": 1}
                     for d in check_point(p, p.summary, 0.025)]
    return p


def run(launch_sigma, sample_sigma, outliers=0.0, odd=None, seed=1, launches=5):
    """Merged points of a synthetic run: per point, launch medians scattered
    log-normally by launch_sigma, samples about them by sample_sigma, a share
    of samples slowed 3x; odd: {size: (launch_sigma, scale)} for points that differ."""
    rng = np.random.default_rng(seed)
    out = []
    for size in SIZES:
        sigma, scale = (odd or {}).get(size, (launch_sigma, 1.0))
        ps = []
        for k in range(launches):
            mid = hockney(size) * scale * float(np.exp(rng.normal(0, sigma)))
            x = mid * np.exp(rng.normal(0, sample_sigma, 200))
            x[rng.random(200) < outliers] *= 3
            ps.append(launch_point(size, x, k))
        out.append(merge.merge(ps))
    return out


def flagged(points):
    return {m.size: [d["code"] for d in m.diagnostics] for m in points if m.diagnostics}


def test_a_noisy_machine_is_one_finding_and_no_point_is_named():
    pts = run(launch_sigma=0.15, sample_sigma=0.02, outliers=0.15)
    found = findings.classify(pts, outlier_share=0.15, steal=[0.01] * 60 + [0.0] * 40)
    assert [d["code"] for d in found["run"]] == ["noisy-machine"]
    held = found["conditions"]
    assert held["unstable-across-launches"][0] > 10 and held["outliers"] == [20, 20]
    text = found["run"][0]["message"]
    assert "outlier samples in a launch (20 of 20 points)" in text and "15.0% of samples are outliers" in text
    assert "stole CPU time in 60 of 100 launches" in text
    assert found["noise"]["launch_ratio_median"] > 1.1 and found["noise"]["launch_ratio_p90"] >= \
        found["noise"]["launch_ratio_median"]
    assert flagged(pts) == {} and found["flagged"] == 0


def test_one_bad_point_in_a_quiet_run_is_the_only_one_named():
    bad = SIZES[9]
    pts = run(launch_sigma=0.0, sample_sigma=0.01, odd={bad: (0.4, 1.0)})
    found = findings.classify(pts, outlier_share=0.0, steal=[0.0] * 100)
    assert found["run"] == []          # one unstable point is no condition of the run
    assert flagged(pts) == {bad: ["wide-interval"]} and found["flagged"] == 1
    (d,) = pts[9].diagnostics
    assert (d["bench"], d["size"]) == ("message.pingpong", bad) and "the run's median" in d["message"]


def test_a_spike_off_the_size_curve_is_named_off_trend():
    spike = SIZES[12]
    pts = run(launch_sigma=0.0, sample_sigma=0.01, odd={spike: (0.0, 2.0)})
    findings.classify(pts)
    assert flagged(pts) == {spike: ["off-trend"]}
    assert "above both neighbouring sizes" in pts[12].diagnostics[0]["message"]


def test_a_step_in_the_size_curve_is_no_spike():
    """A protocol switch: every size from the step on is twice as slow; the
    points at the step lie between their neighbours."""
    step = SIZES[10]
    pts = run(launch_sigma=0.0, sample_sigma=0.01, odd={s: (0.0, 2.0) for s in SIZES if s >= step})
    findings.classify(pts)
    assert flagged(pts) == {}


def test_a_validation_failure_is_named_once_with_its_launches():
    ps = [launch_point(64, np.full(50, 1e-6) * (1 + 0.001 * np.arange(50)), k, errors=3 if k < 3 else 0)
          for k in range(5)]
    m = merge.merge(ps)
    findings.classify([m])
    assert [(d["code"], d["launches"]) for d in m.diagnostics] == [("validation-failed", 3)]
    assert report_rows.warning_text(m.diagnostics) == "validation-failed (3 launches)"


def test_a_point_short_of_samples_is_named_only_where_more_would_help():
    """Most launches stopped at the cap, its interval is wider than the run's
    and its own samples (not the launch spread) limit it: not converged."""
    rng = np.random.default_rng(3)
    pts = run(launch_sigma=0.01, sample_sigma=0.01)
    short = [launch_point(1 << 23, hockney(1 << 23) * np.exp(rng.normal(0, 0.3, 6)), k, stop="time_cap")
             for k in range(5)]
    pts.append(merge.merge(short))
    found = findings.classify(pts)
    assert found["conditions"]["time-cap"] == [1, 21]
    assert "not-converged" in flagged(pts)[1 << 23]


def test_most_points_at_the_cap_is_a_finding_not_a_flag_each():
    rng = np.random.default_rng(4)
    pts = []
    for size in SIZES:
        ps = [launch_point(size, hockney(size) * np.exp(rng.normal(0, 0.3, 6)), k, stop="time_cap")
              for k in range(5)]
        pts.append(merge.merge(ps))
    found = findings.classify(pts)
    # the spread of these launches is noise; the cap is named for what it is, apart
    assert [d["code"] for d in found["run"]] == ["noisy-machine", "time-cap"]
    noisy, cap = found["run"]
    assert "--point-time" not in noisy["message"]
    assert "the --point-time cap, not noise: a launch stopped at the --point-time cap (20 of 20 points)" in cap["message"]
    assert "raise --point-time" in cap["advice"]
    assert "not-converged" not in {c for cs in flagged(pts).values() for c in cs}


def test_a_quiet_run_whose_points_reach_the_cap_is_not_called_noisy():
    """Long ops: every launch stops at the cap with 6 samples, which agree to 0.2%: the
    finding names the cap, and says there is nothing to do; no noisy-machine."""
    pts = [merge.merge([launch_point(size, hockney(size) * np.linspace(1, 1.002, 6), k, stop="time_cap")
                        for k in range(5)]) for size in SIZES]
    found = findings.classify(pts)
    assert [d["code"] for d in found["run"]] == ["time-cap"]
    assert "nothing to do" in found["run"][0]["advice"] and found["flagged"] == 0


def test_points_of_one_sample_at_the_cap_are_not_called_precise():
    """One sample a point ([x, x]: an interval of 0) is no evidence of a narrow interval."""
    pts = [merge.merge([launch_point(size, [hockney(size)], 0, stop="time_cap")]) for size in SIZES]
    found = findings.classify(pts)
    (cap,) = [d for d in found["run"] if d["code"] == "time-cap"]
    assert "nothing to do" not in cap["advice"]
    assert f"{len(SIZES)} of the {len(SIZES)} points" in cap["advice"] and "fewer than 10 samples" in cap["advice"]


def test_show_lists_each_kind_once_and_a_version_9_document_is_classified(fake_core, tmp_path, capsys):
    """A version 9 document stored every launch's warnings with its merged
    points and no findings: read now, its point warnings are classified (a
    kind once per point, with its launches) and what most points share is
    one finding line."""
    import json
    from fabriclab.cli import main
    out = tmp_path / "r.json"
    assert main(["run", "message.pingpong", "-s", "8,64,1K", "-L", "3", "--core", fake_core["core"],
                 "--mpiexec", fake_core["mpiexec"], "-q", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["schema_version"] == 18 and "noise" in doc["findings"]
    old = dict(doc, schema_version=9)
    del old["findings"]
    for m in old["merged"]:
        m["diagnostics"] = [{"code": "outliers", "message": f"{k} of 100 samples", "advice": "quiet it",
                             "bench": m["bench"], "size": m["size"]} for k in (11, 12, 13)]
    old["merged"][1]["diagnostics"] += [{"code": "validation-failed", "message": "3 of 64 checked bytes",
                                         "advice": "report it", "bench": "message.pingpong", "size": 64}] * 2
    path = tmp_path / "v9.json"
    path.write_text(json.dumps(old))
    assert main(["show", str(path)]) == 0
    text = capsys.readouterr().out
    assert "outliers" not in text.split("finding:")[0]          # no kind repeated per launch in the rows
    assert text.count("validation-failed (2 launches)") == 1
    assert text.count("finding: noisy-machine") == 1 and "outlier samples in a launch (3 of 3 points)" in text


def test_a_timer_bias_is_the_points_own_only_in_every_launch():
    pts = run(launch_sigma=0.0, sample_sigma=0.01)
    timer = {"code": "timer-overhead", "message": "reading the timer costs 200 ns", "advice": "raise --sample-time"}
    pts[3].diagnostics += [dict(timer)] * 5      # every launch: the point's own
    pts[4].diagnostics += [dict(timer)] * 3      # some launches: the machine's load
    findings.classify(pts)
    assert flagged(pts) == {SIZES[3]: ["timer-overhead"]}
    assert pts[3].diagnostics[0]["launches"] == 5
