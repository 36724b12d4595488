"""The machine check's probes on recorded /proc and /sys trees, `--tune` and
`--reset` on them, and the CLI's refusal without root."""

import json
import os
from pathlib import Path

import pytest

from fabriclab.cli import main
from fabriclab.errors import UsageError
from fabriclab.host import machine, probes, sysfs, tune
from support import machinetrees as trees


def _check(tmp_path, tree, window_s=0.0):
    return {f.name: f for f in machine.check(trees.write(tree, tmp_path), window_s)}


def test_every_probe_answers_in_order(tmp_path):
    found = machine.check(trees.write(trees.VM_STEAL, tmp_path), 0.0)
    assert [f.name for f in found] == [name for name, _ in probes.PROBES]
    assert all(f.status in sysfs.STATUSES for f in found)


def test_vm_with_steal(tmp_path):
    f = _check(tmp_path, trees.VM_STEAL)
    assert f["virtualization"].status == "warn" and "virtual machine" in f["virtualization"].value
    assert f["steal"].status == "warn" and f["steal"].value.startswith("5.0% of CPU time since boot")
    assert f["governor"].status == "info" and "no cpufreq" in f["governor"].value and not f["governor"].tune
    assert f["turbo"].status == "info"
    assert f["smt"].status == "ok"
    assert f["isolation"].status == "info" and "isolcpus" in f["isolation"].fix
    # virtio2's three interrupts, not virtio0's or virtio20's
    assert f["irq"].value == "eth0: 3 IRQs on CPUs 0 / 0-1 / 1"
    assert f["thp"].status == "warn" and f["thp"].value == "enabled always, defrag madvise"
    assert f["thp"].tune == ((str(tmp_path / trees.THP / "enabled"), "madvise"),)
    assert f["numa"].status == "ok" and "eth0 on node ?" in f["numa"].value
    assert f["memlock"].status == "info" and "8M" in f["memlock"].value and "no RDMA" in f["memlock"].value
    assert f["busy"].status == "info"      # no window: no process figures


