"""Replay a recorded session request by request under context policies, with a cache-aware cost model.

For every policy: input tokens, cached tokens, cache hit rate, output tokens, cost, summarizer cost
and calls, peak context, and dependency loss (tool calls whose arguments use a value that appeared
only in tool outputs the policy had already evicted). Where the trace records real usage, the
simulated full-history input is set beside the recorded input, with the error.

The harness's own prefix (system prompt and tool schemas) is not in transcripts. Unless given, its
size is calibrated once per session from the first request with recorded usage (recorded minus
simulated) and added as one fixed block in front of every request, under every policy.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from habitus.context.cost import Block, CacheRules, PrefixCache, common_prefix_len, rules_for_model
from habitus.context.policies import PolicyState, apply_policy, find_pairs, parse_policy
from habitus.context.replay import ReplayRequest, argument_values, history_from_trace, salient_values
from habitus.context.summarize import Summarizer, ToolPair
from habitus.context.tokens import count_message_tokens, message_text, tokenizer_name
from habitus.core.trace import Trace

DEFAULT_POLICIES = ("full", "keep-last:5", "keep-last:5+summary:3", "compact:50000", "clear-results:5")
HIDDEN_PREFIX_KEY = "habitus:hidden-harness-prefix"
MAX_EXAMPLES = 5


@dataclass
class PolicyResult:
    """Totals of one policy over one session's requests."""

    policy: str
    requests: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = 0.0  # model requests only
    summarizer_calls: int = 0
    summarizer_input_tokens: int = 0
    summarizer_output_tokens: int = 0
    summarizer_cost: float | None = 0.0
    peak_context: int = 0
    dependency_loss: int = 0
    dependency_examples: list[dict[str, Any]] = field(default_factory=list)
    input_series: list[int] = field(default_factory=list)  # input tokens per request
    cached_series: list[int] = field(default_factory=list)

    @property
    def cache_hit_rate(self) -> float:
        return self.cached_tokens / self.input_tokens if self.input_tokens else 0.0

    @property
    def total_cost(self) -> float | None:
        """Requests plus summarizer: summarizer spending is always part of the total."""
        if self.cost is None or self.summarizer_cost is None:
            return None
        return self.cost + self.summarizer_cost

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["cache_hit_rate"] = round(self.cache_hit_rate, 4)
        total = self.total_cost
        for key, value in (("cost", self.cost), ("summarizer_cost", self.summarizer_cost), ("total_cost", total)):
            data[key] = None if value is None else round(value, 6)
        return data


@dataclass
class RecordedComparison:
    """Simulated full-history input tokens against the usage the trace recorded."""

    requests_compared: int
    recorded_input: int
    simulated_input: int
    error_pct: float
    hidden_prefix_tokens: int
    calibrated: bool  # hidden prefix taken from the first recorded request (then excluded from the error)
    growth_recorded: int  # last minus first recorded request: the part that transcripts do contain
    growth_simulated: int
    growth_error_pct: float | None
    recorded_hit_rate: float | None = None  # cache reads / input as recorded (compared requests)
    simulated_hit_rate: float | None = None  # the same under the simulated cache, full history

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SimulationReport:
    """One session replayed under several policies."""

    trace_id: str
    source_path: str | None
    agent: str
    model: str | None
    tokenizer: str
    rules: CacheRules
    requests: int
    pairs: int
    results: list[PolicyResult]
    recorded: RecordedComparison | None = None
    notes: list[str] = field(default_factory=list)

    def result(self, policy: str) -> PolicyResult:
        spec = str(parse_policy(policy))
        return next(r for r in self.results if r.policy == spec)

    def to_dict(self) -> dict[str, Any]:
        return {
            "trace_id": self.trace_id,
            "source_path": self.source_path,
            "agent": self.agent,
            "model": self.model,
            "tokenizer": self.tokenizer,
            "cache": self.rules.to_dict(),
            "requests": self.requests,
            "pairs": self.pairs,
            "results": [r.to_dict() for r in self.results],
            "recorded": self.recorded.to_dict() if self.recorded else None,
            "notes": list(self.notes),
        }


