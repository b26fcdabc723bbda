"""habitus.deliver (see DESIGN.md §1)."""
