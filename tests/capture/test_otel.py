"""OpenTelemetry GenAI reader: OTLP/JSON exports and span JSON lines, hand-written like real exporters write them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_redact import SECRETS

from habitus.capture import detect_format, read_trace_file
from habitus.capture.ingest import ingest_paths
from habitus.capture.reader import iter_trace_files
from habitus.store import open_store

TRACE = "5b8efff798038103d269b633813fc60c"
T0 = 1_764_460_800_000_000_000  # 2025-11-30T00:00:00Z in ns
SECRET = SECRETS["openai"]


def _value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}  # OTLP/JSON writes 64-bit integers as strings
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [_value(x) for x in v]}}
    return {"stringValue": v}


def span(span_id: str, name: str, start_s: float, end_s: float, attrs: dict[str, Any], *, parent: str = "a0",
         error: str | None = None, events: list[dict[str, Any]] | None = None, trace: str = TRACE) -> dict[str, Any]:
    return {
        "traceId": trace, "spanId": span_id, "parentSpanId": parent if span_id != "a0" else "", "name": name,
        "kind": 1, "startTimeUnixNano": str(T0 + int(start_s * 1e9)), "endTimeUnixNano": str(T0 + int(end_s * 1e9)),
        "attributes": [{"key": k, "value": _value(v)} for k, v in attrs.items()],
        "events": events or [],
        "status": {"code": 2, "message": error} if error else {"code": 0},
    }


def _msgs(*messages: tuple[str, list[dict[str, Any]]]) -> str:
    return json.dumps([{"role": role, "parts": parts} for role, parts in messages])


def _text(t: str) -> dict[str, Any]:
    return {"type": "text", "content": t}


def agent_spans(trace: str = TRACE, *, fail_agent: bool = False) -> list[dict[str, Any]]:
    """An agent run: two chat calls asking for three tools (one fails), then a final answer."""
    user = ("user", [_text(f"Fix the failing test in calc.py; my key is {SECRET}")])
    pytest_args = {"command": "pytest -q"}
    call1 = ("assistant", [_text("Let me look."),
                           {"type": "tool_call", "id": "call_1", "name": "read_file", "arguments": {"path": "calc.py"}},
                           {"type": "tool_call", "id": "call_2", "name": "bash", "arguments": pytest_args}])
    result1 = ("tool", [{"type": "tool_call_response", "id": "call_1", "response": "def add(a, b): return a - b"},
                        {"type": "tool_call_response", "id": "call_2", "response": "1 failed"}])
    call2 = ("assistant", [{"type": "tool_call", "id": "call_3", "name": "bash", "arguments": pytest_args}])
    chat = "gen_ai.operation.name"
    return [
        span("a0", "invoke_agent coder", 0, 30, {chat: "invoke_agent", "gen_ai.agent.name": "coder",
                                                  "gen_ai.conversation.id": "conv-42"},
             error="crashed" if fail_agent else None, trace=trace),
        span("c1", "chat gpt-4.1", 1, 3, {
            chat: "chat", "gen_ai.request.model": "gpt-4.1", "gen_ai.response.model": "gpt-4.1-2025-04-14",
            "gen_ai.usage.input_tokens": 1200, "gen_ai.usage.output_tokens": 80,
            "gen_ai.usage.cache_read.input_tokens": 1000, "gen_ai.input.messages": _msgs(user),
            "gen_ai.output.messages": _msgs(call1)}, trace=trace),
        span("t1", "execute_tool read_file", 3.1, 3.2, {chat: "execute_tool", "gen_ai.tool.name": "read_file",
                                                        "gen_ai.tool.call.id": "call_1",
                                                        "gen_ai.tool.call.result": "def add(a, b): return a - b"},
             trace=trace),
        span("t2", "execute_tool bash", 3.3, 5, {chat: "execute_tool", "gen_ai.tool.name": "bash",
                                                 "gen_ai.tool.call.id": "call_2", "error.type": "ExitCode"},
             error="Exit code 1: 1 failed", trace=trace),
        span("c2", "chat gpt-4.1", 6, 7, {
            chat: "chat", "gen_ai.request.model": "gpt-4.1", "gen_ai.usage.input_tokens": 1500,
            "gen_ai.usage.output_tokens": 40, "gen_ai.usage.cache_read.input_tokens": 1200,
            "gen_ai.input.messages": _msgs(user, call1, result1), "gen_ai.output.messages": _msgs(call2),
            "gen_ai.vendor.flag": True}, trace=trace),
        span("t3", "execute_tool bash", 7.5, 9, {chat: "execute_tool", "gen_ai.tool.name": "bash",
                                                 "gen_ai.tool.call.id": "call_3",
                                                 "gen_ai.tool.call.arguments": '{"command": "pytest -q"}',
                                                 "gen_ai.tool.call.result": "3 passed"}, trace=trace),
        span("c3", "chat gpt-4.1", 10, 11, {
            chat: "chat", "gen_ai.request.model": "gpt-4.1", "gen_ai.usage.input_tokens": 1700,
            "gen_ai.usage.output_tokens": 30, "gen_ai.output.messages": _msgs(("assistant", [_text("Fixed.")]))},
             trace=trace),
        span("h1", "GET /health", 12, 12.1, {"http.method": "GET"}, trace=trace),
    ]


def otlp(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": _value("my-agent")}]},
                               "scopeSpans": [{"scope": {"name": "openai-agents"}, "spans": spans}]}]}


def write_otlp_document(path: Path, spans: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(otlp(spans), indent=2))
    return path


def write_span_lines(path: Path, spans: list[dict[str, Any]], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(s) + "\n" for s in spans) + tail)
    return path


@pytest.fixture(params=["otlp_document", "otlp_lines", "span_lines"])
def export(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    spans = agent_spans()
    if request.param == "otlp_document":
        return write_otlp_document(tmp_path / "export.json", spans)
    if request.param == "otlp_lines":  # the Collector file exporter: one request per line
        lines = [otlp(spans[:3]), otlp(spans[3:])]
        path = tmp_path / "collector.jsonl"
        path.write_text("".join(json.dumps(x) + "\n" for x in lines))
        return path
    return write_span_lines(tmp_path / "spans.jsonl", spans)


def test_every_export_shape_is_detected_as_otel(export: Path) -> None:
    assert detect_format(export) == "otel"


def test_tool_calls_pair_with_their_tool_spans_and_errors(export: Path) -> None:
    result = read_trace_file(export)
    assert result.format == "otel" and result.errors == []
    (trace,) = result.traces
    calls = trace.tool_calls
    assert [(c.name, c.call_id) for c in calls] == [("read_file", "call_1"), ("bash", "call_2"), ("bash", "call_3")]
    assert [c.is_error for c in calls] == [False, True, False]
    assert calls[1].output == "Exit code 1: 1 failed" and calls[1].exit_code == 1
    assert calls[2].input == {"command": "pytest -q"} and calls[2].output == "3 passed"


def test_usage_is_summed_over_chat_spans_with_cached_tokens_split_out(export: Path) -> None:
    (trace,) = read_trace_file(export).traces
    assert trace.usage.input_tokens == (1200 - 1000) + (1500 - 1200) + 1700
    assert trace.usage.cache_read_tokens == 2200
    assert trace.usage.output_tokens == 150


def test_messages_repeated_by_later_chat_spans_appear_once(export: Path) -> None:
    (trace,) = read_trace_file(export).traces
    kinds = [s.kind.value for s in trace.steps]
    assert kinds == ["user", "assistant", "tool", "tool", "tool", "assistant"]
    assert [s.text for s in trace.steps if s.kind == "assistant"] == ["Let me look.", "Fixed."]


def test_trace_fields_come_from_the_spans(export: Path) -> None:
    (trace,) = read_trace_file(export).traces
    assert (trace.id, trace.source_format, trace.agent, trace.session_id) == (TRACE, "otel", "coder", "conv-42")
    assert trace.model == "gpt-4.1-2025-04-14"
    assert trace.task.startswith("Fix the failing test in calc.py")
    assert (trace.started, trace.ended) == ("2025-11-30T00:00:00.000Z", "2025-11-30T00:00:30.000Z")
    assert trace.outcome.status == "success" and trace.outcome.source == "checks"  # last pytest passed


def test_planted_secret_is_redacted(export: Path) -> None:
    result = read_trace_file(export)
    assert SECRET not in json.dumps(result.traces[0].to_dict())
    assert "[REDACTED" in result.traces[0].task and result.redactions >= 1


def test_unknown_attributes_and_spans_are_counted_not_fatal(export: Path) -> None:
    result = read_trace_file(export)
    assert result.unknown_types["otel:attr:gen_ai.vendor.flag"] == 1
    assert result.unknown_types["otel:span:<not gen_ai>"] == 1


def test_one_trace_per_trace_id(tmp_path: Path) -> None:
    other = "0af7651916cd43dd8448eb211c80319c"
    path = write_span_lines(tmp_path / "two.jsonl", agent_spans() + agent_spans(other, fail_agent=True))
    traces = {t.id: t for t in read_trace_file(path).traces}
    assert set(traces) == {TRACE, other}
    assert len(traces[other].tool_calls) == 3
    assert (traces[other].outcome.status, traces[other].outcome.source) == ("failure", "checks")
    assert "crashed" in (traces[other].outcome.feedback or "")


def test_truncated_last_line_and_junk_lines_are_tolerated(tmp_path: Path) -> None:
    spans = agent_spans()
    tail = 'not json\n{"kind": 3}\n' + json.dumps(spans[-2])[:70]  # the final chat span, cut off mid-write
    path = write_span_lines(tmp_path / "cut.jsonl", spans[:-2], tail=tail)
    result = read_trace_file(path)
    assert result.errors == [] and len(result.traces) == 1
    trace = result.traces[0]
    assert len(trace.tool_calls) == 3 and trace.usage.output_tokens == 120
    assert "Fixed." not in [s.text for s in trace.steps]
    assert result.skipped_lines == 3 and result.unknown_types["<truncated line>"] == 1


def test_cut_off_pretty_printed_export_keeps_what_was_complete(tmp_path: Path) -> None:
    text = "\n".join(json.dumps(s, indent=4) for s in agent_spans())
    path = tmp_path / "console.json"
    path.write_text(text[: len(text) - 40])
    assert detect_format(path) == "otel"
    result = read_trace_file(path)
    assert len(result.traces) == 1 and len(result.traces[0].tool_calls) == 3
    assert result.unknown_types["<truncated line>"] == 1


def test_console_exporter_spans_with_flat_attributes_and_events(tmp_path: Path) -> None:
    base = {"context": {"trace_id": "0x" + TRACE, "span_id": "0x01"}, "kind": "SpanKind.CLIENT", "parent_id": None,
            "resource": {"attributes": {"service.name": "bot"}}}
    chat = dict(base, name="chat claude", start_time="2025-11-30T00:00:01.000000Z", end_time="2025-11-30T00:00:02Z",
                status={"status_code": "UNSET"},
                attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "claude-sonnet-4",
                            "gen_ai.usage.input_tokens": 500, "gen_ai.usage.output_tokens": 20,
                            "gen_ai.usage.cache_creation.input_tokens": 100},
                events=[{"name": "gen_ai.user.message", "timestamp": "2025-11-30T00:00:01Z",
                         "attributes": {"content": "List the files"}},
                        {"name": "gen_ai.choice", "timestamp": "2025-11-30T00:00:02Z",
                         "attributes": {"message": json.dumps({"tool_calls": [
                             {"id": "tc1", "type": "function",
                              "function": {"name": "ls", "arguments": "{\"path\": \".\"}"}}]})}}])
    tool = dict(base, context={"trace_id": "0x" + TRACE, "span_id": "0x02"}, name="execute_tool ls",
                start_time="2025-11-30T00:00:03Z", end_time="2025-11-30T00:00:04Z",
                status={"status_code": "ERROR", "description": "permission denied"},
                attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ls",
                            "gen_ai.tool.call.id": "tc1"}, events=[])
    path = write_span_lines(tmp_path / "console.jsonl", [chat, tool])
    assert detect_format(path) == "otel"
    (trace,) = read_trace_file(path).traces
    assert trace.id == TRACE and trace.agent == "bot" and trace.task == "List the files"
    (call,) = trace.tool_calls
    assert (call.name, call.input, call.is_error, call.output) == ("ls", {"path": "."}, True, "permission denied")
    assert (trace.usage.input_tokens, trace.usage.cache_write_tokens, trace.usage.output_tokens) == (400, 100, 20)


def test_explicit_evaluation_label_sets_the_outcome(tmp_path: Path) -> None:
    spans = agent_spans()
    spans[0]["events"] = [{"name": "gen_ai.evaluation.result", "timeUnixNano": str(T0),
                           "attributes": [{"key": "gen_ai.evaluation.score.label", "value": _value("fail")},
                                          {"key": "gen_ai.evaluation.explanation", "value": _value("wrong fix")}]}]
    (trace,) = read_trace_file(write_otlp_document(tmp_path / "e.json", spans)).traces
    assert (trace.outcome.status, trace.outcome.source, trace.outcome.feedback) == ("failure", "rewards", "wrong fix")


def test_other_json_files_in_a_folder_are_not_walked(tmp_path: Path) -> None:
    write_otlp_document(tmp_path / "export.json", agent_spans())
    (tmp_path / "settings.json").write_text('{"theme": "dark"}')
    assert [p.name for p in iter_trace_files([tmp_path])] == ["export.json"]


def test_ingest_into_a_real_store_is_idempotent_and_keeps_no_secret(tmp_path: Path) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    write_otlp_document(folder / "export.json", agent_spans())
    db = tmp_path / "h.db"
    with open_store(db) as store:
        report = ingest_paths([folder], store)
        assert (report.files, report.traces, report.tool_calls, report.errors) == (1, 1, 3, [])
        stored = store.get_trace(TRACE)
        assert stored is not None and stored.source_format == "otel" and len(stored.tool_calls) == 3
        assert stored.usage.output_tokens == 150
        again = ingest_paths([folder], store)
        assert (again.files, again.files_unchanged) == (0, 1)
    assert SECRET.encode() not in db.read_bytes()


def test_without_captured_content_tool_spans_and_usage_still_make_the_trace(tmp_path: Path) -> None:
    op = "gen_ai.operation.name"
    spans = [span("c1", "chat", 1, 2, {op: "chat", "gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 10,
                                       "gen_ai.usage.output_tokens": 5}),
             span("t1", "execute_tool grep", 3, 4, {op: "execute_tool", "gen_ai.tool.name": "grep"}),
             span("t2", "execute_tool edit", 5, 6, {op: "execute_tool", "gen_ai.tool.name": "edit"}, error="boom")]
    (trace,) = read_trace_file(write_otlp_document(tmp_path / "bare.json", spans)).traces
    assert [(c.name, c.is_error, c.output) for c in trace.tool_calls] == [("grep", False, None), ("edit", True, "boom")]
    assert (trace.usage.input_tokens, trace.usage.output_tokens, trace.task) == (10, 5, "")
    assert trace.outcome.status == "unknown" and trace.outcome.source == "none"


def test_a_tool_span_without_call_id_pairs_with_the_requested_call_by_name(tmp_path: Path) -> None:
    op = "gen_ai.operation.name"
    asked = _msgs(("assistant", [{"type": "tool_call", "id": "x1", "name": "grep", "arguments": {"q": "todo"}}]))
    spans = [span("c1", "chat", 1, 2, {op: "chat", "gen_ai.output.messages": asked}),
             span("t1", "execute_tool grep", 3, 4, {op: "execute_tool", "gen_ai.tool.name": "grep",
                                                    "gen_ai.tool.call.result": "a.py:1: TODO"})]
    (trace,) = read_trace_file(write_span_lines(tmp_path / "s.jsonl", spans)).traces
    (call,) = trace.tool_calls
    assert (call.call_id, call.input, call.output) == ("x1", {"q": "todo"}, "a.py:1: TODO")


def test_openllmetry_flat_prompt_and_completion_attributes(tmp_path: Path) -> None:
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o",
             "gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": "Be brief.",
             "gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": "What is 2+2?",
             "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "4",
             "gen_ai.completion.0.tool_calls.0.id": "q1", "gen_ai.completion.0.tool_calls.0.name": "calc",
             "gen_ai.completion.0.tool_calls.0.arguments": '{"expr": "2+2"}',
             "gen_ai.usage.prompt_tokens": 30, "gen_ai.usage.completion_tokens": 3}
    (trace,) = read_trace_file(write_span_lines(tmp_path / "l.jsonl", [span("c1", "openai.chat", 1, 2, attrs)])).traces
    assert [(s.kind.value, s.text) for s in trace.steps if not s.tool] == [
        ("system", "Be brief."), ("user", "What is 2+2?"), ("assistant", "4")]
    assert trace.task == "What is 2+2?" and trace.tool_calls[0].input == {"expr": "2+2"}
    assert (trace.usage.input_tokens, trace.usage.output_tokens) == (30, 3)


@pytest.mark.parametrize(("attrs", "expected"), [
    ({"habitus.outcome": "failure", "habitus.feedback": "tests red"}, ("failure", "user", "tests red")),
    ({"habitus.outcome": "maybe"}, ("success", "checks", None)),  # not a verdict: the checks decide
])
def test_explicit_outcome_attribute(tmp_path: Path, attrs: dict[str, Any], expected: tuple[Any, ...]) -> None:
    spans = agent_spans()
    spans[0]["attributes"] += [{"key": k, "value": _value(v)} for k, v in attrs.items()]
    (trace,) = read_trace_file(write_otlp_document(tmp_path / "o.json", spans)).traces
    status, source, feedback = expected
    assert (trace.outcome.status, trace.outcome.source) == (status, source)
    assert feedback is None or trace.outcome.feedback == feedback


def test_rewards_map_overrides_span_evidence(tmp_path: Path) -> None:
    path = write_otlp_document(tmp_path / "r.json", agent_spans())
    (trace,) = read_trace_file(path, rewards={TRACE: False}).traces
    assert (trace.outcome.status, trace.outcome.source) == ("failure", "rewards")


def test_a_truncated_single_document_export_is_a_clear_per_file_result(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(otlp(agent_spans()), indent=2)[:300])
    result = read_trace_file(path, fmt="otel")
    assert result.traces == [] and result.unknown_types["<truncated line>"] == 1


def test_spans_with_wrong_field_types_are_skipped_not_fatal(tmp_path: Path) -> None:
    odd_trace = "ffffffffffffffffffffffffffffffff"
    odd = [
        {"traceId": odd_trace, "spanId": "x1", "name": "chat", "attributes": "not a list", "resource": "nope",
         "events": {"name": "x"}, "status": ["bad"], "startTimeUnixNano": "garbage"},
        {"traceId": odd_trace, "spanId": "x2", "name": "chat", "startTimeUnixNano": "12",
         "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                        {"key": "gen_ai.request.temperature", "value": {"doubleValue": "warm"}},
                        {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(
                            [{"role": "assistant", "parts": [{"type": "tool_call", "id": ["list"], "name": 3}]}])}}]},
        {"traceId": 42, "spanId": "x3", "name": "no string trace id"},
    ]
    doc = otlp(agent_spans())
    doc["resourceSpans"].append({"resource": "odd", "scopeSpans": [{"spans": odd}, "not a scope"]})
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(doc))
    result = read_trace_file(path)
    traces = {t.id: t for t in result.traces}
    assert len(traces[TRACE].tool_calls) == 3  # the good trace is whole
    assert result.errors == [] and result.unknown_types["otel:<span without trace id>"] == 1
    assert result.unknown_types["otel:span:<not gen_ai>"] == 2  # the span with no usable fields, the HTTP span
    assert [(c.name, c.call_id) for c in traces[odd_trace].tool_calls] == [("3", None)]


def test_habitus_ingest_cli_reads_an_otel_export(tmp_path: Path) -> None:
    path = write_span_lines(tmp_path / "spans.jsonl", agent_spans())
    env = {**os.environ, "HABITUS_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-m", "habitus", "ingest", str(path), "--json", "-q"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["traces"], report["tool_calls"], report["errors"]) == (1, 3, [])
    assert report["unknown_types"]["otel:span:<not gen_ai>"] == 1
