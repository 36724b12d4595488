"""The seed studies fabriclab can re-run, by name (`fabriclab study list`)."""

from __future__ import annotations

from ..errors import UsageError
from . import george_todd_phipps, hellwagner_via, kurmann_stricker, millich_george_oral, petrini_quadrics
from .recipe import Study

# In the seeds' order.
STUDIES = {s.name: s for s in (kurmann_stricker.STUDY, millich_george_oral.STUDY, hellwagner_via.STUDY,
                               george_todd_phipps.STUDY, petrini_quadrics.STUDY)}


def study(name: str) -> Study:
    if name not in STUDIES:
        raise UsageError(f"no study {name!r}; the studies are: {', '.join(STUDIES)}")
    return STUDIES[name]
