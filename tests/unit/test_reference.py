"""The seed studies' published values: every shipped file loads, every value is
found as printed in its seed's text, and a malformed file is refused in one line."""
import re
import unicodedata
from pathlib import Path

import pytest
import yaml

from fabriclab.errors import UsageError
from fabriclab.studies import reference as R

# The seed texts live beside the repository (../shared/seeds), in CI as here.
SEEDS = Path(__file__).resolve().parents[2].parent / "shared" / "seeds"
STUDIES = {"kurmann-stricker": "000", "millich-george-oral": "001", "hellwagner-via": "002",
           "george-todd-phipps": "003", "petrini-quadrics": "004"}


def _norm(text: str) -> str:
    """NFKC (µ and μ alike) with runs of whitespace as one space: the seeds break lines anywhere."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def _seed_text(seed: str) -> str:
    found = sorted(SEEDS.glob(f"{seed}_*.txt"))
    assert len(found) == 1, f"seed {seed} not found once in {SEEDS}"
    return _norm(found[0].read_text(encoding="utf-8"))


def test_every_study_has_a_file_that_loads():
    assert R.names() == sorted(STUDIES)
    for study, seed in STUDIES.items():
        ref = R.load(study)
        assert (ref.study, ref.seed) == (study, seed)
        assert ref.title and ref.authors and len(ref.values) >= 20


@pytest.mark.parametrize("study", sorted(STUDIES))
def test_every_printed_value_is_in_its_seed(study):
    ref = R.load(study)
    text = _seed_text(ref.seed)
    missing = [v.id for v in ref.values if _norm(v.printed) not in text]
    assert not missing, f"{study}: printed strings not found in seed {ref.seed}: {missing}"
    title = _norm(ref.title).lower()
    assert title in text.lower()


@pytest.mark.parametrize("study", sorted(STUDIES))
def test_every_value_is_the_number_printed(study):
    """Where the printed quote has digits, the value is one of its numbers (a typo would not be)."""
    wrong = []
    for v in R.load(study).values:
        numbers = {float(n) for n in re.findall(r"\d+(?:\.\d+)?", v.printed)}
        if numbers and float(v.value) not in numbers:
            wrong.append(f"{v.id}: {v.value} not in {v.printed!r}")
    assert not wrong, wrong


@pytest.mark.parametrize("study,id,si,si_unit", [
    ("kurmann-stricker", "bip-mpi-peak", 126e6, "B/s"),
    ("kurmann-stricker", "bip-mpi-half-peak", 8192, "B"),
    ("kurmann-stricker", "t3d-pvm-peak", 30e6, "B/s"),
    ("kurmann-stricker", "t3d-pvm-half-peak", 2048, "B"),
    ("kurmann-stricker", "myrinet-link", 160e6, "B/s"),
    ("hellwagner-via", "sr-polling-pentium", 15.3e-6, "s"),
    ("hellwagner-via", "sr-blocking-pentium", 84.7e-6, "s"),
    ("hellwagner-via", "rr-1", 602e6 / 8, "B/s"),
    ("hellwagner-via", "rr-100", 566e6 / 8, "B/s"),
    ("hellwagner-via", "cq-100", 589e6 / 8, "B/s"),
    ("hellwagner-via", "cq-overhead", 0.02, "1"),
    ("petrini-quadrics", "uni-latency-zero", 1.9e-6, "s"),
    ("petrini-quadrics", "uni-elan-to-elan", 335e6, "B/s"),
    ("petrini-quadrics", "elite-flow-through", 35e-9, "s"),
    ("millich-george-oral", "myrinet-link-saturation", 144e6, "B/s"),
    ("george-todd-phipps", "tcp-round-trip-high", 1e-3, "s"),
])
def test_the_studies_headline_values_in_si(study, id, si, si_unit):
    v = R.load(study).get(id)
    assert v.si() == pytest.approx(si, rel=1e-12)
    assert v.si_unit == si_unit


def test_conditions_and_bounds_are_kept():
    via = R.load("hellwagner-via")
    assert [via.get(f"rr-{n}").at["connections"] for n in (1, 10, 50, 100)] == [1, 10, 50, 100]
    assert {via.get(f"cq-{n}").value for n in (1, 10, 50)} == {590}
    assert R.load("kurmann-stricker").get("sci-strided-deposit").bound == "at_most"


def test_unknown_study_and_unknown_id_are_one_line():
    with pytest.raises(UsageError, match="no published values for study 'nope': choose one of") as e:
        R.load("nope")
    assert "\n" not in str(e.value)
    with pytest.raises(UsageError, match="publishes no value 'nope'"):
        R.load("hellwagner-via").get("nope")


def _doc(**head):
    entry = {"id": "peak", "system": "X, MPI", "quantity": "bandwidth", "value": 126, "unit": "MB/s",
             "where": "Fig. 13", "printed": "126 MByte/s", "read_from": "text"}
    return {"study": "x", "seed": "000", "title": "T", "authors": "A", "values": [entry], **head}


def _without(key):
    def change(doc):
        del doc["values"][0][key]
    return change


def _set(key, value):
    def change(doc):
        doc["values"][0][key] = value
    return change


def _duplicate(doc):
    doc["values"].append(dict(doc["values"][0]))


def _bare(doc):
    doc["values"].append(126)


def _no_title(doc):
    del doc["title"]


@pytest.mark.parametrize("change,names,msg", [
    (_bare, "value #2", "a bare 126"),
    (_without("unit"), "value #1 (peak)", "unit missing"),
    (_without("where"), "value #1 (peak)", "where missing"),
    (_without("printed"), "value #1 (peak)", "printed missing"),
    (_without("read_from"), "value #1 (peak)", "read_from missing"),
    (_set("unit", "furlongs"), "value #1 (peak)", "unknown unit 'furlongs'"),
    (_set("quantity", "speed"), "value #1 (peak)", "unknown quantity 'speed'"),
    (_set("unit", "us"), "value #1 (peak)", "unit 'us' does not measure a bandwidth"),
    (_set("value", "126 MB/s"), "value #1 (peak)", "value must be a non-negative finite number"),
    (_set("read_from", "memory"), "value #1 (peak)", "read_from must be one of text, figure"),
    (_set("id", "Peak_1"), "value #1 (Peak_1)", "lowercase letters, digits and single hyphens"),
    (_set("colour", "red"), "value #1 (peak)", "unknown key 'colour'"),
    (_duplicate, "value #2 (peak)", "id 'peak' is used twice"),
    (_no_title, "", "'title' is missing or empty"),
])
def test_malformed_files_are_refused_in_one_line_naming_the_entry(tmp_path, change, names, msg):
    doc = _doc()
    change(doc)
    path = tmp_path / "x.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(UsageError) as e:
        R.read(path)
    line = str(e.value)
    assert "\n" not in line and line.startswith(f"{path}: {names}") and msg in line, line


def test_a_well_formed_file_reads(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text(yaml.safe_dump(_doc(year=1998), sort_keys=False))
    ref = R.read(path)
    assert ref.year == 1998 and ref.get("peak").si() == 126e6


def test_yaml_aliases_are_refused(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("study: &s x\nseed: *s\ntitle: T\nauthors: A\nvalues: []\n")
    with pytest.raises(UsageError, match="anchors and aliases"):
        R.read(path)