class _Blocks:
    """Block (content key + tokens) per message object, memoized by identity for the whole replay."""

    def __init__(self, extra_tokens: dict[int, int]) -> None:
        self.memo: dict[int, tuple[dict[str, Any], Block]] = {}
        self.by_text: dict[str, Block] = {}
        self.extra = extra_tokens

    def of(self, message: dict[str, Any]) -> Block:
        hit = self.memo.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        text = message_text(message)
        block = self.by_text.get(text)
        if block is None:
            block = Block.of(text, count_message_tokens(message))
            self.by_text[text] = block
        extra = self.extra.get(id(message), 0)
        if extra:
            block = Block(key=block.key + f"+{extra}", tokens=block.tokens + extra, text=block.text)
        self.memo[id(message)] = (message, block)
        return block


def _reasoning_tokens(trace: Trace, messages: list[dict[str, Any]], requests: list[ReplayRequest],
                      blocks: _Blocks) -> dict[int, int]:
    """Hidden tokens an assistant message carries into later requests (Codex passes reasoning back)."""
    extra: dict[int, int] = {}
    if trace.source_format != "codex":
        return extra
    for req in requests:
        msg = messages[req.n_messages]
        if req.output_tokens:
            visible = blocks.of(msg).tokens
            if req.output_tokens > visible:
                extra[id(msg)] = req.output_tokens - visible
    return extra


def _prefix_pairs(pairs: list[ToolPair], call_messages: list[int], n: int) -> list[ToolPair]:
    """The pairs of history[:n]: calls before n, results only where they came before n."""
    out = pairs[: bisect_left(call_messages, n)]
    for i in range(len(out) - 1, -1, -1):
        p = out[i]
        if p.result_message is not None and p.result_message >= n:
            out[i] = ToolPair(p.index, p.call_id, p.name, p.arguments, None, p.call_message, p.call_position, None)
        elif p.result_message is not None:
            break
    return out


def _history_at(messages: list[dict[str, Any]], req: ReplayRequest) -> list[dict[str, Any]]:
    if req.history_base == 0:
        return messages[: req.n_messages]
    kept = [m for m in messages[: req.history_base] if m.get("role") == "system"]
    return kept + messages[req.history_base : req.n_messages]


def simulate(
    trace: Trace,
    policies: list[str] | tuple[str, ...] = DEFAULT_POLICIES,
    model: str | None = None,
    *,
    summarizer: Summarizer | None = None,
    anthropic_ttl: str = "auto",
    cache_mode: str | None = None,
    hidden_prefix: int | None = None,
    include_thinking: bool = False,
) -> SimulationReport:
    """Replay `trace` under each policy and price every request with `model`'s caching rules.

    `anthropic_ttl` is 5m, 1h or auto: 1h when the recording shows cache reads after a pause of more
    than 5 minutes (only a 1-hour cache survives that), else 5m.
    """
    parsed = [parse_policy(p) for p in policies]
    messages, requests = history_from_trace(trace, include_thinking=include_thinking)
    ttl = infer_cache_ttl(requests) if anthropic_ttl == "auto" else anthropic_ttl
    rules = rules_for_model(model or trace.model, anthropic_ttl=ttl, mode=cache_mode)
    blocks = _Blocks({})
    blocks.extra = _reasoning_tokens(trace, messages, requests, blocks)
    blocks.memo.clear()
    pairs = find_pairs(messages)
    notes: list[str] = []
    recorded, hidden = _compare_recorded(messages, requests, blocks, hidden_prefix)
    if recorded is None and hidden_prefix is None:
        notes.append("no recorded usage: the harness's hidden prefix (system prompt, tool schemas) is not counted")
    if rules.input_price is None:
        name = model or trace.model
        notes.append(f"no price for model {name!r}: its {len(requests)} requests are unpriced and costs are not "
                     f"computed (set a price: habitus config set pricing.{name or '<model>'} 'input=… output=…')")
    if any(r.history_base for r in requests):
        notes.append("the recorded harness compacted this session: replay restarts from its summary")
    if anthropic_ttl == "auto" and ttl == "1h" and rules.mode == "explicit":
        notes.append("cache TTL 1h: the recording shows cache reads after pauses of more than 5 minutes")
    index = _output_index(pairs)
    results = [
        _replay(pol, messages, requests, pairs, blocks, rules, hidden, summarizer, index) for pol in parsed
    ]
    full = next((r for r in results if r.policy == "full"), None)
    if recorded is not None and full is not None:
        _compare_cache(recorded, requests, full)
    return SimulationReport(
        trace_id=trace.id,
        source_path=trace.source_path,
        agent=trace.agent,
        model=model or trace.model,
        tokenizer=tokenizer_name(),
        rules=rules,
        requests=len(requests),
        pairs=len(pairs),
        results=results,
        recorded=recorded,
        notes=notes,
    )


