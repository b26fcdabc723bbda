"""habitus.index (see DESIGN.md §1)."""
