"""Provider choice and transport checks of the fabric and ucx levels, from recorded probe answers
(tests/data/probes/: `fabriclab-core --probe fabric|ucx` with the PyPI MPICH's libfabric 2.5 and UCX 1.20)."""
import json
from pathlib import Path

import pytest

from fabriclab.errors import RunError, UsageError
from fabriclab.measure import fabrics, libraries
from fabriclab.suite.benchmarks import LIBRARY_LEVELS, REGISTRY
from fabriclab.measure.plan import Sampling, build

PROBES = Path(__file__).resolve().parents[1] / "data" / "probes"


def _offer(level: str) -> fabrics.Offer:
    return fabrics.parse(level, (PROBES / f"{level}.ndjson").read_text().splitlines())


def test_probe_answers_are_read_in_the_librarys_order():
    offer = _offer("fabric")
    assert offer.library["version"] == "2.5"
    assert offer.providers == ["tcp", "tcp;ofi_rxm", "udp;ofi_rxd", "shm", "udp", "sockets", "sm2"]
    shm = next(a for a in offer.answers if a.provider == "shm")
    assert shm.inject_size == 4096 and shm.iov_limit == 4 and "rma" in shm.caps
    assert _offer("ucx").tls == ["self", "tcp", "sysv", "posix", "cma"]


def test_one_host_chooses_shm_and_says_why():
    c = fabrics.choose(_offer("fabric"), "rdm", ("msg",), one_host=True)
    assert c.provider == "shm" and "one host" in c.why


def test_across_hosts_the_first_answer_that_fits_wins():
    offer = _offer("fabric")
    assert fabrics.choose(offer, "rdm", ("msg",), one_host=False).provider == "tcp"
    # sm2 offers no RMA and udp only datagram endpoints: an RMA benchmark never lands on them
    rma = {a.provider for a in offer.answers if a.offers("rdm", ("rma",))}
    assert rma == {"tcp", "tcp;ofi_rxm", "udp;ofi_rxd", "shm", "sockets"}


def test_msg_endpoints_skip_providers_without_them():
    c = fabrics.choose(_offer("fabric"), "msg", ("msg",), one_host=True)
    assert c.provider == "tcp" and c.answer.ep == "msg"


def test_the_deprecated_sockets_provider_only_when_named():
    offer = fabrics.Offer("fabric", {"name": "libfabric"},
                          tuple(a for a in _offer("fabric").answers if a.provider == "sockets"))
    with pytest.raises(UsageError, match="no libfabric provider here offers rdm endpoints with FI_MSG"):
        fabrics.choose(offer, "rdm", ("msg",))
    assert fabrics.choose(offer, "rdm", ("msg",), requested="sockets").provider == "sockets"


def test_an_unknown_provider_is_refused_with_the_list():
    with pytest.raises(UsageError, match=r"no provider 'verbs' here; available: tcp, tcp;ofi_rxm, udp;ofi_rxd"):
        fabrics.choose(_offer("fabric"), "rdm", ("msg",), requested="verbs")


def test_a_named_provider_lacking_a_capability_is_kept_for_the_kernel_to_skip():
    # the kernel records the skip with the reason; Python does not silently pick another
    c = fabrics.choose(_offer("fabric"), "rdm", ("rma",), requested="sm2")
    assert c.provider == "sm2" and not c.answer.offers("rdm", ("rma",))


def test_tls_names_are_checked_against_the_transports_found():
    offer = _offer("ucx")
    assert fabrics.check_tls(offer, "posix+cma+self") == "posix+cma+self"
    assert fabrics.check_tls(offer, "sm+self") == "sm+self"
    assert fabrics.check_tls(offer, "^tcp") == "^tcp"
    with pytest.raises(UsageError, match=r"no transport 'rc_mlx6' here; available: self, tcp, sysv"):
        fabrics.check_tls(offer, "rc_mlx6+self")


@pytest.mark.parametrize("line, match", [
    ('{"type":"error","message":"fi_getinfo: -61"}', "probe failed: fi_getinfo"),
    ('{"type":"provider"}', "unreadable line"),
    ('{"type":"provider","provider":"shm","inject_size":"x"}', "unreadable line"),
])
def test_bad_probe_output_is_named(line, match):
    with pytest.raises(RunError, match=match):
        fabrics.parse("fabric", ['{"type":"library","name":"libfabric"}', line])


