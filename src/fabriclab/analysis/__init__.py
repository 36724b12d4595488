"""Analysis of raw samples: summaries, fits, diagnostics, per-rank figures and run comparison."""
