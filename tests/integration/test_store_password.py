"""A PostgreSQL store's password never leaves the command line: a run with --store on a URL that
holds one (the tests' server trusts the socket, so it accepts any) writes a document, prints, and
stores rows, and none of them holds the password; `history` reading it neither."""
import subprocess
import sys

from postgres import postgres_server  # noqa: F401  (tests/support: fixture)

SECRET = "s3cretPW-not-shown"


def fl(*argv, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fabriclab.cli", *map(str, argv)], capture_output=True, text=True,
                          timeout=120, **kw)


def test_a_run_with_a_password_in_its_store_url_keeps_it_nowhere(fake_core_process, tmp_path,
                                                                  postgres_server):  # noqa: F811
    url = postgres_server.create_database().replace("postgresql:///", f"postgresql://postgres:{SECRET}@/", 1)
    out = tmp_path / "r.json"
    p = fl("run", "message.pingpong", "-s", "8", "-L", "1", "--core", fake_core_process["core"],
           "--mpiexec", fake_core_process["mpiexec"], "-q", "--store", url, "-o", out)
    assert p.returncode == 0, p.stderr
    assert "added to the store" in p.stderr and "***" in p.stderr
    assert SECRET not in p.stdout + p.stderr
    assert SECRET not in out.read_text() and SECRET not in out.with_suffix(".ndjson").read_text()
    assert "--store" in out.read_text()                 # the option is recorded, its password hidden
    listed = fl("history", "list", "--store", url, "-f", "json")
    assert listed.returncode == 0 and "r@" in listed.stdout and SECRET not in listed.stdout + listed.stderr
    dump = fl("history", "export", "--store", url)
    assert dump.returncode == 0 and SECRET not in dump.stdout + dump.stderr
    report = tmp_path / "h.html"
    assert fl("history", "report", "--store", url, "-o", report).returncode == 0
    assert SECRET not in report.read_text()
