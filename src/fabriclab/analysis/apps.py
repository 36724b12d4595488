"""The apps' exchange phases as a run predicted them: the rows of its `exchange_model` block.

The prediction needs the model of the network the run crossed (measure/
exchange.py computes it when the run ends and stores it in the document,
docs/apps.md); readers take the stored rows."""

from __future__ import annotations


def exchange_predictions(doc) -> list[dict]:
    """The block's rows (bench, variant, size, active, measured_s, predicted_s, ratio, verdict,
    bottleneck, schedule), each with the block's network and calibration; [] when there are none."""
    block = doc.exchange_model or {}
    return [{**row, "network": block.get("network"), "calibration": block.get("calibration")}
            for row in block.get("rows") or []]