def test_a_probe_without_a_library_line_is_refused():
    with pytest.raises(RunError, match="named no library"):
        fabrics.parse("ucx", [])


def _plan(names, params=()):
    return build(names, None, None, list(params), Sampling(), False, nranks=2)


BUILT = {lv: {"available": True} for lv in LIBRARY_LEVELS}


def _probe(core, level):
    return _offer(level)


def test_settle_puts_the_chosen_provider_in_the_job_and_the_header():
    plan, rec, notes = fabrics.settle(_plan(["fabric.pingpong", "ucx.stream"], ["tls=tcp"]), "core", BUILT,
                                      one_host=True, named=True, probe_fn=_probe)
    job = next(j for j in plan.jobs if j.bench.name == "fabric.pingpong")
    assert job.params["provider"] == "shm" and job.variant == "provider=shm"
    assert rec["fabric"]["library"]["version"] == "2.5"
    assert rec["fabric"]["jobs"][0]["provider"] == "shm" and rec["fabric"]["jobs"][0]["answer"]["inject_size"] == 4096
    assert rec["ucx"]["jobs"][0]["tls"] == "tcp" and not notes


def test_settle_refuses_a_named_level_this_core_lacks_and_names_the_fix():
    built = {"fabric": {"available": False, "reason": "no libfabric headers (rdma/fabric.h) found",
                        "enable": "apt-get install libfabric-dev"}, "ucx": {"available": True}}
    with pytest.raises(UsageError, match=r"fabric level is not available: no libfabric headers.*"
                                         r"`apt-get install libfabric-dev` enables it"):
        fabrics.settle(_plan(["fabric.stream"]), "core", built, True, named=True, probe_fn=_probe)


def test_the_default_suite_leaves_an_unavailable_level_out_with_a_note():
    built = {"fabric": {"available": False, "reason": "no libfabric.so.1 found"}, "ucx": {"available": True}}
    plan = _plan(None)
    settled, rec, notes = fabrics.settle(plan, "core", built, True, named=False, probe_fn=_probe)
    assert not [j for j in settled.jobs if j.bench.level == "fabric"]
    assert [j for j in settled.jobs if j.bench.level == "ucx"]
    assert any("no libfabric.so.1 found" in n for n in notes)
    assert len(settled.jobs) == len(plan.jobs) - sum(j.bench.level == "fabric" for j in plan.jobs)


def test_an_unknown_tls_in_a_named_run_is_refused():
    with pytest.raises(UsageError, match="no transport 'bogus'"):
        fabrics.settle(_plan(["ucx.pingpong"], ["tls=bogus"]), "core", BUILT, True, named=True, probe_fn=_probe)


def test_every_fabric_benchmark_says_which_capability_it_needs():
    for b in REGISTRY.values():
        if b.level == "fabric" and b.name != "fabric.mr_reg":
            assert set(b.caps) <= {"msg", "rma", "atomic"} and b.caps, b.name
        if "put" in b.name or "get" in b.name:
            assert b.level not in ("fabric",) or b.caps == ("rma",), b.name


def test_library_search_order_prefers_the_given_directory(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "libfabric.so.1").write_bytes(b"")
    monkeypatch.setenv("FABRICLAB_LIBFABRIC", str(tmp_path))
    lib = libraries.find("fabric", None)
    if lib.reason.startswith("no libfabric headers"):
        pytest.fail("libfabric-dev is not installed; `make test` installs it")
    assert lib.available and lib.source == "env" and lib.libdir == str(tmp_path / "sub")
    assert f"-Wl,-rpath,{tmp_path / 'sub'}" in lib.ldflags


def test_a_directory_without_the_library_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("FABRICLAB_UCX", str(tmp_path))
    lib = libraries.find("ucx", None)
    assert not lib.available and "libucp.so.0" in lib.reason and "apt-get install libucx-dev" in lib.enable


def test_the_mpis_own_copy_is_found_below_its_library_directory(tmp_path):
    (tmp_path / "lib" / "mpich").mkdir(parents=True)
    (tmp_path / "lib" / "mpich" / "libucp.so.0").write_bytes(b"")
    assert libraries._holding([str(tmp_path / "lib")], "libucp.so.0") == str(tmp_path / "lib" / "mpich")
    assert libraries._holding([str(tmp_path / "nothing")], "libucp.so.0") is None


