from dataclasses import replace

import pytest

from fabriclab.errors import UsageError
from fabriclab.measure import protocol
from fabriclab.measure.launch import YIELDING_MPICH, command, make_spec, wrong_world

CORE = ["/cache/fabriclab-core", "message.pingpong", "--sizes", "0"]


def test_mpich_local():
    spec = make_spec("mpiexec", "/venv/bin/mpiexec", "mpich", 2)
    argv, env = command(spec, CORE, local_cpus=2, is_root=True)
    assert argv == ["/venv/bin/mpiexec", "-n", "2", "-bind-to", "core", *CORE]
    assert env == {}


def test_mpich_on_an_oversubscribed_host_runs_its_collectives_through_yielding_algorithms(monkeypatch):
    """More ranks than cores: MPICH's shared-memory collectives spin and stall (launch.py), so
    each of them is sent to MPICH's generic algorithms, unless the run or the user sets it."""
    for key in YIELDING_MPICH:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("MPIR_CVAR_BCAST_POSIX_INTRA_ALGORITHM", "release_gather")
    spec = replace(make_spec("mpiexec", "mpiexec", "mpich", 4), env={"MPIR_CVAR_REDUCE_POSIX_INTRA_ALGORITHM": "auto"})
    _, env = command(spec, CORE, local_cpus=2, is_root=False)
    assert {k: v for k, v in env.items() if k in YIELDING_MPICH} == {
        k: "auto" if "_REDUCE_" in k and "IREDUCE" not in k else "mpir" for k in YIELDING_MPICH if "_BCAST_" not in k}
    # ranks that fit, or ranks spread over hosts: MPICH's own choice
    for spec in (make_spec("mpiexec", "mpiexec", "mpich", 2), make_spec("mpiexec", "mpiexec", "mpich", 4, hosts="a,b")):
        assert not set(command(spec, CORE, local_cpus=2, is_root=False)[1]) & set(YIELDING_MPICH)


def test_mpich_hosts_and_ppn():
    spec = make_spec("mpiexec", "mpiexec", "mpich", 4, hosts="a,a,b,b", ppn=2)
    argv, _ = command(spec, CORE, local_cpus=2, is_root=False)
    assert argv[:7] == ["mpiexec", "-n", "4", "-hosts", "a:2,b:2", "-ppn", "2"]


def test_mpich_hostfile(tmp_path):
    hf = tmp_path / "hosts"
    hf.write_text("a\nb\n")
    argv, _ = command(make_spec("mpiexec", "mpiexec", "mpich", 2, hostfile=str(hf)), CORE)
    assert argv[3:5] == ["-f", str(hf)]


def test_openmpi_root_and_oversubscribe():
    spec = make_spec("mpiexec", "/o/bin/mpiexec", "openmpi", 4)
    argv, env = command(spec, CORE, local_cpus=2, is_root=True)
    assert argv[:5] == ["/o/bin/mpiexec", "-n", "4", "--map-by", ":OVERSUBSCRIBE"]
    assert env["OMPI_ALLOW_RUN_AS_ROOT"] == "1" and env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] == "1"
    assert env["OMPI_MCA_osc"] == "^ucx" and env["OMPI_MCA_btl"] == "^ofi"


def test_openmpi_one_host_defaults_yield_to_the_users_settings(monkeypatch):
    monkeypatch.setenv("OMPI_MCA_btl", "self,sm,tcp")
    spec = replace(make_spec("mpiexec", "/o/bin/mpiexec", "openmpi", 2), env={"OMPI_MCA_osc": "sm"})
    _, env = command(spec, CORE, local_cpus=2, is_root=False)
    assert env["OMPI_MCA_osc"] == "sm" and "OMPI_MCA_btl" not in env


def test_openmpi_not_root_fits_no_extras():
    argv, env = command(make_spec("mpiexec", "mpiexec", "openmpi", 2), CORE, local_cpus=2, is_root=False)
    assert argv == ["mpiexec", "-n", "2", "--bind-to", "core", *CORE]
    assert "OMPI_ALLOW_RUN_AS_ROOT" not in env


