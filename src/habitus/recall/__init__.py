"""habitus.recall (see DESIGN.md §1)."""
