"""habitus.llm: optional model providers, structured output, usage and cost accounting, budgets.

Import from `habitus.llm.providers` (get_provider, Budget, errors) and `habitus.llm.pricing`
(get_price, cost_of). Nothing here is required: the default provider is `none` (docs/architecture.md §2.1).
"""
