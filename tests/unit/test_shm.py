"""/dev/shm after a launch (measure/shm.py): what appeared during the launch and no
process holds is removed; what was there before, what a process holds open or
maps, and what another user owns stay."""
import mmap
import os

from fabriclab.measure import shm


def test_sweep_removes_only_what_the_launch_left_and_nobody_uses(tmp_path):
    (tmp_path / "before").write_bytes(b"x")
    before = shm.entries(tmp_path)
    for name in ("left", "open", "mapped"):
        (tmp_path / name).write_bytes(b"\0" * 4096)
    (tmp_path / "adir").mkdir()
    held = open(tmp_path / "open", "rb")
    with open(tmp_path / "mapped", "r+b") as f:
        mapped = mmap.mmap(f.fileno(), 4096)          # the descriptor closed: only the mapping holds it
    try:
        assert shm.sweep(before, tmp_path) == ["left"]
        assert sorted(os.listdir(tmp_path)) == ["adir", "before", "mapped", "open"]
    finally:
        held.close()
        mapped.close()
    assert sorted(shm.sweep(before, tmp_path)) == ["mapped", "open"]      # released: now they go too


def test_a_file_replaced_under_the_same_name_is_new(tmp_path):
    (tmp_path / "seg").write_bytes(b"x")
    before = shm.entries(tmp_path)
    (tmp_path / "d").mkdir()
    os.link(tmp_path / "seg", tmp_path / "d" / "keep")   # the old inode stays alive, so its number is not reused
    (tmp_path / "seg").unlink()
    (tmp_path / "seg").write_bytes(b"y")             # a new file, a new inode, the old name
    assert shm.sweep(before, tmp_path) == ["seg"]


def test_nothing_new_reads_no_process(tmp_path, monkeypatch):
    before = shm.entries(tmp_path)
    monkeypatch.setattr(shm, "in_use", lambda paths: (_ for _ in ()).throw(AssertionError("scanned /proc")))
    assert shm.sweep(before, tmp_path) == []


def test_of_tmp_only_hydra_s_topology_files_are_swept(tmp_path, monkeypatch):
    """A launch's Hydra proxy leaves /tmp/hydra_hwloc_xmlfile_XXXXXX when a rank is killed; any
    other file of /tmp, new or not, is never touched."""
    shmdir, tmp = tmp_path / "shm", tmp_path / "tmp"
    shmdir.mkdir(), tmp.mkdir()
    (tmp / "hydra_hwloc_xmlfile_old").write_text("<topology/>")
    monkeypatch.setattr(shm, "LEFT", ((shmdir, ""), (tmp, "hydra_hwloc_xmlfile_")))
    before = shm.noted()
    for name in ("hydra_hwloc_xmlfile_Ab12Cd", "someone-elses", "hydra_hwloc"):
        (tmp / name).write_text("x")
    (shmdir / "mpich_shm_1").write_text("x")
    assert sorted(shm.sweep_all(before)) == ["hydra_hwloc_xmlfile_Ab12Cd", "mpich_shm_1"]
    assert sorted(p.name for p in tmp.iterdir()) == ["hydra_hwloc", "hydra_hwloc_xmlfile_old", "someone-elses"]
