"""fabriclab: measure, model and compare the communication fabrics of clusters."""

__version__ = "0.3.0"
