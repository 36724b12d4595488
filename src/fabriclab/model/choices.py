"""Names the model accepts, kept free of heavy imports so the command line can
offer them (`fabriclab model --help`) without loading numpy or the catalog."""

PATTERNS = ("all-to-all", "hotspot", "permutation", "bisection", "neighbour")
METHODS = ("auto", "enumerate")
MAX_NODES = 100_000
