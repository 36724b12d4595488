import pytest

from fabriclab.errors import UsageError
from fabriclab.measure.launch import command, make_spec

CORE = ["/cache/fabriclab-core", "message.pingpong", "--sizes", "0"]


def test_mpich_local():
    spec = make_spec("mpiexec", "/venv/bin/mpiexec", "mpich", 2)
    argv, env = command(spec, CORE, local_cpus=2, is_root=True)
    assert argv == ["/venv/bin/mpiexec", "-n", "2", "-bind-to", "core", *CORE]
    assert env == {}


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
    assert env["OMPI_MCA_osc"] == "^ucx"


def test_openmpi_not_root_fits_no_extras():
    argv, env = command(make_spec("mpiexec", "mpiexec", "openmpi", 2), CORE, local_cpus=2, is_root=False)
    assert argv == ["mpiexec", "-n", "2", "--bind-to", "core", *CORE]
    assert "OMPI_ALLOW_RUN_AS_ROOT" not in env


def test_openmpi_hosts_become_slots_and_keep_ucx():
    spec = make_spec("mpiexec", "mpiexec", "openmpi", 4, hosts="a,a,b,b")
    argv, env = command(spec, CORE, local_cpus=2, is_root=False)
    assert argv[3:5] == ["--host", "a:2,b:2"]
    assert "--map-by" not in argv and "OMPI_MCA_osc" not in env


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
