"""habitus.refine (see DESIGN.md §1)."""