def test_recorded_answers_are_json_lines():
    for level in LIBRARY_LEVELS:
        for line in (PROBES / f"{level}.ndjson").read_text().splitlines():
            assert json.loads(line)["type"] in ("library", "provider", "transport")


def test_a_testbed_run_keeps_to_tcp_unless_told():
    plan = _plan(["fabric.stream", "ucx.stream"])
    settled, rec, _ = fabrics.settle(plan, "core", BUILT, one_host=False, named=True, probe_fn=_probe, testbed=True)
    params = {j.bench.name: j.params for j in settled.jobs}
    assert params["fabric.stream"]["provider"] == "tcp" and params["ucx.stream"]["tls"] == "tcp+self"
    assert "TCP only" in rec["fabric"]["jobs"][0]["why"]
    told = _plan(["fabric.stream"], ["provider=shm"])
    settled, rec, _ = fabrics.settle(told, "core", BUILT, one_host=False, named=True, probe_fn=_probe, testbed=True)
    assert settled.jobs[0].params["provider"] == "shm" and rec["fabric"]["jobs"][0]["why"] == "named with -p provider"


def test_the_new_levels_facts_hang_together():
    """Every benchmark of a library level takes its level's parameters, declares its memory,
    and its kernel's sources are the ones build.py compiles only where the library is found."""
    from fabriclab.measure import build
    for b in REGISTRY.values():
        if b.level == "fabric":
            assert {"provider", "ep"} <= set(b.params) and b.params["provider"].default == "", b.name
        if b.level == "ucx":
            assert "tls" in b.params, b.name
        if b.level in LIBRARY_LEVELS:
            assert b.footprint is not None and (b.min_ranks == 1) == b.name.endswith("mr_reg"), b.name
    optional = {build.level_of(p) for p in build.sources(build.source_dir())} - {None}
    assert optional == set(LIBRARY_LEVELS) == set(libraries.SPECS)


def test_a_dry_run_shows_the_provider_the_run_would_use(fake_core, capsys):
    from fabriclab.cli import main
    assert main(["run", "--dry-run", "fabric.pingpong", "-s", "8", "-L", "1", "--core", fake_core["core"],
                 "--mpiexec", fake_core["mpiexec"]]) == 0
    out = capsys.readouterr()
    assert "--param provider=shm" in out.out and "provider shm (every rank on one host" in out.err


def test_a_given_copy_that_is_not_the_mpis_is_refused_with_why(tmp_path, monkeypatch):
    """The MPI library loads its own copy and a process holds one: a level built against another
    would run on the MPI's while its record named the other. The MPI's own, however reached, is fine."""
    for d in ("given", "mpi"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "libucp.so.0").write_bytes(b"")
    monkeypatch.setattr(libraries, "mpi_lib_dirs", lambda mpicc: (str(tmp_path / "mpi"),))
    monkeypatch.setenv("FABRICLAB_UCX", str(tmp_path / "given"))
    lib = libraries.find("ucx", "mpicc")
    if lib.reason.startswith("no UCX headers"):
        pytest.fail("libucx-dev is not installed; `make test` installs it")
    assert not lib.available and "is not the copy the MPI library loads" in lib.reason, lib.reason
    (tmp_path / "link").symlink_to(tmp_path / "mpi")
    monkeypatch.setenv("FABRICLAB_UCX", str(tmp_path / "link"))
    lib = libraries.find("ucx", "mpicc")
    assert lib.available and lib.source == "env"


def test_the_core_of_one_missing_library_does_not_answer_for_another():
    """Two settings that both leave a level unbuilt, for different reasons, are two cores: the
    second run's record names its own reason, not the first's."""
    from fabriclab.measure import build
    from fabriclab.measure.mpi import MPI
    mpi = MPI("/x/mpicc", "/x/mpiexec", "mpich", "MPICH 4")
    one = {"fabric": libraries.Library("fabric", "libfabric", False, "FABRICLAB_LIBFABRIC=/nonexistent holds no x")}
    two = {"fabric": libraries.Library("fabric", "libfabric", False, "FABRICLAB_LIBFABRIC=/etc/passwd holds no x")}
    assert build.planned(mpi, one).path != build.planned(mpi, two).path
    assert build.planned(mpi, one).path == build.planned(mpi, dict(one)).path
