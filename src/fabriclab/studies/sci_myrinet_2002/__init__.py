"""Seed 001 (Millich, George and Oral 2002): SCI and Myrinet per-node bandwidth, reproduced."""