def infer_cache_ttl(requests: list[ReplayRequest]) -> str:
    """'1h' when a recorded request read the cache after a pause of more than 5 minutes, else '5m'."""
    previous: ReplayRequest | None = None
    for req in requests:
        if req.recorded_input is None:
            continue
        if previous is not None and req.at - previous.at > 300 and (req.recorded_cached or 0) > 0:
            return "1h"
        previous = req
    return "5m"


def _compare_cache(recorded: RecordedComparison, requests: list[ReplayRequest], full: PolicyResult) -> None:
    """Recorded vs simulated (full history) cache hit rate over the compared requests."""
    index = [i for i, r in enumerate(requests) if r.recorded_input][1 if recorded.calibrated else 0 :]
    rec_input = sum(requests[i].recorded_input or 0 for i in index)
    sim_input = sum(full.input_series[i] for i in index)
    if rec_input and sim_input:
        recorded.recorded_hit_rate = round(sum(requests[i].recorded_cached or 0 for i in index) / rec_input, 4)
        recorded.simulated_hit_rate = round(sum(full.cached_series[i] for i in index) / sim_input, 4)


def _compare_recorded(
    messages: list[dict[str, Any]], requests: list[ReplayRequest], blocks: _Blocks, hidden_prefix: int | None
) -> tuple[RecordedComparison | None, int]:
    simulated: list[int] = []
    running, counted = 0, 0
    for req in requests:
        history = _history_at(messages, req)
        if req.history_base:
            simulated.append(sum(blocks.of(m).tokens for m in history))
            continue
        while counted < req.n_messages:
            running += blocks.of(messages[counted]).tokens
            counted += 1
        simulated.append(running)
    with_usage = [(i, r.recorded_input) for i, r in enumerate(requests) if r.recorded_input]
    if not with_usage:
        return None, hidden_prefix or 0
    first_i, first_rec = with_usage[0]
    calibrated = hidden_prefix is None
    hidden = max(0, first_rec - simulated[first_i]) if calibrated else int(hidden_prefix or 0)
    compared = with_usage[1:] if calibrated and len(with_usage) > 1 else with_usage
    rec_sum = sum(rec for _, rec in compared)
    sim_sum = sum(simulated[i] + hidden for i, _ in compared)
    last_i, last_rec = with_usage[-1]
    growth_rec = last_rec - first_rec
    growth_sim = simulated[last_i] - simulated[first_i]
    return (
        RecordedComparison(
            requests_compared=len(compared),
            recorded_input=rec_sum,
            simulated_input=sim_sum,
            error_pct=round(100.0 * (sim_sum - rec_sum) / rec_sum, 2) if rec_sum else 0.0,
            hidden_prefix_tokens=hidden,
            calibrated=calibrated,
            growth_recorded=growth_rec,
            growth_simulated=growth_sim,
            growth_error_pct=round(100.0 * (growth_sim - growth_rec) / growth_rec, 2) if growth_rec > 0 else None,
        ),
        hidden,
    )


def _output_index(pairs: list[ToolPair]) -> dict[str, list[int]]:
    """Salient value -> the pairs whose outputs contain it (in order)."""
    index: dict[str, list[int]] = {}
    for p in pairs:
        if p.result:
            for value in salient_values(p.result):
                index.setdefault(value, []).append(p.index)
    return index


