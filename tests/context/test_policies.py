"""Context policies on hand-built chat histories: what is kept, where summaries go, what is never evicted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from habitus.context import (
    PolicyError,
    PolicyState,
    StateExtractorSummarizer,
    Summary,
    ToolPair,
    apply_policy,
    context_mirror,
    find_pairs,
    parse_policy,
)
from habitus.context.policies import SELF_EDIT_TOOL_NAME
from habitus.core.trace import Usage


def call(i: int, name: str = "get_item", args: dict[str, Any] | None = None) -> dict[str, Any]:
    arguments = json.dumps(args if args is not None else {"id": i})
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": arguments}}],
    }


def result(i: int, content: Any = None) -> dict[str, Any]:
    body = content if content is not None else json.dumps({"item": i, "status": "done"})
    return {"role": "tool", "tool_call_id": f"c{i}", "content": body}


def history(n_pairs: int, user_every: int = 0) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are careful."}, {"role": "user", "content": "go"}]
    for i in range(n_pairs):
        msgs += [call(i), result(i)]
        if user_every and (i + 1) % user_every == 0:
            msgs.append({"role": "user", "content": f"user turn after {i}"})
    return msgs


def visible_call_ids(messages: list[dict[str, Any]]) -> list[str]:
    return [c["id"] for m in messages for c in m.get("tool_calls") or []]


def visible_result_ids(messages: list[dict[str, Any]]) -> list[str]:
    return [m["tool_call_id"] for m in messages if m["role"] == "tool"]


def summaries(messages: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [(i, m["content"]) for i, m in enumerate(messages) if m["content"].startswith("[Context summary")]


@pytest.mark.parametrize(
    ("spec", "kind", "keep", "window", "threshold"),
    [
        ("full", "full", 0, None, 0),
        ("keep-last:5", "keep-last", 5, None, 0),
        ("keep-last:5+summary:3", "keep-last", 5, 3, 0),
        ("keep-last:5+summary:-1", "keep-last", 5, -1, 0),
        ("compact:50000", "compact", 3, None, 50000),
        ("compact:50k:2", "compact", 2, None, 50000),
        ("clear-results:4", "clear-results", 4, None, 0),
        ("self-edit", "self-edit", 0, None, 0),
        (" Keep-Last:2 ", "keep-last", 2, None, 0),
    ],
)
def test_parse_policy_accepts_every_documented_form(spec, kind, keep, window, threshold):
    pol = parse_policy(spec)
    assert (pol.kind, pol.keep, pol.summary_window, pol.threshold) == (kind, keep, window, threshold)


@pytest.mark.parametrize(
    "spec", ["", "keep", "keep-last", "keep-last:x", "keep-last:5+sum:3", "compact:", "clear-results:-2", "prune:3"]
)
def test_parse_policy_rejects_bad_specs_with_the_accepted_forms(spec):
    with pytest.raises(PolicyError, match="keep-last:N"):
        parse_policy(spec)


@pytest.mark.parametrize(
    ("spec", "calls", "results", "evicted"),
    [
        ("full", ["c0", "c1", "c2", "c3", "c4", "c5"], ["c0", "c1", "c2", "c3", "c4", "c5"], []),
        ("keep-last:2", ["c4", "c5"], ["c4", "c5"], [0, 1, 2, 3]),
        ("keep-last:0", [], [], [0, 1, 2, 3, 4, 5]),
        ("keep-last:10", ["c0", "c1", "c2", "c3", "c4", "c5"], ["c0", "c1", "c2", "c3", "c4", "c5"], []),
        ("keep-last:2+summary:2", ["c4", "c5"], ["c4", "c5"], [0, 1, 2, 3]),
        ("clear-results:2", ["c0", "c1", "c2", "c3", "c4", "c5"], ["c0", "c1", "c2", "c3", "c4", "c5"], [0, 1, 2, 3]),
    ],
)
def test_policy_keeps_the_expected_pairs(spec, calls, results, evicted):
    view = apply_policy(spec, history(6))
    assert visible_call_ids(view.messages) == calls
    assert visible_result_ids(view.messages) == results
    assert view.evicted_pairs == evicted


@pytest.mark.parametrize(
    "spec", ["keep-last:0", "keep-last:1+summary:2", "keep-last:1+summary:-1", "compact:10:1", "clear-results:0"]
)
def test_system_prompt_and_user_turns_are_never_evicted(spec):
    hist = history(6, user_every=2)
    view = apply_policy(spec, hist)
    wanted = [m for m in hist if m["role"] in ("system", "user")]
    kept = [m for m in view.messages if m["role"] in ("system", "user") and not m["content"].startswith("[Context")]
    assert kept == wanted
    assert view.messages[0]["role"] == "system"


def test_summary_covers_the_w_most_recently_evicted_pairs_and_sits_where_they_were():
    view = apply_policy("keep-last:2+summary:2", history(6))
    assert view.summarized_pairs == [2, 3]
    [(pos, text)] = summaries(view.messages)
    # system, user, summary (where c2 was), then the kept pairs c4, c5
    assert pos == 2
    assert view.messages[pos + 1]["tool_calls"][0]["id"] == "c4"
    assert "2 earlier tool call(s)" in text
    assert 'get_item({"id": 2})' in text and 'get_item({"id": 3})' in text
    assert 'get_item({"id": 1})' not in text  # older evicted pairs are dropped, not summarized
    assert view.summarizer_calls == 1


def test_summary_window_minus_one_summarizes_everything_evicted_at_the_first_eviction_point():
    view = apply_policy("keep-last:2+summary:-1", history(6, user_every=3))
    assert view.summarized_pairs == [0, 1, 2, 3]
    [(pos, text)] = summaries(view.messages)
    assert [m["role"] for m in view.messages[:pos]] == ["system", "user"]
    assert all(f'get_item({{"id": {i}}})' in text for i in range(4))


def test_summary_window_zero_is_plain_keep_last():
    view = apply_policy("keep-last:2+summary:0", history(6))
    assert summaries(view.messages) == []
    assert view.summarizer_calls == 0


def test_clear_results_keeps_calls_and_replaces_old_results_with_a_placeholder():
    view = apply_policy("clear-results:1", history(3))
    contents = [m["content"] for m in view.messages if m["role"] == "tool"]
    assert contents[:2] == ["[result of get_item cleared from the context]"] * 2
    assert json.loads(contents[2]) == {"item": 2, "status": "done"}


def test_compact_summarizes_all_but_the_last_k_pairs_once_the_context_passes_t():
    small = apply_policy("compact:100000", history(6))
    assert small.evicted_pairs == [] and summaries(small.messages) == []
    big = apply_policy("compact:80:2", history(6))
    kept = visible_call_ids(big.messages)
    assert len(kept) >= 2 and kept == [f"c{i}" for i in range(6 - len(kept), 6)]
    assert big.summarized_pairs == list(range(6 - len(kept)))
    assert len(summaries(big.messages)) == 1


def test_compact_repeats_only_when_the_context_passes_t_again():
    hist = history(30)
    view = apply_policy("compact:150:2", hist)
    # after a compaction the context restarts small, so not every pair triggers one
    assert 1 < view.summarizer_calls < 28


def test_policies_are_pure_functions_of_the_history():
    hist = history(8, user_every=3)
    for spec in ["full", "keep-last:3", "keep-last:3+summary:2", "compact:60", "clear-results:2", "self-edit"]:
        first = apply_policy(spec, hist)
        second = apply_policy(spec, [dict(m) for m in hist])
        assert first.messages == second.messages, spec
        assert first.evicted_pairs == second.evicted_pairs, spec


def test_the_input_history_is_not_modified():
    hist = history(5)
    before = json.dumps(hist, sort_keys=True)
    for spec in ["keep-last:1+summary:-1", "clear-results:1", "compact:10:1"]:
        apply_policy(spec, hist)
    assert json.dumps(hist, sort_keys=True) == before


class CountingSummarizer:
    """A summarizer that records its calls and reports a token usage per call, like a paid model would."""

    name = "counting"

    def __init__(self) -> None:
        self.calls: list[list[int]] = []

    def summarize(self, pairs: list[ToolPair]) -> Summary:
        self.calls.append([p.index for p in pairs])
        return Summary(text=f"{len(pairs)} pairs", usage=Usage(input_tokens=100, output_tokens=10), calls=1)


def test_summary_cache_pays_once_for_the_same_evicted_pairs():
    summarizer = CountingSummarizer()
    state = PolicyState()
    hist = history(6)
    first = apply_policy("keep-last:2+summary:2", hist, summarizer=summarizer, state=state)
    again = apply_policy("keep-last:2+summary:2", hist + [{"role": "user", "content": "more"}],
                         summarizer=summarizer, state=state)
    assert summarizer.calls == [[2, 3]]
    assert (first.summarizer_calls, first.summary_usage.input_tokens) == (1, 100)
    assert (again.summarizer_calls, again.summary_usage.input_tokens) == (0, 0)
    later = apply_policy("keep-last:2+summary:2", history(7), summarizer=summarizer, state=state)
    assert later.summarizer_calls == 1 and summarizer.calls[-1] == [3, 4]


def test_parallel_calls_in_one_message_are_separate_pairs():
    msg = {
        "role": "assistant",
        "content": "checking both",
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "read", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "read", "arguments": "{}"}},
        ],
    }
    hist = [
        {"role": "user", "content": "x"},
        msg,
        {"role": "tool", "tool_call_id": "a", "content": "A"},
        {"role": "tool", "tool_call_id": "b", "content": "B"},
    ]
    pairs = find_pairs(hist)
    assert [(p.call_id, p.result) for p in pairs] == [("a", "A"), ("b", "B")]
    view = apply_policy("keep-last:1", hist)
    assert visible_call_ids(view.messages) == ["b"]
    assert view.messages[1]["content"] == "checking both"  # assistant text is not a pair: it stays


def test_results_without_ids_pair_in_order():
    hist = [call(0), {"role": "tool", "content": "first"}, call(1), {"role": "tool", "content": "second"}]
    assert [p.result for p in find_pairs(hist)] == ["first", "second"]


def test_self_edit_takes_effect_after_the_edit_result_and_only_on_earlier_pairs():
    edit_args = {"drop": ["c0"], "replace": {"c1": "note: item 1 is fine"}}
    hist = history(3)
    hist.append(call(9, SELF_EDIT_TOOL_NAME, edit_args))
    pending = apply_policy("self-edit", hist)
    assert visible_call_ids(pending.messages)[:2] == ["c0", "c1"]  # no result yet: no effect
    hist.append(result(9, "ok"))
    view = apply_policy("self-edit", hist)
    assert "c0" not in visible_call_ids(view.messages)
    replaced = next(m for m in view.messages if m.get("tool_call_id") == "c1")
    assert replaced["content"] == "note: item 1 is fine"
    assert view.evicted_pairs == [0, 1]
    assert "## c2 get_item" in context_mirror(hist)


def test_state_extractor_keeps_latest_values_actions_and_open_items():
    pairs_hist = [
        call(0, "get_order", {"order_id": "ORD-123456"}),
        result(0, json.dumps({"order": {"id": "ORD-123456", "total": 10.5, "status": "pending"}})),
        call(1, "update_order", {"order_id": "ORD-123456"}),
        result(1, json.dumps({"order": {"id": "ORD-123456", "total": 12.25, "status": "pending"}})),
        call(2, "charge", {"amount": 12.25}),
        result(2, "Error: card declined"),
    ]
    text = StateExtractorSummarizer().summarize(find_pairs(pairs_hist)).text
    assert "order.total: 12.25" in text and "10.5" not in text
    assert "order.status = pending" in text  # an open item
    assert "charge failed: Error: card declined" in text
    assert "get_order(" in text and "update_order(" in text


def test_state_extractor_resolves_failures_that_later_succeeded_and_respects_its_cap():
    hist = [call(0, "run"), result(0, "Traceback: boom"), call(1, "run"), result(1, json.dumps({"ok": True}))]
    text = StateExtractorSummarizer().summarize(find_pairs(hist)).text
    assert "run failed" not in text
    big = [m for i in range(200) for m in (call(i), result(i, json.dumps({f"field{i}": "x" * 50})))]
    capped = StateExtractorSummarizer(max_chars=500).summarize(find_pairs(big)).text
    assert len(capped) <= 500 and "field199" in capped  # most recent values first


@pytest.mark.parametrize(
    "spec",
    ["full", "keep-last:3", "keep-last:3+summary:2", "keep-last:2+summary:-1", "compact:120:2", "clear-results:3",
     "self-edit"],
)
def test_a_replay_with_shared_state_gives_the_same_contexts_as_fresh_calls(spec):
    hist = history(25, user_every=4)
    state = PolicyState()
    for n in range(1, len(hist) + 1):
        prefix = hist[:n]
        replayed = apply_policy(spec, prefix, state=state)
        fresh = apply_policy(spec, prefix)
        assert replayed.messages == fresh.messages, (spec, n)
        assert replayed.evicted_pairs == fresh.evicted_pairs, (spec, n)
    # going back to a shorter history (not a prefix extension) still gives the fresh answer
    assert apply_policy(spec, hist[:9], state=state).messages == apply_policy(spec, hist[:9]).messages
