"""The seed studies fabriclab can re-run, by name (`fabriclab study list`)."""

from __future__ import annotations

from ..errors import UsageError
from . import hellwagner_via, petrini_quadrics
from .recipe import Study

STUDIES = {s.name: s for s in (hellwagner_via.STUDY, petrini_quadrics.STUDY)}


def study(name: str) -> Study:
    if name not in STUDIES:
        raise UsageError(f"no study {name!r}; the studies are: {', '.join(STUDIES)}")
    return STUDIES[name]
