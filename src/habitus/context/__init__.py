"""habitus.context: in-run context policies, token counting, cache-aware cost, simulation over traces.

Public entry points (see docs/context.md):
- `parse_policy(spec)`, `apply_policy(policy, history, summarizer=, state=) -> ContextView`
- `StateExtractorSummarizer`, `LLMSummarizer`, `Summarizer` (protocol)
- `count_tokens(text)`, `tokenizer_name()`
"""

from habitus.context.policies import (
    SELF_EDIT_TOOL,
    ContextView,
    Policy,
    PolicyError,
    PolicyState,
    apply_policy,
    context_mirror,
    find_pairs,
    parse_policy,
)
from habitus.context.summarize import LLMSummarizer, StateExtractorSummarizer, Summarizer, Summary, ToolPair
from habitus.context.tokens import count_tokens, tokenizer_name

__all__ = [
    "SELF_EDIT_TOOL",
    "ContextView",
    "LLMSummarizer",
    "Policy",
    "PolicyError",
    "PolicyState",
    "StateExtractorSummarizer",
    "Summarizer",
    "Summary",
    "ToolPair",
    "apply_policy",
    "context_mirror",
    "count_tokens",
    "find_pairs",
    "parse_policy",
    "tokenizer_name",
]
