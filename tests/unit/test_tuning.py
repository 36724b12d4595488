"""The tuner's decisions and files (tuning/): a size gets the fastest algorithm only where
compare's interval says it beats the library's own choice; the ranges a file gives each
choice; MPICH's tree (the library's own, one branch changed, in the form its parser
takes) and Open MPI's rules; the model's pruning; bad input in one line."""
import json
from pathlib import Path

import numpy as np
import pytest

from fabriclab.cli import main
from fabriclab.errors import UsageError
from fabriclab.schema.records import Point, Summary
from fabriclab.tuning import choice, mpich, openmpi
from fabriclab.tuning.prune import prune

TWO = str(Path(__file__).resolve().parents[2] / "examples" / "testbeds" / "two-switches.yaml")


def _points(size: int, medians: dict, launches: int = 5, spread: float = 0.01) -> list:
    """Point records of each algorithm at one size, `launches` launches of 50 samples around its median."""
    rng = np.random.default_rng(size)
    out = []
    for alg, m in medians.items():
        for k in range(launches):
            xs = list(m * (1 + spread * rng.standard_normal(50)))
            out.append(Point(bench="coll.allreduce", size=size, bytes_per_op=size, summary=Summary(median=m),
                             variant=f"algorithm={alg}", params={"algorithm": alg}, launch=k, samples=xs))
    return out


def test_the_fastest_is_chosen_only_where_the_interval_says_it_beats_the_library():
    pts = (_points(8, {"auto": 10e-6, "ring": 20e-6, "recursive_doubling": 5e-6})        # clearly faster
           + _points(1024, {"auto": 10e-6, "ring": 9.99e-6, "recursive_doubling": 11e-6})  # within noise
           + _points(1 << 20, {"auto": 1e-3, "ring": 2e-3}))                            # slower: kept
    got = {c.size: c for c in choice.choose(pts)}
    assert got[8].algorithm == "recursive_doubling" and got[8].verdict == "faster"
    assert got[8].ratio == pytest.approx(0.5, rel=0.02) and got[8].ratio_ci_high < 0.98
    assert got[1024].fastest == "ring" and got[1024].algorithm is None and got[1024].verdict == "same"
    assert got[1 << 20].algorithm is None and got[1 << 20].verdict == "slower"


def test_a_size_without_the_librarys_choice_beside_it_gets_no_decision():
    assert choice.choose(_points(8, {"ring": 1e-6, "recursive_doubling": 2e-6})) == []


def _c(size, alg):
    return choice.Choice(size, alg, alg or "ring", 1.0, 1.0, 1.0, "same", {})


def test_ranges_merge_equal_decisions_and_split_at_the_geometric_mean():
    got = choice.ranges([_c(8, "a"), _c(32, "a"), _c(2048, None), _c(1 << 20, "b")])
    assert got == [(0, 256, "a"), (257, 46340, None), (46341, None, "b")]
    assert choice.ranges([_c(64, None)]) == [(0, None, None)]


BASE = {
    "collective=allreduce": {"comm_type=intra": {"avg_msg_size<=8": {"algorithm=MPIR_Allreduce_intra_rd": {}},
                                                 "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_x": {}}},
                             "comm_type=inter": {"algorithm=MPIR_Allreduce_inter_y": {}}},
    "collective=bcast": {"comm_type=intra": {"algorithm=MPIR_Bcast_intra_binomial": {}}},
}


def test_mpichs_tree_changes_only_the_tuned_op_at_the_tuned_size():
    t = mpich.tree(BASE, "allreduce", 8, [(0, 90, None), (91, 8192, "recursive_doubling"), (8193, None, "ring")])
    assert t["collective=bcast"] == BASE["collective=bcast"]
    assert t["collective=allreduce"]["comm_type=inter"] == BASE["collective=allreduce"]["comm_type=inter"]
    default = BASE["collective=allreduce"]["comm_type=intra"]
    intra = t["collective=allreduce"]["comm_type=intra"]
    assert list(intra) == ["comm_size<=7", "comm_size<=8", "comm_size=any"]    # never "<": MPICH reads it as <=
    assert intra["comm_size<=7"] == intra["comm_size=any"] == default
    tuned = intra["comm_size<=8"]
    assert tuned["is_commutative=any"] == default                              # a user's own op keeps the library's
    # MPICH's own ops and counts below the ranks' power of two keep the library's choice
    assert tuned["is_commutative=yes"]["is_op_built_in=no"] == default
    assert tuned["is_commutative=yes"]["is_op_built_in=yes"]["count<pow2"] == default
    assert tuned["is_commutative=yes"]["is_op_built_in=yes"]["count=any"] == {
        "avg_msg_size<=90": default,
        "avg_msg_size<=8192": {"algorithm=MPIR_Allreduce_intra_recursive_doubling": {}},
        "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_ring": {}}}
    assert mpich.tree(BASE, "allreduce", 8, [(0, None, None)]) == BASE          # nothing beat the library


def test_mpichs_allgather_is_tuned_on_its_total_size():
    base = {"collective=allgather": {"comm_type=intra": {"algorithm=MPIR_Allgather_intra_ring": {}}}}
    t = mpich.tree(base, "allgather", 4, [(0, 1000, "brucks"), (1001, None, None)])
    tuned = t["collective=allgather"]["comm_type=intra"]["comm_size<=4"]
    assert list(tuned) == ["total_msg_size<=4000", "total_msg_size=any"]


