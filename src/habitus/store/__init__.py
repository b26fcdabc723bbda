"""habitus.store (see DESIGN.md §1)."""
