"""What fabriclab can measure, as facts: the registry of benchmarks (levels, parameters,
views), the collectives' bytes, the applications' arithmetic, rank layouts, cache states,
each point's memory footprint and the congestion tests' layouts. Nothing here runs."""
