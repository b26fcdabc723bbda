"""habitus.capture (see DESIGN.md §1)."""
