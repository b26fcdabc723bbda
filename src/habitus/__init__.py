"""habitus: turn the runs AI agents already made into the right context for their next run."""

__version__ = "0.1.0"
