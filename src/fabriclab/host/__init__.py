"""This host as a benchmark sees it: caches and CPUs (sysinfo), and the machine check:
probes of /proc and /sys for what disturbs timings, and the safe fixes applied and undone."""
