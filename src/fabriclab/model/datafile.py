"""Reading the model's data files (catalog, calibration, custom networks).

JSON when the name ends in .json, YAML otherwise; every failure is one
UsageError line naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from ..errors import UsageError

# libyaml's safe loader where PyYAML was built with it: the same documents, read ~10 times faster
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_data_file(path, what: str):
    """The parsed content of a JSON or YAML file; `what` names it in errors."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise UsageError(f"cannot read {what} {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"cannot read {what} {path}: not UTF-8 text") from None
    kind = "JSON" if p.suffix.lower() == ".json" else "YAML"
    try:
        return json.loads(text) if kind == "JSON" else yaml.load(text, Loader=_LOADER)
    except (ValueError, yaml.YAMLError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UsageError(f"{path}: not valid {kind}: {first}") from None
