"""Run one episode: an agent itemizes one receipt under a context policy, a tool variant and a user model.

Each turn the history (OpenAI chat format) goes through the configuration's context policy; the
agent sees only the resulting messages. Tool calls go to the environment; a stopping text ends the
episode unless the configuration has a user model, which answers "please continue" (at most
`MAX_CONTINUES` times). Tokens are counted per request with the offline tokenizer (agent, user model
and summarizer separately). For scripted agents, cost goes through habitus.context.cost's simulated
prompt cache for the price model (OpenAI automatic or Anthropic explicit caching), at message
granularity; a model agent's usage and cost are what its provider reports.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from typing import Any

from habitus.bench.expense.agents import Agent, ContextBoundAgent
from habitus.bench.expense.env import SNAPSHOT_TAIL, TOOLS, ExpenseEnv
from habitus.bench.expense.metrics import EpisodeResult, score_episode
from habitus.bench.expense.tasks import Task
from habitus.bench.expense.vocab import SUBCATEGORY_NAMES
from habitus.context.cost import Block, PrefixCache, rules_for_model
from habitus.context.policies import (
    SELF_EDIT_TOOL,
    SELF_EDIT_TOOL_NAME,
    PolicyState,
    apply_policy,
    parse_policy,
)
from habitus.context.summarize import StateExtractorSummarizer
from habitus.context.tokens import MESSAGE_OVERHEAD_TOKENS, count_tokens, message_text
from habitus.core.trace import Usage
from habitus.llm.types import BudgetExceeded, LLMError

MAX_CONTINUES = 3
USER_MODEL_REPLY = "please continue"
SECONDS_PER_TURN = 5.0  # simulated time between requests, for cache time-to-live
DEFAULT_PRICE_MODEL = "gpt-4.1-mini"


@dataclass(frozen=True)
class Config:
    """A benchmark configuration: a context policy and whether a user model answers stops."""

    name: str
    policy: str
    user_model: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "policy": self.policy, "user_model": self.user_model}


CONFIGS: dict[str, Config] = {
    "C1": Config("C1", "full", user_model=False),
    "C2": Config("C2", "full"),
    "C3": Config("C3", "keep-last:5"),
    "C4": Config("C4", "keep-last:5+summary:3"),
}


def resolve_config(spec: str) -> Config:
    """'C1'…'C4' or any policy string (with a user model); a bad spec raises ValueError."""
    key = spec.strip()
    if key.upper() in CONFIGS:
        return CONFIGS[key.upper()]
    policy = parse_policy(key)  # raises PolicyError (a ValueError) with the accepted forms
    return Config(str(policy), str(policy))


def system_prompt(task: Task) -> str:
    return (
        "You are an expense assistant working in an ERP. Itemize the hotel expense line the user names: add "
        "one itemization line per receipt line (hotel subcategory, amount, date) until the remaining amount "
        "is exactly 0.00, then call save_and_close. Receipt labels do not always match subcategory names; "
        "list_subcategories shows which labels map to which subcategory. Subcategories: "
        + ", ".join(SUBCATEGORY_NAMES) + "."
    )


def user_prompt(task: Task) -> str:
    return f"Please itemize expense line {task.expense_id} using this receipt.\n\n{task.receipt_text()}"


_TEXT_TOKENS: dict[str, int] = {}  # tokens by message text, shared across episodes (same tasks recur per config/run)
_TEXT_TOKENS_MAX = 50_000


def _text_tokens(text: str) -> int:
    n = _TEXT_TOKENS.get(text)
    if n is None:
        if len(_TEXT_TOKENS) >= _TEXT_TOKENS_MAX:
            _TEXT_TOKENS.clear()
        n = _TEXT_TOKENS[text] = count_tokens(text)
    return n


class TokenMeter:
    """Counts message tokens once per message object; snapshot responses reuse the count of their constant tail."""

    def __init__(self, state: PolicyState) -> None:
        self.state = state
        self._tail_tokens: int | None = None
        self._blocks: dict[int, tuple[dict[str, Any], Block]] = {}

    def message(self, msg: dict[str, Any]) -> int:
        hit = self.state.token_memo.get(id(msg))
        if hit is not None and hit[0] is msg:
            return hit[1]
        content = msg.get("content")
        if msg.get("role") == "tool" and isinstance(content, str) and content.endswith(SNAPSHOT_TAIL):
            if self._tail_tokens is None:
                self._tail_tokens = count_tokens(SNAPSHOT_TAIL)
            head = content[: -len(SNAPSHOT_TAIL)]
            n = _text_tokens(f"tool\n{head}") + self._tail_tokens + MESSAGE_OVERHEAD_TOKENS
        else:
            n = _text_tokens(message_text(msg)) + MESSAGE_OVERHEAD_TOKENS
        self.state.token_memo[id(msg)] = (msg, n)  # shared with the policy, which counts for compact:T
        return n


    def block(self, msg: dict[str, Any]) -> Block:
        """The message as a cache block (keyed by its content, so equal messages share cache entries)."""
        hit = self._blocks.get(id(msg))
        if hit is not None and hit[0] is msg:
            return hit[1]
        b = Block(key=str(hash(message_text(msg))), tokens=self.message(msg))  # no text: message granularity
        self._blocks[id(msg)] = (msg, b)
        return b


def run_episode(
    task: Task,
    agent: Agent,
    config: Config,
    variant: str,
    *,
    run: int = 0,
    seed: int = 0,
    max_turns: int | None = None,
    price_model: str | None = DEFAULT_PRICE_MODEL,
    keep_history: bool = False,
) -> EpisodeResult:
    """Play one episode and score it (metrics, failure taxonomy) from the environment's log."""
    started = time.perf_counter()
    env = ExpenseEnv(task, variant)
    rng = random.Random(f"{seed}:{task.task_id}:{config.name}:{variant}:{run}")
    agent.start(task, rng)
    policy = parse_policy(config.policy)
    if hasattr(agent, "tools"):  # a model agent is offered the context-editing tool under `self-edit`
        agent.tools = [*TOOLS, SELF_EDIT_TOOL] if policy.kind == "self-edit" else list(TOOLS)
    state = PolicyState()
    meter = TokenMeter(state)
    summarizer = StateExtractorSummarizer()
    history: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt(task)},
        {"role": "user", "content": user_prompt(task)},
    ]
    agent_usage, user_usage, summary_usage = Usage(), Usage(), Usage()
    summarizer_calls, continues, turns, peak = 0, 0, 0, 0
    agent_cost: float | None = None
    cache = PrefixCache(rules_for_model(price_model))
    ended_by = "turn_limit"
    error: str | None = None
    limit = max_turns or 3 * len(task.lines) + 12
    while turns < limit:
        turns += 1
        env.turn = turns
        view = apply_policy(policy, history, summarizer=summarizer, state=state)
        summary_usage.add(view.summary_usage)
        summarizer_calls += view.summarizer_calls
        context_tokens = sum(meter.message(m) for m in view.messages)
        peak = max(peak, context_tokens)
        if isinstance(agent, ContextBoundAgent):
            agent.context_tokens = context_tokens
        try:
            turn = agent.act(view.messages)
        except LLMError as exc:  # a spent budget or a failing endpoint ends this run; nothing measured is lost
            ended_by = "budget" if isinstance(exc, BudgetExceeded) else "agent_error"
            error = str(exc)
            break
        calls = turn.tool_calls
        ids = turn.call_ids or [f"call_{turns}_{k}" for k in range(len(calls))]
        assistant: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
        if calls:
            assistant["tool_calls"] = [
                {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                for cid, (name, args) in zip(ids, calls, strict=False)
            ]
        history.append(assistant)
        if turn.usage is not None:  # a model agent reports its own usage
            agent_usage.add(turn.usage)
            if turn.cost is not None:
                agent_cost = (agent_cost or 0.0) + turn.cost
        else:  # scripted: price the request through the simulated prompt cache of the price model
            req = cache.request([meter.block(m) for m in view.messages], at=turns * SECONDS_PER_TURN,
                                output_tokens=meter.message(assistant), system_blocks=1)
            agent_usage.add(Usage(input_tokens=req.uncached_tokens, cache_read_tokens=req.cached_tokens,
                                  cache_write_tokens=req.cache_write_tokens, output_tokens=req.output_tokens))
            if req.cost is not None:
                agent_cost = (agent_cost or 0.0) + req.cost
        if calls:
            for cid, (name, args) in zip(ids, calls, strict=False):
                if name == SELF_EDIT_TOOL_NAME and policy.kind == "self-edit":  # the harness's tool, not the form's
                    content = json.dumps({"ok": True, "note": "the edit takes effect from your next turn"})
                else:
                    content = env.call(name, args)
                history.append({"role": "tool", "tool_call_id": cid, "content": content})
            if env.saved:
                ended_by = "save"
                break
            continue
        if env.saved:
            ended_by = "save"
            break
        if not config.user_model or continues >= MAX_CONTINUES:
            ended_by = "stop"
            break
        continues += 1
        reply = {"role": "user", "content": USER_MODEL_REPLY}
        # The (scripted) user model reads the agent's last message and answers one line.
        user_usage.add(Usage(input_tokens=count_tokens(message_text(assistant)) + 40,
                             output_tokens=meter.message(reply)))
        history.append(reply)
    if price_model and agent_cost is None and agent_usage.total_tokens:
        agent_cost = cost_of_or_none(agent_usage, price_model)  # a model agent whose provider reported no cost
    user_cost = cost_of_or_none(user_usage, price_model)
    return score_episode(
        task=task, env=env, agent=agent, config=config, variant=variant, run=run, ended_by=ended_by,
        turns=turns, continues=continues, agent_usage=agent_usage, user_usage=user_usage,
        summary_usage=summary_usage, summarizer_calls=summarizer_calls, agent_cost=agent_cost,
        user_cost=user_cost, peak_context=peak, wall_s=time.perf_counter() - started,
        history=history if keep_history else None, error=error,
    )


def cost_of_or_none(usage: Usage, model: str | None) -> float | None:
    if not model:
        return None
    from habitus.llm.pricing import cost_of

    return cost_of(usage, model)
