"""Names the model accepts, kept free of heavy imports so the command line can
offer them (`fabriclab model --help`) without loading numpy or the catalog."""

PATTERNS = ("all-to-all", "hotspot", "permutation", "bisection", "neighbour", "ring", "random-ring")
METHODS = ("auto", "enumerate")
MAX_NODES = 100_000
MAX_ENUMERATED_FLOWS = 40_000_000     # flows the model lists one by one (or aggregated groups of them)
# The seed's six systems, compared when none is named, and where plots go.
DEFAULT_SYSTEMS = ("sci-ring", "sci-2d", "myrinet-minimal", "myrinet-clos64", "myrinet-ring4", "myrinet-ring2")
DEFAULT_OUT = "model-out"