def test_openmpi_hosts_become_slots_and_keep_ucx():
    spec = make_spec("mpiexec", "mpiexec", "openmpi", 4, hosts="a,a,b,b")
    argv, env = command(spec, CORE, local_cpus=2, is_root=False)
    assert argv[3:5] == ["--host", "a:2,b:2"]
    assert "--map-by" not in argv and "OMPI_MCA_osc" not in env and "OMPI_MCA_btl" not in env


def test_slurm(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: "/usr/bin/srun" if name == "srun" else None)
    spec = make_spec("srun", "mpiexec", "mpich", 4, hosts="n1,n2", ppn=2, extra=["--mpi=pmix"])
    argv, env = command(spec, CORE)
    assert argv == ["/usr/bin/srun", "-n", "4", "--kill-on-bad-exit=1", "--cpu-bind=cores", "--nodelist=n1,n2",
                    "--ntasks-per-node=2", "--mpi=pmix", *CORE]


def test_auto_picks_srun_in_allocation(monkeypatch):
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    monkeypatch.setattr("shutil.which", lambda name: "/usr/bin/srun")
    assert make_spec("auto", "mpiexec", "mpich", 2).launcher == "srun"
    monkeypatch.delenv("SLURM_JOB_ID")
    assert make_spec("auto", "mpiexec", "mpich", 2).launcher == "mpiexec"


