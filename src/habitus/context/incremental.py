"""Incremental helpers that keep a replay linear per request: prefix rendering and the compaction scan.

A replay calls `apply_policy` on ever-longer prefixes of one history. The functions here remember,
in the caller's `memo` dict, how far they got, and continue from there when the new history extends
the old one (checked by identity of its first and last processed messages: histories are treated as
immutable). Otherwise they start over, so results never depend on the memo: the same history gives
the same output with or without it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from typing import Any

from habitus.context.summarize import ToolPair

Message = dict[str, Any]


def _call_messages(memo: dict[str, Any], pairs: list[ToolPair]) -> list[int]:
    """`[p.call_message for p in pairs]`, extended in place across calls while pairs only grow."""
    cm: list[int] = memo.setdefault("call_messages", [])
    if len(cm) > len(pairs) or (cm and pairs[len(cm) - 1].call_message != cm[-1]):
        cm.clear()
    cm.extend(p.call_message for p in pairs[len(cm) :])
    return cm


def _valid(memo: dict[str, Any], history: list[Message], upto: int) -> bool:
    return (
        memo.get("first") is (history[0] if history else None)
        and upto <= len(history)
        and (upto == 0 or memo.get("last") is history[upto - 1])
    )


def render_prefix(
    memo: dict[str, Any],
    history: list[Message],
    pairs: list[ToolPair],
    cut: int,
    mode: str,
    inserts: dict[int, Message],
    derived: Callable[[Message, str, Callable[[], Message]], Message],
    placeholder: Callable[[ToolPair], str],
) -> list[Message] | None:
    """The context when the oldest `cut` pairs are evicted (mode 'evict') or have their results cleared ('clear').

    Returns None when the layout is irregular (a message holds both an affected and a kept call, or an
    affected result comes after the first kept call); the caller then renders generically.
    """
    if cut == 0 and not inserts:
        return list(history)
    cut_msg = len(history) if cut >= len(pairs) else pairs[cut].call_message
    if 0 < cut < len(pairs) and pairs[cut - 1].call_message == cut_msg:
        return None
    reusable = (_valid(memo, history, memo.get("upto_msg", 0)) and memo.get("upto_cut", 0) <= cut
                and memo.get("upto_msg", 0) <= cut_msg and memo.get("mode") == mode)
    if not reusable:
        memo.clear()
        memo.update(first=history[0] if history else None, last=None, upto_msg=0, upto_cut=0, out=[], src=[],
                    mode=mode)
    start_cut, start_msg = memo["upto_cut"], memo["upto_msg"]
    affected: dict[int, ToolPair] = {}
    for p in pairs[start_cut:cut]:
        if p.result_message is not None and p.result_message >= cut_msg:
            return None
        if mode == "evict":
            affected[p.call_message] = p
        if p.result_message is not None:
            affected[p.result_message] = p
    out: list[Message] = memo["out"]
    src: list[int] = memo["src"]
    for i in range(start_msg, cut_msg):
        msg = history[i]
        pair = affected.get(i)
        if pair is None:
            out.append(msg)
            src.append(i)
        elif mode == "clear":
            text = placeholder(pair)
            out.append(derived(msg, "cleared", lambda m=msg, t=text: {**m, "content": t}))
            src.append(i)
        elif msg.get("role") == "assistant" and msg.get("content"):
            out.append(derived(msg, "calls:", lambda m=msg: {k: v for k, v in m.items() if k != "tool_calls"}))
            src.append(i)
        # else: an evicted call or result message is dropped
    memo.update(upto_msg=cut_msg, upto_cut=cut, last=history[cut_msg - 1] if cut_msg else None)
    if not inserts:
        return out + history[cut_msg:]
    result: list[Message] = []
    position = 0
    for anchor in sorted(inserts):
        at = bisect_left(src, anchor)
        result += out[position:at]
        result.append(inserts[anchor])
        position = at
    return result + out[position:] + history[cut_msg:]


def compaction_boundary(
    memo: dict[str, Any],
    history: list[Message],
    pairs: list[ToolPair],
    threshold: int,
    keep: int,
    base_tokens: int,
    message_tokens: Callable[[Message], int],
    summary_tokens_for: Callable[[int], int],
) -> int:
    """How many leading pairs `compact:T:K` has summarized: replays the run pair by pair.

    After each tool result (and at the end of the history), when the context (base + other messages +
    summary + pairs not yet compacted) passes `threshold`, every pair but the last `keep` completed
    ones is summarized; `summary_tokens_for(boundary)` gives the size of that summary message.
    """
    cm = _call_messages(memo, pairs)
    if not (_valid(memo, history, memo.get("upto", 0)) and memo.get("base") == base_tokens
            and memo.get("npairs", 0) <= len(pairs)):
        saved = memo.get("call_messages")
        memo.clear()
        memo.update(call_messages=saved if saved is not None else cm, first=history[0] if history else None,
                    last=None, upto=0, base=base_tokens, other=base_tokens, pair_tokens=[], boundary=0,
                    summary=0, window=0, npairs=0)
    pair_tokens: list[int] = memo["pair_tokens"]
    pair_tokens.extend([0] * (len(pairs) - len(pair_tokens)))
    other, boundary, summary, window = memo["other"], memo["boundary"], memo["summary"], memo["window"]
    for i in range(memo["upto"], len(history)):
        tokens = message_tokens(history[i])
        j = bisect_left(cm, i)
        callers = []
        while j < len(cm) and cm[j] == i:
            callers.append(j)
            j += 1
        result_of = None
        if not callers and history[i].get("role") == "tool":
            k = bisect_left(cm, i) - 1
            while k >= 0 and k >= len(cm) - 64:
                if pairs[k].result_message == i:
                    result_of = k
                    break
                k -= 1
        if callers:
            share = tokens // len(callers)
            for j in callers:
                pair_tokens[j] += share
            window += share * len(callers) if callers[0] >= boundary else 0
            other += tokens - share * len(callers)
        elif result_of is not None:
            pair_tokens[result_of] += tokens
            if result_of >= boundary:
                window += tokens
            completed = result_of + 1
            if other + summary + window > threshold and completed - keep > boundary:
                new_boundary = completed - keep
                window -= sum(pair_tokens[boundary:new_boundary])
                boundary = new_boundary
                summary = summary_tokens_for(boundary)
        else:
            other += tokens
    memo.update(upto=len(history), last=history[-1] if history else None, other=other, boundary=boundary,
                summary=summary, window=window, npairs=len(pairs))
    # the end of the history is a checkpoint too, but it is not remembered: a longer history has its own end
    if other + summary + window > threshold and len(pairs) - keep > boundary:
        boundary = len(pairs) - keep
        summary_tokens_for(boundary)
    return boundary
