"""In-run context policies over OpenAI chat-format histories; the unit is a tool call/response pair.

A history is a list of chat messages (`system`, `user`, `assistant` with optional `tool_calls`,
`tool` with `tool_call_id`). A policy decides which pairs the next request still sees:

- `full`: everything.
- `keep-last:N`: the last N pairs; older pairs are evicted (call and result).
- `keep-last:N+summary:W`: as keep-last, and the W most recently evicted pairs are summarized into
  one message inserted where they were (W = -1: every evicted pair, compaction-style); older
  evicted pairs are dropped.
- `compact:T` (or `compact:T:K`): when the context passes T tokens, all but the last K pairs
  (default 3) are replaced by one summary; compaction repeats each time the context passes T again.
- `clear-results:N`: every call stays; the results of all but the last N pairs become a placeholder
  (as Anthropic's context editing does).
- `self-edit`: the agent edits its own context through the `edit_context` tool (see `SELF_EDIT_TOOL`);
  an edit takes effect from the request after its result, i.e. the next turn.

System prompts and user turns are never evicted. `apply_policy` is a pure function of the history:
the same input gives the same context. A `PolicyState` only memoizes: summaries are cached by the
exact pairs they cover (so the same evicted pairs are summarized, and paid for, once) and token
counts by message.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from habitus.context.incremental import compaction_boundary, render_prefix
from habitus.context.summarize import StateExtractorSummarizer, Summarizer, Summary, ToolPair
from habitus.context.tokens import count_message_tokens
from habitus.core.trace import Usage

POLICY_KINDS = ("full", "keep-last", "compact", "clear-results", "self-edit")
DEFAULT_COMPACT_KEEP = 3
SELF_EDIT_TOOL_NAME = "edit_context"
SUMMARY_HEADER = "[Context summary: {n} earlier tool call(s) were removed from the context]"
CLEARED_PLACEHOLDER = "[result of {name} cleared from the context]"

SELF_EDIT_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": SELF_EDIT_TOOL_NAME,
        "description": (
            "Edit your own context. Your earlier tool calls are mirrored with their ids; drop those you no "
            "longer need or replace a result with a shorter note. Takes effect from your next turn."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "drop": {"type": "array", "items": {"type": "string"}, "description": "tool call ids to remove"},
                "replace": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "description": "tool call id -> text that replaces its result",
                },
            },
        },
    },
}


class PolicyError(ValueError):
    """A policy spec that cannot be parsed; the message says what is accepted."""


@dataclass(frozen=True)
class Policy:
    """A parsed context policy (see the module docstring for the meaning of each kind)."""

    kind: str
    keep: int = 0  # N for keep-last / clear-results, K for compact
    summary_window: int | None = None  # W for keep-last:N+summary:W; -1 = everything evicted
    threshold: int = 0  # T for compact, in tokens
    spec: str = ""

    def __str__(self) -> str:
        return self.spec or self.kind


@dataclass
class PolicyState:
    """Memo shared across calls of one replay: summaries by covered pairs, token counts by message."""

    summaries: dict[str, Summary] = field(default_factory=dict)
    token_memo: dict[int, tuple[dict[str, Any], int]] = field(default_factory=dict)

    derived_memo: dict[tuple[int, str], tuple[Any, dict[str, Any]]] = field(default_factory=dict)
    memo: dict[str, dict[str, Any]] = field(default_factory=dict)  # incremental render / compaction progress
    pair_digests: dict[int, tuple[ToolPair, bytes]] = field(default_factory=dict)
    key_memo: dict[Any, tuple[ToolPair, ToolPair, str]] = field(default_factory=dict)

    def pair_digest(self, pair: ToolPair) -> bytes:
        """Content digest of one pair (memoized by identity; pairs are frozen)."""
        hit = self.pair_digests.get(id(pair))
        if hit is not None and hit[0] is pair:
            return hit[1]
        text = f"\x00{pair.call_id}\x00{pair.name}\x00{pair.arguments}\x00{pair.result}"
        digest = hashlib.blake2b(text.encode("utf-8", errors="replace"), digest_size=16).digest()
        self.pair_digests[id(pair)] = (pair, digest)
        return digest

    def derived(self, message: Any, variant: str, make: Any) -> dict[str, Any]:
        """The same derived message object (placeholder, stripped copy) for the same source message and variant.

        Reusing objects keeps a replay linear: token counts and cache blocks are memoized by identity.
        """
        key = (id(message), variant)
        hit = self.derived_memo.get(key)
        if hit is not None and hit[0] is message:
            return hit[1]
        new = make()
        self.derived_memo[key] = (message, new)
        return new

    def message_tokens(self, message: dict[str, Any]) -> int:
        hit = self.token_memo.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        tokens = count_message_tokens(message)
        self.token_memo[id(message)] = (message, tokens)  # holding the message keeps its id unique
        return tokens


@dataclass
class ContextView:
    """What one request sees under a policy, and what building it cost."""

    messages: list[dict[str, Any]]
    evicted_pairs: list[int]  # pairs whose result is no longer in the context (dropped, summarized or cleared)
    summary_usage: Usage = field(default_factory=Usage)
    summarizer_calls: int = 0  # summaries produced by this call (cache misses)
    summarized_pairs: list[int] = field(default_factory=list)


_TOKENS_RE = re.compile(r"^(\d+)([kKmM]?)$")
USAGE = "full | keep-last:N | keep-last:N+summary:W | compact:T[:K] | clear-results:N | self-edit"


def _int(text: str, what: str, spec: str, allow_negative_one: bool = False) -> int:
    if allow_negative_one and text.strip() == "-1":
        return -1
    match = _TOKENS_RE.match(text.strip())
    if not match:
        raise PolicyError(f"bad {what} {text!r} in policy {spec!r}; expected {USAGE}")
    scale = {"": 1, "k": 1_000, "m": 1_000_000}[match.group(2).lower()]
    return int(match.group(1)) * scale


def parse_policy(spec: str) -> Policy:
    """Parse a policy spec such as 'keep-last:5+summary:3'; raise PolicyError with the accepted forms."""
    text = (spec or "").strip().lower()
    if text in ("full", "self-edit"):
        return Policy(kind=text, spec=text)
    name, _, rest = text.partition(":")
    if name == "keep-last" and rest:
        head, plus, tail = rest.partition("+")
        keep = _int(head, "N", spec)
        if not plus:
            return Policy(kind="keep-last", keep=keep, spec=text)
        sname, _, sval = tail.partition(":")
        if sname != "summary" or not sval:
            raise PolicyError(f"bad suffix {tail!r} in policy {spec!r}; expected {USAGE}")
        window = _int(sval, "W", spec, allow_negative_one=True)
        return Policy(kind="keep-last", keep=keep, summary_window=window, spec=text)
    if name == "clear-results" and rest:
        return Policy(kind="clear-results", keep=_int(rest, "N", spec), spec=text)
    if name == "compact" and rest:
        threshold, _, keep = rest.partition(":")
        k = _int(keep, "K", spec) if keep else DEFAULT_COMPACT_KEEP
        return Policy(kind="compact", threshold=_int(threshold, "T", spec), keep=k, spec=text)
    raise PolicyError(f"unknown context policy {spec!r}; expected {USAGE}")


def find_pairs(history: list[dict[str, Any]]) -> list[ToolPair]:
    """Every tool call of the history paired with its result (by tool_call_id, else in order)."""
    calls: list[dict[str, Any]] = []  # mutable records before freezing into ToolPair
    by_id: dict[str, dict[str, Any]] = {}
    for i, msg in enumerate(history):
        role = msg.get("role")
        if role == "assistant":
            for pos, call in enumerate(msg.get("tool_calls") or []):
                fn = call.get("function") or {}
                args = fn.get("arguments", "")
                rec = {
                    "call_id": str(call.get("id") or f"call_{len(calls)}"),
                    "name": str(fn.get("name", "")),
                    "arguments": args if isinstance(args, str) else json.dumps(args, sort_keys=True),
                    "result": None,
                    "call_message": i,
                    "call_position": pos,
                    "result_message": None,
                }
                calls.append(rec)
                by_id.setdefault(rec["call_id"], rec)
        elif role == "tool":
            rec = by_id.get(str(msg.get("tool_call_id")))
            if rec is None or rec["result_message"] is not None:
                rec = next((c for c in calls if c["result_message"] is None), None)
            if rec is not None:
                rec["result_message"] = i
                content = msg.get("content")
                rec["result"] = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return [ToolPair(index=n, **rec) for n, rec in enumerate(calls)]


def _cache_key(summarizer: Summarizer, pairs: list[ToolPair], state: PolicyState) -> str:
    digest = hashlib.sha256(getattr(summarizer, "name", type(summarizer).__name__).encode())
    digest.update(b"".join([state.pair_digest(p) for p in pairs]))
    return digest.hexdigest()


class _Summaries:
    """Produces summaries through the state's cache and tallies what this call newly spent."""

    def __init__(self, summarizer: Summarizer, state: PolicyState) -> None:
        self.summarizer, self.state = summarizer, state
        self.usage, self.calls = Usage(), 0

    def get(self, pairs: list[ToolPair]) -> Summary:
        # a replay asks for the same slice of the same pair objects many times: skip re-hashing it
        ident = (id(pairs[0]), id(pairs[len(pairs) // 2]), id(pairs[-1]), len(pairs)) if pairs else None
        known = self.state.key_memo.get(ident) if ident else None
        if known is not None and known[0] is pairs[0] and known[1] is pairs[-1]:
            key = known[2]
        else:
            key = _cache_key(self.summarizer, pairs, self.state)
            if ident:
                self.state.key_memo[ident] = (pairs[0], pairs[-1], key)
        hit = self.state.summaries.get(key)
        if hit is None:
            hit = self.summarizer.summarize(pairs)
            self.state.summaries[key] = hit
            self.usage.add(hit.usage)
            self.calls += 1
        return hit


def _summary_message(summary: Summary, n: int) -> dict[str, Any]:
    return {"role": "user", "content": SUMMARY_HEADER.format(n=n) + "\n" + summary.text}


def _self_edits(pairs: list[ToolPair]) -> tuple[set[int], dict[int, str]]:
    """Drops and replacements requested by completed `edit_context` calls, applied to earlier pairs."""
    dropped: set[int] = set()
    replaced: dict[int, str] = {}
    for edit in pairs:
        if edit.name != SELF_EDIT_TOOL_NAME or edit.result is None:
            continue
        try:
            args = json.loads(edit.arguments or "{}")
        except ValueError:
            continue
        if not isinstance(args, dict):
            continue
        earlier = {p.call_id: p.index for p in pairs[: edit.index]}
        for cid in args.get("drop") or []:
            if str(cid) in earlier:
                dropped.add(earlier[str(cid)])
                replaced.pop(earlier[str(cid)], None)
        for cid, text in (args.get("replace") or {}).items():
            if str(cid) in earlier and earlier[str(cid)] not in dropped:
                replaced[earlier[str(cid)]] = str(text)
    return dropped, replaced


def apply_policy(
    policy: Policy | str,
    history: list[dict[str, Any]],
    *,
    summarizer: Summarizer | None = None,
    state: PolicyState | None = None,
    pairs: list[ToolPair] | None = None,
    base_tokens: int = 0,
) -> ContextView:
    """The messages the next request sees under `policy`; system prompts and user turns are always kept.

    `pairs` may pass a precomputed `find_pairs(history)` (a replay does, to stay linear per request).
    `base_tokens` counts toward `compact:T` thresholds for what every request carries outside the
    history (the harness's system prompt and tool schemas).
    """
    pol = parse_policy(policy) if isinstance(policy, str) else policy
    state = state if state is not None else PolicyState()
    summaries = _Summaries(summarizer or StateExtractorSummarizer(), state)
    pairs = find_pairs(history) if pairs is None else pairs
    memo = state.memo.setdefault(str(pol), {})
    summarized: list[ToolPair] = []
    cut, mode = 0, "evict"
    if pol.kind == "keep-last":
        cut = max(0, len(pairs) - pol.keep)
        window = pol.summary_window
        if window and cut:
            summarized = pairs[:cut] if window < 0 else pairs[max(0, cut - window) : cut]
    elif pol.kind == "clear-results":
        cut, mode = max(0, len(pairs) - pol.keep), "clear"
    elif pol.kind == "compact":

        def summary_tokens(boundary: int) -> int:
            summary = summaries.get(pairs[:boundary])
            return state.message_tokens(_summary_view(state, summary, boundary))

        cut = compaction_boundary(memo.setdefault("scan", {}), history, pairs, pol.threshold, pol.keep, base_tokens,
                                  state.message_tokens, summary_tokens)
        summarized = pairs[:cut]
    elif pol.kind == "self-edit":
        evicted, replaced = _self_edits(pairs)
        messages = _render(history, pairs, evicted, set(), replaced, {}, state)
        return ContextView(messages=messages, evicted_pairs=sorted(evicted | set(replaced)))
    elif pol.kind != "full":
        raise PolicyError(f"unknown context policy kind {pol.kind!r}")

    inserts: dict[int, dict[str, Any]] = {}
    if summarized:
        inserts[summarized[0].call_message] = _summary_view(state, summaries.get(summarized), len(summarized))
    messages = render_prefix(memo.setdefault("render", {}), history, pairs, cut, mode, inserts, state.derived,
                             lambda p: CLEARED_PLACEHOLDER.format(name=p.name))
    gone = [p.index for p in pairs[:cut] if p.result is not None] if mode == "clear" else list(range(cut))
    if messages is None:  # an irregular layout: render message by message
        evicted = set(gone) if mode == "evict" else set()
        cleared = set(gone) if mode == "clear" else set()
        messages = _render(history, pairs, evicted, cleared, {}, inserts, state)
    return ContextView(
        messages=messages,
        evicted_pairs=gone,
        summary_usage=summaries.usage,
        summarizer_calls=summaries.calls,
        summarized_pairs=[p.index for p in summarized],
    )


def _summary_view(state: PolicyState, summary: Summary, n: int) -> dict[str, Any]:
    """The summary message for `n` pairs; the same object for the same summary (replays memoize by identity)."""
    return state.derived(summary, f"summary:{n}", lambda: _summary_message(summary, n))


def _render(
    history: list[dict[str, Any]],
    pairs: list[ToolPair],
    evicted: set[int],
    cleared: set[int],
    replaced: dict[int, str],
    inserts: dict[int, dict[str, Any]],
    state: PolicyState,
) -> list[dict[str, Any]]:
    """Rebuild the message list; unchanged messages are the same objects (cache simulation relies on it)."""
    if not (evicted or cleared or replaced or inserts):
        return list(history)
    by_result = {p.result_message: p for p in pairs if p.result_message is not None}
    calls_of: dict[int, list[ToolPair]] = {}
    for p in pairs:
        calls_of.setdefault(p.call_message, []).append(p)
    out: list[dict[str, Any]] = []
    for i, msg in enumerate(history):
        if i in inserts:
            out.append(inserts[i])
        pair = by_result.get(i)
        if pair is not None:
            if pair.index in evicted:
                continue
            if pair.index in cleared:
                text = CLEARED_PLACEHOLDER.format(name=pair.name)
                out.append(state.derived(msg, "cleared", lambda m=msg, t=text: {**m, "content": t}))
            elif pair.index in replaced:
                text = replaced[pair.index]
                out.append(state.derived(msg, "replaced:" + text, lambda m=msg, t=text: {**m, "content": t}))
            else:
                out.append(msg)
            continue
        own = calls_of.get(i)
        if own and any(p.index in evicted for p in own):
            kept = [c for c, p in zip(msg.get("tool_calls") or [], own, strict=False) if p.index not in evicted]
            if not kept and not msg.get("content"):
                continue
            variant = "calls:" + ",".join(c.get("id", "") for c in kept)

            def make(m: dict[str, Any] = msg, k: list[dict[str, Any]] = kept) -> dict[str, Any]:
                new = {key: v for key, v in m.items() if key != "tool_calls"}
                if k:
                    new["tool_calls"] = k
                return new

            out.append(state.derived(msg, variant, make))
            continue
        out.append(msg)
    return out


def context_mirror(history: list[dict[str, Any]], max_result_chars: int = 400) -> str:
    """The editable mirror of a context for `self-edit`: one block per tool pair, addressed by call id."""
    lines = ["# Context mirror: edit with the edit_context tool (drop / replace by call id)"]
    for p in find_pairs(history):
        result = (p.result or "")[:max_result_chars]
        lines.append(f"## {p.call_id} {p.name}({p.arguments[:200]})\n{result}")
    return "\n\n".join(lines) + "\n"
