"""habitus.bench (see DESIGN.md §1)."""
