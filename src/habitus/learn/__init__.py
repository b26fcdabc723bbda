"""habitus.learn (see DESIGN.md §1)."""
