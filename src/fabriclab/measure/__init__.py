"""Measurement: the benchmark facts, run plans, the core's build and protocol, launchers and the runner."""
