"""habitus.context (see DESIGN.md §1)."""
