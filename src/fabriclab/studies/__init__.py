"""Seed studies re-run: each subpackage reproduces one paper's figures and findings."""