def test_steal_and_busy_over_a_window(tmp_path):
    tree = sysfs.Tree(trees.write(trees.VM_STEAL, tmp_path))
    hz = probes.os.sysconf("SC_CLK_TCK")
    a = sysfs.Snapshot(0.0, [0] * 8, {4242: ("busy loop", 0), 7: ("idle", 5)})
    b = sysfs.Snapshot(1.0, [0, 0, 0, 90, 0, 0, 0, 10], {4242: ("busy loop", hz), 7: ("idle", 5),
                                                           8: ("newcomer", hz // 2)})
    steal = probes.steal(tree, a, b)
    assert steal.status == "warn" and "10.0% over the last 1.0 s" in steal.value
    busy = probes.busy(tree, a, b)
    assert busy.status == "warn" and busy.value.startswith("2 busy: busy loop (4242) 100%, newcomer (8) 50%")
    assert "idle" not in busy.value and "load average 3.10" in busy.value


def test_tuned_host(tmp_path):
    f = _check(tmp_path, trees.TUNED)
    assert {n: f[n].status for n in ("virtualization", "steal", "governor", "turbo", "isolation", "thp", "memlock")} \
        == dict.fromkeys(("virtualization", "steal", "governor", "turbo", "isolation", "thp", "memlock"), "ok")
    assert f["virtualization"].value == "bare metal (Dell Inc.)"
    assert f["governor"].value == "performance on 4 CPUs"
    assert f["smt"].status == "info" and "0,2; 1,3" in f["smt"].value
    assert f["isolation"].value == "isolated CPUs 2-3, nohz_full 2-3"
    assert f["numa"].status == "info" and f["numa"].value == "2 NUMA nodes; ib0 on node 1"
    assert f["irq"].value == "ib0: 1 IRQs on CPUs 0-1"
    assert not tune.planned(list(f.values()))


def test_untuned_host_plans_governor_turbo_and_thp(tmp_path):
    f = _check(tmp_path, trees.UNTUNED)
    assert f["governor"].status == "warn" and f["governor"].value == "powersave on 4 of 4 CPUs"
    assert f["turbo"].status == "warn" and f["memlock"].status == "warn" and "mlx5_0" in f["memlock"].value
    writes = tune.planned(list(f.values()))
    assert [(p.replace(str(tmp_path), ""), v) for p, v in writes] == [
        *[(f"/{trees.CPU}/cpu{i}/cpufreq/scaling_governor", "performance") for i in range(4)],
        (f"/{trees.CPU}/intel_pstate/no_turbo", "1"),
        (f"/{trees.THP}/enabled", "madvise"), (f"/{trees.THP}/defrag", "madvise")]


def test_unreadable_files_are_unknown_never_an_exception(tmp_path):
    f = _check(tmp_path, trees.BROKEN, window_s=0.01)
    assert f["steal"].status == "unknown"
    assert f["governor"].status == "unknown" and "cannot read" in f["governor"].value
    assert f["thp"].status == "unknown" and "cannot read" in f["thp"].value
    assert f["memlock"].status == "unknown"
    assert f["virtualization"].status == "unknown"
    rec = machine.record(tmp_path, window_s=0.0)
    assert len(rec["findings"]) == len(probes.PROBES) and "unknown" in machine.short_line(rec["findings"])


def test_a_missing_tree_is_all_info_or_unknown(tmp_path):
    found = machine.check(tmp_path / "nothing", 0.0)
    assert len(found) == len(probes.PROBES) and not [f for f in found if f.status == "warn"]


def test_short_line_names_the_warnings():
    line = machine.short_line([{"name": "steal", "status": "warn"}, {"name": "thp", "status": "ok"}])
    assert line.startswith("machine check: 1 may disturb timings (steal)") and "doctor --machine" in line
    assert "nothing known" in machine.short_line([{"name": "thp", "status": "ok"}])


def _untuned(tmp_path):
    root = trees.write(trees.UNTUNED, tmp_path / "root")
    return root, list(_check_root(root).values())


def _check_root(root):
    return {f.name: f for f in machine.check(root, 0.0)}


def test_tune_then_reset_restores_exactly(tmp_path):
    root, findings = _untuned(tmp_path)
    state = tmp_path / "run" / "tune.json"
    before = {p: (root / p).read_text() for p in trees.UNTUNED if type(trees.UNTUNED[p]) is str}
    changes = tune.tune(findings, True, state, root)
    assert len(changes) == 7 and tune.tuned(state)
    after = _check_root(root)
    assert all(after[n].status == "ok" for n in ("governor", "turbo", "thp"))
    assert json.loads(state.read_text())["changes"][-1]["previous"] == "always"
    kept = state.read_text()
    assert tune.tune(list(after.values()), True, state, root) == [] and state.read_text() == kept   # nothing more
    restored = tune.reset(True, state, root)
    assert len(restored) == 7 and not tune.tuned(state)
    for p, text in before.items():
        now = (root / p).read_text()
        assert now.strip() == text.strip() or f"[{now}]" in text, p   # sysfs choice files take the bare word
    again = _check_root(root)      # a recorded file keeps the bare word written back, real sysfs its choices
    assert again["governor"].status == again["turbo"].status == "warn"
    assert again["thp"].value == "enabled always, defrag always"


def test_tune_with_nothing_to_change_leaves_no_state(tmp_path):
    root = trees.write(trees.TUNED, tmp_path / "root")
    assert tune.tune(list(_check_root(root).values()), True, tmp_path / "tune.json") == []
    assert not tune.tuned(tmp_path / "tune.json")


def test_tune_without_root_names_the_changes_and_touches_nothing(tmp_path):
    root, findings = _untuned(tmp_path)
    state = tmp_path / "tune.json"
    with pytest.raises(UsageError, match=r"--tune needs root; it would change: .*scaling_governor -> performance"):
        tune.tune(findings, False, state)
    assert not state.exists() and (root / trees.THP / "enabled").read_text().startswith("[always]")


def test_cli_tune_without_root_exits_2_in_one_line(tmp_path, monkeypatch, capsys):
    root, _ = _untuned(tmp_path)
    monkeypatch.setattr(machine, "ROOT", root)
    monkeypatch.setattr(tune, "STATE", tmp_path / "tune.json")
    monkeypatch.setattr("fabriclab.cli.doctor_machine.is_root", lambda: False)
    assert main(["doctor", "--tune"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fabriclab: error: --tune needs root; it would change:")
    assert "no_turbo -> 1" in err[0] and not (tmp_path / "tune.json").exists()
    assert main(["doctor", "--reset"]) == 2


def test_cli_tune_and_reset_as_root_on_a_recorded_tree(tmp_path, monkeypatch, capsys):
    root, _ = _untuned(tmp_path)
    monkeypatch.setattr(machine, "ROOT", root)
    monkeypatch.setattr(tune, "STATE", tmp_path / "tune.json")
    monkeypatch.setattr("fabriclab.cli.doctor_machine.is_root", lambda: True)
    assert main(["doctor", "--tune"]) == 0
    out = capsys.readouterr().out
    assert "no_turbo: 0 -> 1" in out and "enabled: always -> madvise" in out
    assert main(["doctor", "--machine"]) == 0
    out = capsys.readouterr().out
    assert "0 settings --tune would change (tuned by" in out and "WARN  thp" not in out
    assert main(["doctor", "--reset"]) == 0
    assert "restored" in capsys.readouterr().out and (root / trees.THP / "enabled").read_text() == "always"
    assert main(["doctor", "--reset"]) == 0 and "nothing to reset" in capsys.readouterr().out


def test_cli_machine_on_a_vm_prints_effects_and_fixes(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(machine, "ROOT", trees.write(trees.VM_STEAL, tmp_path))
    monkeypatch.setattr(tune, "STATE", tmp_path / "tune.json")
    assert main(["doctor", "--machine"]) == 0
    out = capsys.readouterr().out
    assert "WARN  steal" in out and "fix (--tune): echo madvise > /sys/kernel/mm/transparent_hugepage/enabled" in out
    assert out.strip().splitlines()[-1].startswith("3 of 11 findings may disturb timings; 1 settings --tune")


# ---------------------------------------------------------------- a tune state that is no claim of ours
def _hostile_states(root, outside):
    gov = str(root / "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    one = lambda **c: {"changes": [{"path": gov, "previous": "powersave", "value": "performance", **c}]}
    return {
        "any path and value": {"changes": [{"path": str(outside), "previous": "pwned", "value": "a"}]},
        "a path out through '..'": one(path=gov.replace("cpu0/cpufreq", "cpu0/cpufreq/../../../../../../..")
                                        + str(outside)),
        "a value of another form": one(previous="performance; rm -rf /"),
        "a number for a value": one(previous=3),
        "an entry without its value": {"changes": [{"path": gov, "previous": "powersave"}]},
        "changes that are no list": {"changes": "all"},
        "no object": [1, 2],
        "the same setting twice": {"changes": one()["changes"] * 2},
        "changes nested 100,000 deep": '{"changes": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "an integer of 5,000 digits": '{"changes": [' + "9" * 5000 + "]}",
    }


@pytest.mark.parametrize("case", list(_hostile_states(Path("/r"), Path("/x"))))
def test_reset_refuses_a_state_that_names_anything_but_tune_s_settings(case, tmp_path, monkeypatch, capsys):
    """--reset writes only the settings --tune makes, values of their form; anything else is one line,
    exit 2, nothing written, the file set aside so that --tune is not blocked by it."""
    root, _ = _untuned(tmp_path)
    outside = tmp_path / "x"
    outside.write_text("mine")
    monkeypatch.setattr(machine, "ROOT", root)
    monkeypatch.setattr(tune, "STATE", tmp_path / "tune.json")
    monkeypatch.setattr("fabriclab.cli.doctor_machine.is_root", lambda: True)
    state = _hostile_states(root, outside)[case]
    tune.STATE.write_text(state if isinstance(state, str) else json.dumps(state))
    governor = (root / "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").read_text()
    assert main(["doctor", "--reset"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "is not one fabriclab wrote" in err and "nothing restored" in err, err
    assert outside.read_text() == "mine" and (root / "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").read_text() == governor
    assert not tune.STATE.exists() and len(list(tmp_path.glob("tune.json.refused-*"))) == 1
    assert main(["doctor", "--tune"]) == 0        # not blocked: tuned afresh, with its own state
    assert "no_turbo: 0 -> 1" in capsys.readouterr().out and tune.tuned(tune.STATE)


def test_tune_sets_a_refused_state_aside_and_says_so(tmp_path, monkeypatch, capsys):
    root, _ = _untuned(tmp_path)
    monkeypatch.setattr(machine, "ROOT", root)
    monkeypatch.setattr(tune, "STATE", tmp_path / "tune.json")
    monkeypatch.setattr("fabriclab.cli.doctor_machine.is_root", lambda: True)
    tune.STATE.write_text("{not json")
    assert main(["doctor", "--tune"]) == 0
    err = capsys.readouterr().err
    assert "warning: the tune state" in err and "set aside as" in err
    assert main(["doctor", "--reset"]) == 0 and "restored" in capsys.readouterr().out


@pytest.mark.parametrize("kind", ["fifo", "directory", "large"])
def test_a_tune_state_that_is_no_file_or_too_large_is_refused_unread(kind, tmp_path, monkeypatch, capsys):
    """A pipe is not opened for reading (it would wait for a writer), a directory not listed,
    a large file not read; a pipe or a directory is left where it is."""
    monkeypatch.setattr(tune, "STATE", tmp_path / "tune.json")
    monkeypatch.setattr("fabriclab.cli.doctor_machine.is_root", lambda: True)
    if kind == "fifo":
        os.mkfifo(tune.STATE)
    elif kind == "directory":
        tune.STATE.mkdir()
    else:
        tune.STATE.write_text(json.dumps({"changes": []}) + " " * tune.STATE_LIMIT)
    assert main(["doctor", "--reset"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot read the tune state" in err, err
    assert os.path.lexists(tune.STATE) == (kind != "large")
