"""habitus.llm (see DESIGN.md §1)."""
