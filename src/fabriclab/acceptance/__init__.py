"""The pass/fail check of a cluster (`fabriclab check`): a short suite of the
cabling against the site's network (cabling.py), the pair matrix, the
congestion impact and the collectives' bus bandwidth, each judged against the
model of the network or a baseline by thresholds (thresholds.py), each passed
when any of its attempts passes (check.py)."""
