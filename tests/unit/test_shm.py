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
