"""habitus.bench (see docs/architecture.md §1)."""
