"""habitus.refine (see docs/architecture.md §1)."""
