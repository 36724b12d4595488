"""The cabling test of `fabriclab check`: the fabric as ibnetdiscover reads it now against
the site's reference network file (an earlier `topology import`), by topology/diff.py's
comparison. It launches nothing, and runs before the tests that do.

It fails for every cable flagged degraded now (its active width and speed below what both
its ends run: topology/ibnet.py), named with its ports; every cable of the reference that
is missing now; and every cable whose rate changed, unless it runs faster where the
reference flagged it degraded (a repair). Cables, hosts and switches added, and those
repairs, are reported. Current nodes take the reference's names by GUID, so a reference
imported with a hosts map compares name for name."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from .. import outputs
from ..datafile import read_data_file
from ..errors import UsageError
from ..inputs import read_bytes
from ..topology import diff, ibnet
from ..topology.cables import Network, label, rate, read

DISCOVER = "discover"            # --fabric discover: run ibnetdiscover now
STDIN = "-"
LISTED = 20                      # reported lines (cables added, repaired) shown; the rest counted
SAVED = "cabling-fabric.txt"     # the fabric's text as read, kept in the check's folder


class Cabling:
    """The reference network (`--network`) and where the fabric is read from (`--fabric`: a
    saved ibnetdiscover output, `-` for stdin, or `discover`); `timeout` bounds ibnetdiscover."""

    def __init__(self, reference: str, fabric: str, timeout: float):
        self.reference, self.fabric, self.timeout = reference, fabric, timeout
        self.ref: Network | None = None           # the reference, read by check()
        self.text: str | None = None              # the fabric's text, read by check()
        self.now: Network | None = None
        self.actives: list = []                   # per link of `now`: (active, what both ends run)

    def check(self, discover: bool = True) -> None:
        """The reference loaded and the fabric read, before anything launches; bad input,
        and ibnetdiscover missing, failing or timing out, end in one line (UsageError).
        Without `discover`, ibnetdiscover is only looked for (a dry run)."""
        data = read_data_file(self.reference, "network file")
        self.ref = read(data, self.reference)
        if all(c["ports"] is None for c in self.ref.cables):
            raise UsageError(f"{self.reference}: its cables name no ports (a Slurm topology or a file written by "
                             "hand); the cabling test compares cables port by port: give a network imported from "
                             "ibnetdiscover with --network")
        if self.fabric == DISCOVER:
            if not discover:
                _program()
                return
            self.text = self._discover()
        else:
            raw = sys.stdin.buffer.read(ibnet.MAX_TEXT + 1) if self.fabric == STDIN else \
                read_bytes(self.fabric, "ibnetdiscover output", ibnet.MAX_TEXT + 1)
            self.text = _decoded(raw, self.where)
        self.now, self.actives = self._read()

    @property
    def where(self) -> str:
        return {DISCOVER: "ibnetdiscover", STDIN: "stdin"}.get(self.fabric, self.fabric)

    def commands(self) -> list[str]:
        """What the test runs: ibnetdiscover, or nothing (a saved output)."""
        return [_program()] if self.fabric == DISCOVER else []

    def _discover(self) -> str:
        try:
            p = subprocess.run([_program()], stdin=subprocess.DEVNULL, capture_output=True, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            raise UsageError(f"check: cabling: ibnetdiscover did not finish reading the fabric in {self.timeout:g} s "
                             "(--timeout)") from None
        except OSError as e:
            raise UsageError(f"check: cabling: cannot run ibnetdiscover: {e.strerror}") from None
        if p.returncode != 0:
            said = p.stderr.decode("utf-8", "replace").strip().splitlines()
            last = "".join(ch if ch.isprintable() else "?" for ch in said[-1][:200]) if said else ""
            raise UsageError(f"check: cabling: ibnetdiscover failed (exit {p.returncode})" + (f": {last}" if last else ""))
        return _decoded(p.stdout, self.where)

    def _read(self) -> tuple[Network, list]:
        """The fabric now as a network, its nodes named by the reference's GUIDs, and each
        link's (active width and speed, what both ends run where degraded)."""
        names = {}
        for c in self.ref.cables:
            for end, g in zip(c["ends"], c["guids"] or (None, None)):
                if g is not None:
                    names[g] = end
        actives: list = []
        data = ibnet.read(self.text, self.where, names, actives)
        return read(data, f"{self.where} (as read)"), actives

    def judge(self, folder: Path) -> tuple[bool, list, list, str]:
        """(passed, failing items, figures, the saved fabric's path): the fabric's text is
        written into the check's folder."""
        saved = folder / SAVED
        outputs.write(saved, self.text)
        items, figures = findings(self.ref, self.now, self.actives, self.reference)
        return not items, items, figures, str(saved)


def findings(ref: Network, now: Network, actives: list, ref_where: str) -> tuple[list, list]:
    """(failing items, figures) of the fabric now against the reference (see the module)."""
    found = diff.compare(ref, now)
    changed = {c.new["index"]: c.old for c in found if c.change == "rate"}
    missing = [f"cable {c.name}: missing ({rate(c.old['rate_MBps'])} in the reference)"
               for c in found if c.what == "cable" and c.sign == "-"]
    degraded, rated, reported = [], [], []
    for c in now.cables:
        was = changed.get(c["index"])
        if c["degraded"] is not None:
            active, runs = actives[c["index"]]
            degraded.append(f"cable {label(c)}: active {active}, where both ends run {runs} on other cables"
                            + (f"; {rate(was['rate_MBps'])} in the reference" if was else ""))
        elif was is not None:
            line = f"cable {label(c)}: {rate(c['rate_MBps'])}, {rate(was['rate_MBps'])} in the reference"
            if was["degraded"] is not None and c["rate_MBps"] > was["rate_MBps"]:
                reported.append(f"{line}, which flagged it degraded: repaired")
            else:
                rated.append(line)
    added = [f"cable {c.name}: added ({rate(c.new['rate_MBps'])}), not in the reference"
             for c in found if c.what == "cable" and c.sign == "+"]
    reported += added + [f"{c.what} {c.name}: {'missing' if c.sign == '-' else 'added'}"
                         for c in found if c.what != "cable"]
    cables = sum(c["count"] for c in now.cables)
    figures = [f"cabling: {len(now.hosts):,} hosts, {len(now.switches):,} switches, {cables:,} cables against "
               f"{ref_where}: {len(missing)} missing, {len(degraded)} degraded, {len(rated)} changed in rate, "
               f"{len(added)} added"]
    figures += [f"  {line}" for line in reported[:LISTED]]
    if len(reported) > LISTED:
        figures.append(f"  and {len(reported) - LISTED:,} more")
    return missing + degraded + rated, figures


def _program() -> str:
    found = shutil.which("ibnetdiscover")
    if not found:
        raise UsageError("check: cabling: ibnetdiscover is not on the PATH (infiniband-diags); give its saved "
                         "output with --fabric FILE")
    return found


def _decoded(raw: bytes, where: str) -> str:
    if len(raw) > ibnet.MAX_TEXT:
        raise UsageError(f"{where}: larger than {ibnet.MAX_TEXT >> 20} MiB, more than any fabric's "
                         "ibnetdiscover output")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{where}: not UTF-8 text: not ibnetdiscover output") from None
