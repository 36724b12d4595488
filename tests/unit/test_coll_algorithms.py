"""The collectives' algorithm variants: the probe's lines read into controls,
a name checked against what the library accepts (one line with the accepted
names otherwise), the environment each MPI reads it from, and a plan's jobs
given that environment (`all`: one job per name), with auto setting nothing."""
import pytest

from fabriclab.errors import RunError, UsageError
from fabriclab.measure import coll_algorithms as ca
from fabriclab.measure.plan import Sampling, build

LINES = [
    'noise before the JSON',
    '{"type":"control","call":"MPI_Allreduce","form":"blocking","control":"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM",'
    '"names":["auto","ring","tree"]}',
    '{"type":"control","call":"MPI_Allreduce","form":"nonblocking","control":"MPIR_CVAR_IALLREDUCE_INTRA_ALGORITHM",'
    '"names":["auto","sched_ring"]}',
    '{"type":"control","call":"MPI_Bcast","form":"blocking","control":"coll_tuned_bcast_algorithm",'
    '"names":["ignore","binomial"]}',
]
CONTROLS = ca.parse(LINES)


def test_the_probe_lines_become_controls_per_call_and_form():
    assert set(CONTROLS) == {("MPI_Allreduce", "blocking"), ("MPI_Allreduce", "nonblocking"), ("MPI_Bcast", "blocking")}
    assert CONTROLS[("MPI_Allreduce", "blocking")].names == ("auto", "ring", "tree")
    with pytest.raises(RunError, match="probe failed: no MPI_T"):
        ca.parse(['{"type":"error","message":"no MPI_T"}'])
    with pytest.raises(RunError, match="unreadable"):
        ca.parse(['{"type":"control","call":"MPI_Bcast"}'])


def test_a_name_the_library_does_not_know_is_refused_with_the_accepted_ones():
    with pytest.raises(UsageError) as e:
        ca.check("coll.allreduce", "MPI_Allreduce", "blocking", "bogus", CONTROLS)
    assert "'bogus'" in str(e.value) and "accepted: auto, ring, tree, all" in str(e.value)
    with pytest.raises(UsageError, match="no algorithm control for MPI_Bcast in the nonblocking form "
                                         r"\(it has one for: blocking\)"):
        ca.check("coll.bcast", "MPI_Bcast", "nonblocking", "binomial", CONTROLS)
    assert ca.check("coll.allreduce", "MPI_Allreduce", "blocking", "ring", CONTROLS).name.startswith("MPIR_CVAR")


def test_each_mpi_reads_its_control_from_its_own_variables():
    mpich = CONTROLS[("MPI_Allreduce", "blocking")]
    assert mpich.environment("mpich", "ring") == {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "ring"}
    tuned = CONTROLS[("MPI_Bcast", "blocking")]
    assert tuned.environment("openmpi", "binomial") == {"OMPI_MCA_coll_tuned_bcast_algorithm": "binomial",
                                                        "OMPI_MCA_coll_tuned_use_dynamic_rules": "1"}
    nbc = ca.Control("MPI_Bcast", "nonblocking", "coll_libnbc_ibcast_algorithm", ("ignore", "chain"))
    assert nbc.environment("openmpi", "chain") == {"OMPI_MCA_coll_libnbc_ibcast_algorithm": "chain"}
    with pytest.raises(UsageError, match="leave algorithm=auto"):
        mpich.environment("unknown", "ring")


def _plan(*params):
    return build(["coll.allreduce"], "8", None, list(params), Sampling(), False, 2)


def test_a_plan_gets_the_environment_and_all_expands_to_every_name():
    plan, record = ca.settle(_plan("algorithm=ring,auto"), "core", "mpich", probe_fn=lambda core: CONTROLS)
    env = {j.params["algorithm"]: dict(j.env) for j in plan.jobs}
    assert env == {"ring": {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "ring"}, "auto": {}}
    assert [r["variant"] for r in record["coll"]["jobs"]] == ["algorithm=ring"]
    plan, _ = ca.settle(_plan("algorithm=all", "form=nonblocking"), "core", "mpich", probe_fn=lambda core: CONTROLS)
    assert [j.params["algorithm"] for j in plan.jobs] == ["auto", "sched_ring"]
    assert all(dict(j.env)["MPIR_CVAR_IALLREDUCE_INTRA_ALGORITHM"] == j.params["algorithm"] for j in plan.jobs)
    assert plan.jobs[1].to_dict()["env"] == {"MPIR_CVAR_IALLREDUCE_INTRA_ALGORITHM": "sched_ring"}


def test_auto_alone_asks_nothing_of_the_library():
    def no_probe(core):
        raise AssertionError("auto must not probe")
    plan = _plan()
    assert ca.settle(plan, "core", "mpich", probe_fn=no_probe) == (plan, {})