def test_missing_srun_is_usage_error(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(UsageError, match="srun not found"):
        make_spec("srun", "mpiexec", "mpich", 2)


@pytest.mark.parametrize("kw", [dict(nranks=0), dict(nranks=2, ppn=0), dict(nranks=2, hostfile="/nonexistent")])
def test_bad_launch_options(kw):
    with pytest.raises(UsageError):
        make_spec("mpiexec", "mpiexec", "mpich", **kw)


@pytest.mark.parametrize("flavour,bound,unbound", [("mpich", ["-bind-to", "core"], []),
                                                   ("openmpi", ["--bind-to", "core"], ["--bind-to", "none"])])
def test_binding_by_default_unless_ranks_outnumber_cores(flavour, bound, unbound):
    def flags(spec):
        argv, _ = command(spec, CORE, local_cpus=2, is_root=False)
        return [a for a in argv if a in ("-bind-to", "--bind-to", "core", "none")]
    assert flags(make_spec("mpiexec", "mpiexec", flavour, 2)) == bound
    assert flags(make_spec("mpiexec", "mpiexec", flavour, 4)) == unbound          # 4 ranks on 2 cores
    assert flags(make_spec("mpiexec", "mpiexec", flavour, 2, bind="none")) == unbound
    assert flags(make_spec("mpiexec", "mpiexec", flavour, 8, hosts="a,b,c,d,e,f,g,h")) == bound
    assert flags(make_spec("mpiexec", "mpiexec", flavour, 8, hosts="a,a,a,a,b,b,b,b")) == unbound


def test_bad_binding():
    with pytest.raises(UsageError, match="--bind must be core or none"):
        make_spec("mpiexec", "mpiexec", "mpich", 2, bind="sideways")


@pytest.fixture
def srun(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: "/usr/bin/srun" if name == "srun" else None)
    for var in ("OPAL_PREFIX", "PMIX_MCA_psec"):
        monkeypatch.delenv(var, raising=False)


@pytest.mark.parametrize("flavour,plugin,env", [
    ("mpich", "pmi2", {}), ("intel", "pmi2", {}),
    ("openmpi", "pmix", {"OPAL_PREFIX": "/o", "PMIX_MCA_psec": "native"}), ("unknown", None, {})])
def test_srun_gets_the_plugin_and_environment_of_the_mpi(srun, flavour, plugin, env):
    spec = make_spec("srun", "/o/bin/mpiexec", flavour, 2)
    argv, got_env = command(spec, CORE)
    assert (spec.mpi_plugin, spec.mpi_plugin_from) == (plugin, "fabriclab" if plugin else None)
    assert [a for a in argv if a.startswith("--mpi")] == ([f"--mpi={plugin}"] if plugin else [])
    assert got_env == env and spec.to_dict()["env"] == env  # recorded in the run header's launcher block


def test_srun_leaves_the_users_open_mpi_settings(srun, monkeypatch):
    monkeypatch.setenv("OPAL_PREFIX", "/site/ompi")
    _, env = command(make_spec("srun", "/o/bin/mpiexec", "openmpi", 2), CORE)
    assert env == {"PMIX_MCA_psec": "native"}


def test_srun_plugin_override(srun):
    spec = make_spec("srun", "mpiexec", "mpich", 2, srun_mpi="pmix")
    assert (spec.mpi_plugin, spec.mpi_plugin_from) == ("pmix", "--srun-mpi")
    assert "--mpi=pmix" in command(spec, CORE)[0]
    for extra, plugin in ((["--mpi=none"], "none"), (["--mpi", "pmix_v4"], "pmix_v4")):
        spec = make_spec("srun", "mpiexec", "mpich", 2, extra=extra)
        argv, _ = command(spec, CORE)
        assert (spec.mpi_plugin, spec.mpi_plugin_from) == (plugin, "--launcher-arg")
        assert sum(a.startswith("--mpi") for a in argv) == 1  # the user's, not a second one
    with pytest.raises(UsageError, match="once"):
        make_spec("srun", "mpiexec", "mpich", 2, extra=["--mpi=none"], srun_mpi="pmi2")
    with pytest.raises(UsageError, match="plugin name"):
        make_spec("srun", "mpiexec", "mpich", 2, srun_mpi="pmi2 --x")
    with pytest.raises(UsageError, match="applies to --launcher srun"):
        make_spec("mpiexec", "mpiexec", "mpich", 2, srun_mpi="pmi2")


def test_wrong_world_names_the_plugin_to_use(srun):
    def msg(flavour, **kw):
        return wrong_world(make_spec("srun", "mpiexec", flavour, 4, **kw), 1)
    assert msg("openmpi", srun_mpi="pmi2") == (
        "srun started 4 separate MPI jobs of 1 rank each, not one job of 4 ranks: srun --mpi=pmi2 does not "
        "start Open MPI's ranks as one job; use --srun-mpi pmix")
    assert msg("mpich", extra=["--mpi=none"]).endswith("use --srun-mpi pmi2 in place of --launcher-arg=--mpi=none")
    assert msg("mpich").endswith("srun --mpi=pmi2 does not start MPICH's ranks as one job; choose the plugin "
                                 "the MPI was built for with --srun-mpi (srun --mpi=list shows them)")
    assert "srun without --mpi" in msg("unknown")
    local = wrong_world(make_spec("mpiexec", "/x/mpiexec", "mpich", 2), 1)
    assert local.startswith("mpiexec started 2 separate") and "/x/mpiexec does not belong" in local
    assert "\n" not in local


def test_a_hello_cut_by_the_launcher_still_gives_its_world_size():
    """slurmstepd forwards a task's output 1 KiB at a time, so N singletons' hello lines arrive cut
    and interleaved; the core writes the world's size first, so each cut piece still shows it."""
    whole = ('{"type":"hello","core_version":"0.3.0","bench":"memory.memcpy","ranks":1,"hosts":["n1"],'
             '"mpi_library":"' + "x" * 2000 + '"}')
    cut = whole[:1024] + whole[:300]
    assert protocol.parse_line(cut) is None and protocol.cut_hello_ranks(cut) == 1
    assert protocol.cut_hello_ranks(whole.replace('"ranks":1', '"ranks":16')) == 16
    assert protocol.cut_hello_ranks('ime":2e-05,"validate":false}') is None
    assert protocol.cut_hello_ranks('{"type":"point","ranks":1}') is None


def test_error_lines_carry_the_world_size():
    assert protocol.parse_line('{"type":"error","message":"m","ranks":1}') == protocol.CoreError("m", 1)
    assert protocol.parse_line('{"type":"error","message":"m"}') == protocol.CoreError("m", None)
