"""Seed 001 (Millich, George and Oral 2002), `fabriclab study run millich-george-oral`:
the seed's loop on your fabric (saturate one cable, calibrate the model with
it, check the calibrated model against a measured all-to-all: saturation.py,
judged on the measurements) and its projections (the model alone with the
seed's formulas and parameters: model_curves.py, its eight figures in
model_figures.py, its findings judged on the model in model_findings.py, the
seed's own formulas as published in as_published.py), which need no host and
are drawn and judged on any machine."""

from __future__ import annotations

from ..recipe import Study
from . import saturation


def figures(runs, ref) -> list:
    from . import model_figures            # the model loads only when a figure is drawn
    return saturation.figures(runs, ref) + model_figures.figures(runs, ref)


def findings(runs, ref) -> list:
    from . import model_findings
    return saturation.findings(runs, ref) + model_findings.findings(runs, ref)


STUDY = Study(
    "millich-george-oral", "001", "Saturation of one link, the model calibrated by it, its all-to-all "
    "prediction checked, and the projections",
    "One to N/2 senders stream across one shared cable (the seed's Fig. 5-8 on SCI, Fig. 11-12 on two Myrinet "
    "switches); the plateau calibrates the model (seed 001 §5), whose per-node all-to-all prediction is set "
    "beside a measured all-to-all. The seed's projections of its SCI and Myrinet systems (Fig. 2-4, 9-10, "
    "13-15) are computed from the model alone with its parameters, and its findings about them judged on the "
    "model, on any machine. The measured steps need several hosts and their network file: "
    + saturation.ON_ONE_MACHINE + ".",
    saturation.STEPS, figures, findings, prices=True)