def _replay(
    policy: Any,
    messages: list[dict[str, Any]],
    requests: list[ReplayRequest],
    pairs: list[ToolPair],
    blocks: _Blocks,
    rules: CacheRules,
    hidden: int,
    summarizer: Summarizer | None,
    index: dict[str, list[int]],
) -> PolicyResult:
    result = PolicyResult(policy=str(policy), requests=len(requests))
    state = PolicyState()
    cache = PrefixCache(rules)
    prefix = [Block(key=HIDDEN_PREFIX_KEY, tokens=hidden)] if hidden else []
    calls_by_message: dict[int, list[ToolPair]] = {}
    for p in pairs:
        calls_by_message.setdefault(p.call_message, []).append(p)
    call_messages = [p.call_message for p in pairs]
    previous: list[dict[str, Any]] = []
    previous_blocks: list[Block] = []
    for req in requests:
        history = _history_at(messages, req)
        req_pairs = _prefix_pairs(pairs, call_messages, req.n_messages) if req.history_base == 0 else None
        view = apply_policy(policy, history, summarizer=summarizer, state=state, pairs=req_pairs, base_tokens=hidden)
        # most requests extend the previous one: reuse its blocks for the shared messages
        same = common_prefix_len(view.messages, previous) if previous else 0
        message_blocks = previous_blocks[:same] + [blocks.of(m) for m in view.messages[same:]]
        previous, previous_blocks = view.messages, message_blocks
        request_blocks = prefix + message_blocks
        system_blocks = len(prefix) + next(
            (i for i, m in enumerate(view.messages) if m.get("role") != "system"), len(view.messages)
        )
        output = req.output_tokens if req.output_tokens is not None else blocks.of(messages[req.n_messages]).tokens
        cost = cache.request(request_blocks, req.at, output_tokens=output, system_blocks=system_blocks)
        result.input_tokens += cost.input_tokens
        result.cached_tokens += cost.cached_tokens
        result.cache_write_tokens += cost.cache_write_tokens
        result.output_tokens += cost.output_tokens
        result.input_series.append(cost.input_tokens)
        result.cached_series.append(cost.cached_tokens)
        result.peak_context = max(result.peak_context, cost.input_tokens)
        result.cost = None if result.cost is None or cost.cost is None else result.cost + cost.cost
        result.summarizer_calls += view.summarizer_calls
        result.summarizer_input_tokens += view.summary_usage.input_tokens + view.summary_usage.cache_read_tokens
        result.summarizer_output_tokens += view.summary_usage.output_tokens
        if view.summarizer_calls and view.summary_usage.total_tokens and view.summary_usage.cost is None:
            result.summarizer_cost = None  # a model summarizer whose price is unknown
        elif result.summarizer_cost is not None:
            result.summarizer_cost += view.summary_usage.cost or 0.0
        if view.evicted_pairs and req.history_base == 0:
            _dependency_loss(result, req, view, message_blocks, calls_by_message.get(req.n_messages, []), index)
    return result


def _dependency_loss(
    result: PolicyResult,
    req: ReplayRequest,
    view: Any,
    message_blocks: list[Block],
    calls: list[ToolPair],
    index: dict[str, list[int]],
) -> None:
    """Count this response's tool calls that use a value seen only in outputs the policy evicted."""
    evicted = set(view.evicted_pairs)
    visible_text: str | None = None
    for call in calls:
        lost_value = None
        for value in sorted(argument_values(call.arguments)):
            sources = [i for i in index.get(value, ()) if i < call.index]
            if not sources or not all(i in evicted for i in sources):
                continue
            if visible_text is None:
                visible_text = "\n".join(b.text for b in message_blocks)
            if value not in visible_text:
                lost_value = value
                break
        if lost_value is not None:
            result.dependency_loss += 1
            if len(result.dependency_examples) < MAX_EXAMPLES:
                result.dependency_examples.append(
                    {"request": req.n_messages, "tool": call.name, "value": lost_value[:120]}
                )


def simulate_files(
    paths: list[str | Path], policies: list[str] | tuple[str, ...] = DEFAULT_POLICIES, model: str | None = None,
    **options: Any,
) -> list[SimulationReport]:
    """Read each session file (any supported format) and simulate every trace in it that made requests."""
    from habitus.capture import read_trace_file

    reports: list[SimulationReport] = []
    for path in paths:
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"no such session file: {p}")
        for trace in read_trace_file(p).traces:
            report = simulate(trace, policies, model, **options)
            if report.requests:
                reports.append(report)
    return reports
