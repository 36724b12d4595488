"""Every option of every command given hostile values: nothing ends in a traceback.

For each subcommand the script walks its argparse options and positionals and
gives each, in a command that is otherwise valid and starts no job (`run`,
`study run`, `tune`, `congestion` and `check` with --dry-run, the readers on a small imported document, `model`
without a plot, `doctor --machine`), boundary and random values where the
option takes a number (0, -1, huge, NaN, infinities, fractions, words) and
hostile strings where it takes text (empty, blanks, escape sequences, a line
break, 10,000 characters, paths to devices and directories, a relative path
that climbs out of the working folder (to a folder of the script's own temporary
tree: the cases write where they are told, as root where run as root, so no
value may name a file of the system), separators alone, shell and format
metacharacters, links to a file and a folder outside the working folder, a YAML
alias bomb, JSON nested 30,000 deep, a 5,000-digit integer), plus an invalid
choice where it has choices; a case also fails when it wrote through a link. `run` is also
fuzzed past its dry run: its number options on a run that launches the fake
core (tests/fakes), so a value a dry run lets through but a launch cannot take
(a timeout of 1e300 s) is found too. "params" gives every parameter of every
registered benchmark (`-p KEY=VALUE`: windows, endpoints, threads, radii,
graph files, seeds, sync modes ...) --random of the hostile values of its
kind (free text, such as a graph file, every one) in a dry run at the benchmark's fewest ranks, where a value must be
taken or refused in one line before anything launches.
Each command runs in this process through fabriclab's main(); a case fails
when an exception escapes, the exit code is not 0, 1 or 2, a "Traceback"
reaches stderr, an exit 2 says other than one error line (notes before it,
such as a deprecated option's, are fabriclab's own lines), a number option
given NaN, an infinity or 1e400 does not end in exit 2 (it must be refused as
typed, not used), or the case takes more than 20 s. Seeded: the same cases every run.

Usage: python bench/fuzz_cli.py [--random N] [--seed S] [--commands run,show,...,launch,params]"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
import fakebuild  # noqa: E402
from fabriclab.cli import main as fabriclab_main  # noqa: E402
from fabriclab.cli.main import REGISTRARS, parser  # noqa: E402

NUMBERS = ["0", "-1", "1", "99999999999999999999", "1e400", "-1e400", "nan", "inf", "-inf", "0.5", "1e-320",
           "2147483648", "4294967296", "0x10", "1_000", "", " ", "abc", "1,2", "١"]
TEXTS = ["", " ", "\x1b[2J\x1b]0;owned\x07", "a\nb", "x" * 10_000, "/dev/zero", "/dev/null", "/", "missing/folders/x",
         ",", ",,", ":", "::", "=", "-", "--", "%s%n%x", "$(id)", "`id`", "../../up/x", "☃", "\t",
         "1:0:x0", "0:99999999999999999999", "K", "-1", "nan", "a=b=c", "{}", "[", "\\",
         # hostile files and links, made by _hostile_files in the working folder
         "link", "linkdir", "bomb.yaml", "deep.json", "digits.yaml"]
NONFINITE = {"nan", "inf", "-inf", "1e400", "-1e400"}
SLOW_S = 20


def _doc(folder: Path) -> str:
    """A small document to read: an OSU output imported (no MPI needed)."""
    src = folder / "osu.txt"
    src.write_text("# OSU MPI Latency Test v5.6.3\n# Size          Latency (us)\n" +
                   "".join(f"{1 << i:<10}{1.5 + i:>10.2f}\n" for i in range(12)))
    out = folder / "doc.json"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert fabriclab_main(["import", "--from", "osu", str(src), "-o", str(out)]) == 0
    return str(out)


def _hostile_files(tmp: Path) -> tuple[Path, Path]:
    """In the working folder: a link to a file outside it and a link to a folder outside it
    (nothing may be written through either), a YAML alias bomb, JSON nested 30,000 deep and a
    5,000-digit integer (each must end in one line, not gigabytes or a traceback). Returns the
    outside file and folder, which no case may change."""
    outside = tmp / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "sentinel.txt").write_text("untouched\n")
    os.symlink(outside / "sentinel.txt", "link")
    os.symlink(outside / "dir", "linkdir")
    levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'] + [
        f'{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},'
        f'*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]' for i in range(8)]
    Path("bomb.yaml").write_text("\n".join(levels) + "\n")
    Path("deep.json").write_text("[" * 30_000 + "]" * 30_000)
    Path("digits.yaml").write_text("value: " + "9" * 5_000 + "\n")
    return outside / "sentinel.txt", outside / "dir"


def _wrote_outside(sentinel: Path, folder: Path) -> str | None:
    """A problem if a case changed the file or folder outside the working folder."""
    if sentinel.is_symlink() or sentinel.read_text() != "untouched\n" or any(folder.iterdir()):
        for x in folder.iterdir():
            x.unlink() if not x.is_dir() or x.is_symlink() else __import__("shutil").rmtree(x)
        sentinel.unlink()
        sentinel.write_text("untouched\n")
        return "wrote outside the named path, through a link"
    return None


def bases(doc: str, tmp: Path) -> dict:
    """Per command, a valid command line that starts no job, and options not to fuzz (they would
    start one, change the machine, or only print help); "launch" is `run` that launches the fake
    core, its number options fuzzed."""
    fake = fakebuild.fake_core(tmp, process=True)
    return {
        "run": (["run", "message.pingpong", "-s", "8", "--dry-run"], set()),
        "list": (["list"], set()),
        "show": (["show", doc], set()),
        "compare": (["compare", doc, doc], set()),
        "import": (["import", "--from", "osu", str(tmp / "osu.txt"), "-o", str(tmp / "imp.json")], set()),
        "report": (["report", doc, "-o", str(tmp / "r.html")], set()),
        "plot": (["plot", doc, "-o", str(tmp / "p.svg")], set()),
        "doctor": (["doctor", "--machine"], {"--tune", "--reset", "--aa", "--build"}),
        "calibrate": (["calibrate", doc, "--stream"], set()),
        "model": (["model", "--system", "sci-ring", "--no-plot"], set()),
        "study": (["study", "run", "kurmann-stricker", "--dry-run"], set()),
        "tune": (["tune", "allreduce", "--dry-run"], set()),
        "congestion": (["congestion", "-n", "4", "--dry-run"], set()),
        "check": (["check", "-n", "4", "--dry-run", "-o", str(tmp / "check")], set()),
        "launch": (["run", "message.pingpong", "-s", "8", "-L", "1", "-q", "-o", str(tmp / "launch.json"),
                    "--core", fake["core"], "--mpiexec", fake["mpiexec"]], set()),
    }


def _kind(action: argparse.Action) -> str:
    name = getattr(action.type, "__name__", "")
    return "number" if action.type in (int, float) or name in ("integer", "number") else "text"


def cases(name: str, base: list, skip: set, rng: random.Random, extra: int) -> list[list[str]]:
    """The command lines for one command: every option and positional given every hostile
    value of its kind, `extra` random combinations of two; for "launch", run's number
    options alone."""
    command = "run" if name in ("study", "launch") else name     # a study's options are run's
    sub = parser(command)._subparsers._group_actions[0].choices[command]
    out, singles = [], []
    for a in sub._actions:
        if isinstance(a, (argparse._HelpAction, argparse._VersionAction)) or a.nargs == 0:
            continue
        flag = a.option_strings[-1] if a.option_strings else None
        if flag in skip or (name == "launch" and (_kind(a) != "number" or flag is None)):
            continue
        values = NUMBERS if _kind(a) == "number" else TEXTS
        if a.choices:
            values = values + ["no-such-choice"]
        for v in values:
            singles.append([flag, v] if flag else None)
            if flag is None:          # a positional: replace the base's first positional after the command
                pos = [x for x in base[1:] if not x.startswith("-")]
                if pos:
                    i = base.index(pos[0], 1)
                    out.append(base[:i] + [v] + base[i + 1:])
            else:
                out.append(base + [flag, v])
    flags = [s for s in singles if s]
    for _ in range(extra if flags else 0):
        a, b = rng.sample(flags, 2) if len(flags) > 1 else (flags[0], flags[0])
        out.append(base + a + b)
    return out


def one(argv: list[str], refused: bool = False) -> tuple[str | None, float]:
    """(a problem or None, seconds) of one command line run through main(); with `refused`,
    any exit but 2 is one."""
    out, err = io.StringIO(), io.StringIO()
    t0 = time.monotonic()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = fabriclab_main(argv)
    except BaseException as e:              # noqa: BLE001: what escapes main() is the finding
        return f"{type(e).__name__}: {str(e)[:120]}", time.monotonic() - t0
    seconds = time.monotonic() - t0
    text = err.getvalue()
    if rc not in (0, 1, 2):
        return f"exit {rc}", seconds
    if "Traceback" in text:
        return "traceback on stderr", seconds
    lines = text.strip().splitlines()
    errors = [ln for ln in lines if ln.startswith("fabriclab: error: ")]
    if rc == 2 and (len(errors) != 1 or any(not ln.startswith("fabriclab: ") for ln in lines)):
        return f"exit 2 with {len(errors)} error lines of {len(lines)}", seconds
    if refused and rc != 2:
        return f"a number that is not finite accepted (exit {rc})", seconds
    if seconds > SLOW_S:
        return f"took {seconds:.1f} s", seconds
    return None, seconds


def _nonfinite(name: str, argv: list[str]) -> bool:
    """Whether argv gives a number option of `name` a value that is not finite."""
    command = "run" if name in ("study", "launch", "params") else name
    sub = parser(command)._subparsers._group_actions[0].choices[command]
    numbers = {s for a in sub._actions if _kind(a) == "number" for s in a.option_strings}
    return any(f in numbers and v in NONFINITE for f, v in zip(argv, argv[1:]))


def param_cases(rng: random.Random, extra: int) -> list[list[str]]:
    """`run BENCH -p KEY=VALUE --dry-run` for every benchmark's every parameter: `extra`
    hostile values of its kind (numbers for an integer, texts for text, and an invalid
    choice), on the fewest ranks it takes (a stencil its grid's)."""
    from fabriclab.suite.benchmarks import REGISTRY
    out = []
    for name, b in sorted(REGISTRY.items()):
        ranks = ["-n", str(max(b.min_ranks, 2))]
        for key, prm in b.params.items():
            # free text (a graph file, a provider, UCX's transports) takes every hostile text and file
            values = (rng.sample(NUMBERS, min(extra, len(NUMBERS))) if prm.integer else
                      rng.sample(TEXTS, min(extra, len(TEXTS))) if prm.choices else list(TEXTS))
            values += ["no-such-choice"] if prm.choices else []
            out += [["run", name, *ranks, "-p", f"{key}={v}", "--dry-run"] for v in values]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--random", type=int, default=20, help="random pairs of options per command (default 20)")
    ap.add_argument("--seed", type=int, default=30)
    ap.add_argument("--commands", default=",".join([n for n, _ in REGISTRARS if n not in ("testbed", "reproduce")]
                                                    + ["launch", "params"]))
    opts = ap.parse_args()
    rng = random.Random(opts.seed)
    tmp = Path(tempfile.mkdtemp(prefix="fuzz-cli-"))
    # Outputs a case names relatively land here, two folders down, so that "../../up/x" stays inside
    # tmp: the cases run as this user (root, often) and write where they are told.
    os.makedirs(tmp / "cwd" / "below")
    os.chdir(tmp / "cwd" / "below")
    doc = _doc(tmp)
    sentinel, folder = _hostile_files(tmp)
    table = bases(doc, tmp)
    total, problems, slowest = 0, [], (0.0, None)
    t0 = time.monotonic()
    for name in opts.commands.split(","):
        base, skip = table.get(name, ([], set()))
        for argv in param_cases(rng, opts.random) if name == "params" else cases(name, base, skip, rng, opts.random):
            total += 1
            problem, s = one(argv, _nonfinite(name, argv))
            problem = problem or _wrote_outside(sentinel, folder)
            slowest = max(slowest, (s, argv), key=lambda x: x[0])
            if problem:
                problems.append((problem, argv))
        print(f"{name:<10} {total:>6} cases so far, {len(problems)} problems", flush=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\n{total} command lines in {time.monotonic() - t0:.0f} s (seed {opts.seed}); the slowest "
          f"{slowest[0]:.2f} s; peak resident set {rss:.0f} MiB")
    for problem, argv in problems:
        print(f"FAIL  {problem}: fabriclab {' '.join(repr(a) if not a.isprintable() or ' ' in a else a for a in argv)[:300]}")
    print("PASS  no traceback, every exit 0, 1 or 2, one error line for each exit 2" if not problems else
          f"FAIL  {len(problems)} of {total}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