def test_mpichs_file_names_only_what_its_parser_knows_without_parameters(tmp_path, monkeypatch):
    lib = tmp_path / "libmpi.so.12"
    lib.write_bytes(b"\0algorithm=MPIR_Allreduce_intra_ring\0algorithm=MPIR_Allreduce_intra_tree\0"
                    b'{"collective=allreduce":{"comm_type=intra":{"algorithm=MPIR_Allreduce_intra_ring":{}}}}\0')
    monkeypatch.setattr(mpich, "library", lambda core: lib)
    ok, why = mpich.selectable("core", "allreduce", ["auto", "ring", "tree", "nb", "unheard_of"])
    assert ok == ["ring"]
    assert set(why) == {"auto", "tree", "nb", "unheard_of"} and "parameters" in why["tree"]
    assert mpich.default_tree(lib) == {"collective=allreduce": {
        "comm_type=intra": {"algorithm=MPIR_Allreduce_intra_ring": {}}}}
    path = tmp_path / "sel.json"
    mpich.write(path, "core", "allreduce", 2, [(0, None, "ring")], ["ring"])
    written = json.loads(path.read_text())["collective=allreduce"]["comm_type=intra"]
    assert written["comm_size<=2"]["is_commutative=yes"]["is_op_built_in=yes"]["count=any"] == {
        "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_ring": {}}}
    assert mpich.environment(path) == {mpich.ENV: str(path.resolve())}


def test_a_library_without_a_tree_is_refused(tmp_path):
    lib = tmp_path / "libmpi.so"
    lib.write_bytes(b"no tree here")
    with pytest.raises(UsageError, match="no collective-selection tree"):
        mpich.default_tree(lib)


def test_open_mpis_rules_number_the_controls_values_and_limit_the_communicator():
    names = ["ignore", "basic_linear", "nonoverlapping", "recursive_doubling", "ring"]
    text = openmpi.rules("allgather", 4, [(0, 255, "recursive_doubling"), (256, 4095, None), (4096, None, "ring")],
                         names)
    nums = [line.split("#")[0].split() for line in text.splitlines()]
    assert nums == [["1"], ["0"], ["2"], ["4"], ["3"], ["0", "3", "0", "0"], ["1024", "0", "0", "0"],
                    ["16384", "4", "0", "0"], ["5"], ["1"], ["0", "0", "0", "0"]]
    ok, why = openmpi.selectable("core", "allreduce", names)
    assert ok == names[1:] and set(why) == {"ignore"}
    with pytest.raises(UsageError, match="cannot write Open MPI"):
        openmpi.selectable("core", "barrier", names)


def test_the_model_rules_out_what_it_predicts_twice_as_slow_at_every_size():
    hosts = [f"h{i}" for i in range(8)]
    names = ["ring", "recursive_doubling", "reduce_scatter_allgather", "tree"]
    kept, ruled = prune("allreduce", names, [1 << 20, 4 << 20], hosts, TWO, factor=1.01)
    assert "tree" in kept                                   # no schedule: always measured
    assert ruled and set(ruled) <= {"ring", "recursive_doubling", "reduce_scatter_allgather"}
    assert set(kept) | set(ruled) == set(names)
    assert prune("allreduce", names, [1 << 20], hosts, None) == (names, {})           # no network: all
    assert prune("allreduce", names, [1 << 20], ["elsewhere"] * 8, TWO) == (names, {})


@pytest.mark.parametrize("argv, said", [
    (["tune", "allreduce", "-p", "algorithm=ring"], "tune sets algorithm itself"),
    (["tune", "allreduce", "-p", "form=nonblocking"], "tune sets form itself"),
    (["tune", "allreduce", "--rounds", "-1"], "--rounds: -1 is not between 0 and 100"),
    (["tune", "allreduce", "--prune-factor", "1"], "--prune-factor"),
    (["tune", "barrier"], "invalid choice"),
])
def test_bad_tuning_input_is_one_line_and_exit_2(argv, said, capsys, tmp_path):
    assert main([*argv, "-o", str(tmp_path / "t")]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_a_folder_holding_a_tuning_asks_for_force_and_its_links_are_refused(tmp_path, capsys):
    out = tmp_path / "t"
    out.mkdir()
    (out / "tune.json").write_text("{}")
    assert main(["tune", "allreduce", "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{out} holds a tuning (tune.json); pass --force" in err and len(err.splitlines()) == 1
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("keep")
    (out / mpich.FILE).symlink_to(elsewhere)
    assert main(["tune", "allreduce", "--force", "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"cannot write {out / mpich.FILE}: it is a symbolic link" in err and len(err.splitlines()) == 1
    assert elsewhere.read_text() == "keep" and (out / "tune.json").read_text() == "{}"


def test_a_refused_tuning_makes_no_folder(tmp_path, fake_core, capsys):
    out = tmp_path / "a" / "t"
    assert main(["tune", "allreduce", "-n", "2", "--core", fake_core["core"], "--mpiexec", fake_core["mpiexec"],
                 "--network", str(tmp_path / "missing.yaml"), "-o", str(out)]) == 2
    assert "missing.yaml" in capsys.readouterr().err
    assert not (tmp_path / "a").exists()
