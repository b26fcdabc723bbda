"""Every SpecStory export generation found in public repositories reads into steps and tool calls.

Fixtures (`specstory_fixtures.py`) are synthetic exports in each generation's structure; the counts
below are what each holds, counted by hand from the fixture.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from specstory_fixtures import (
    ALL,
    CLAUDE_CLI_2025,
    CODEX_V2,
    CURSOR_AGENT_2025,
    CURSOR_CHAT_2025,
    CURSOR_EARLY_2025,
    CURSOR_TOOL_LINES_2025,
    CURSOR_V2,
    OPENCODE_V2,
)

from habitus.capture import detect_format, read_trace_file
from habitus.capture.common import ReadResult
from habitus.capture.specstory_markdown import iso_stamp, locale_stamp
from habitus.core import Trace
from habitus.learn.records import record_from_trace

# name: (steps, tool calls, steps by kind, tool names in order)
EXPECTED = {
    "cursor-early-2025": (10, 5, {"user": 1, "assistant": 4, "tool": 5},
                          ["list_dir", "codebase_search", "read_file", "edit_file", "run_terminal_cmd"]),
    "cursor-chat-2025": (5, 2, {"user": 1, "assistant": 2, "tool": 2}, ["edit_file", "edit_file"]),
    "cursor-agent-2025": (11, 7, {"user": 1, "assistant": 3, "tool": 7},
                          ["grep_search", "read_file", "read_file", "read_file", "edit_file", "edit_file",
                           "run_terminal_cmd"]),
    "cursor-tool-lines-2025": (14, 9, {"user": 2, "thinking": 1, "assistant": 2, "tool": 9},
                               ["codebase_search", "glob_file_search", "read_file", "todo_write", "search_replace",
                                "write", "read_lints", "run_terminal_cmd", "grep"]),
    "cursor-v2": (7, 4, {"user": 1, "thinking": 1, "assistant": 1, "tool": 4},
                  ["read_file_v2", "codebase_search", "edit_file_v2", "run_terminal_command_v2"]),
    "claude-cli-2025": (10, 6, {"user": 2, "assistant": 2, "tool": 6},
                        ["Read", "Write", "Edit", "Bash", "Task", "Grep"]),
    "codex-v2": (6, 3, {"user": 1, "thinking": 1, "assistant": 1, "tool": 3},
                 ["exec_command", "apply_patch", "exec_command"]),
    "opencode-v2": (4, 2, {"user": 1, "assistant": 1, "tool": 2}, ["bash", "edit"]),
    "copilot-vscode-2025": (2, 0, {"user": 1, "assistant": 1}, []),
}
# name: (agent, model, started, files the task changed as learning sees them)
IDENTITY = {
    "cursor-early-2025": ("specstory", None, "2025-03-14T16:05:09", ["src/components/Header.tsx"]),
    "cursor-chat-2025": ("specstory", None, "2025-02-11T17:37:33",
                         ["src/components/Header.tsx", "src/styles/badge.css"]),
    "cursor-agent-2025": ("specstory", None, "2025-07-05T21:54:00Z",
                          ["src/checkout/total.ts", "src/checkout/total.test.ts"]),
    "cursor-tool-lines-2025": ("cursor", "claude-4.5-sonnet-thinking", "2025-10-26T19:51:00Z",
                               ["src/checkout/total.ts", "src/checkout/weight.ts"]),
    "cursor-v2": ("cursor", "claude-4.6-opus-high-thinking", "2026-03-11T02:04:00Z", ["src/checkout/coupon.ts"]),
    "claude-cli-2025": ("claude-code", "claude-opus-4-20250514", "2025-07-20T10:28:48Z",
                        ["src/checkout/shipping.ts", "src/checkout/total.ts"]),
    "codex-v2": ("codex", "gpt-5.3-codex", "2026-02-12T05:03:58Z", ["src/checkout/total.ts", "src/checkout/index.ts"]),
    "opencode-v2": ("opencode", "claude-opus-4.6", "2026-02-12T06:43:48Z", ["src/checkout/shipping.ts"]),
    "copilot-vscode-2025": ("copilot-vscode", "copilot/gpt-5-codex", "2025-10-01T16:36:00Z", []),
}


def _export(tmp_path: Path, text: str, name: str = "2025-10-26_19-51Z-weighted-cart-totals.md") -> Path:
    path = tmp_path / "shop" / ".specstory" / "history" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _read(tmp_path: Path, text: str) -> tuple[Trace, ReadResult]:
    result = read_trace_file(_export(tmp_path, text))
    return result.traces[0], result


def _kinds(trace: Trace) -> dict[str, int]:
    return dict(Counter("thinking" if s.meta.get("thinking") else s.kind.value for s in trace.steps))


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_generation_reads_into_its_exact_steps_and_tool_calls(tmp_path: Path, name: str) -> None:
    path = _export(tmp_path, ALL[name])
    assert detect_format(path) == "specstory"
    trace, result = _read(tmp_path, ALL[name])
    steps, calls, kinds, names = EXPECTED[name]
    assert (len(trace.steps), len(trace.tool_calls), _kinds(trace)) == (steps, calls, kinds)
    assert [c.name for c in trace.tool_calls] == names
    agent, model, started, edited = IDENTITY[name]
    assert (trace.agent, trace.model, trace.started) == (agent, model, started)
    assert trace.task == next(s.text for s in trace.steps if s.kind.value == "user")
    assert record_from_trace(trace).files_edited == edited
    assert result.errors == [] and dict(result.unknown_types) == {}


def test_cursor_tool_lines_name_files_commands_searches_and_minute_times(tmp_path: Path) -> None:
    trace, _ = _read(tmp_path, CURSOR_TOOL_LINES_2025)
    inputs = [c.input for c in trace.tool_calls]
    assert inputs[:4] == [{"query": "How are cart totals computed?"}, {"query": "*total*.ts"},
                          {"path": "src/checkout/total.ts"}, {}]
    edit = trace.tool_calls[4]
    assert (edit.input["path"], edit.input["recorded_path"]) == ("src/checkout/total.ts",
                                                                 "c:/Users/dev/shop/src/checkout/total.ts")
    assert edit.input["edits"] == [{
        "old_string": "export function total(items: Item[], discount: number): number {\n"
                      "  const sum = items.reduce((a, i) => a + i.price, 0);\n  return sum - discount;\n}",
        "new_string": "export function total(items: Item[], discount: number): number {\n"
                      "  const sum = items.reduce((a, i) => a + i.price * (i.weight ?? 1), 0);\n"
                      "  return sum - discount;\n}"}]
    assert inputs[5] == {"path": "src/checkout/weight.ts",
                         "content": "export function weightOf(item: Item): number {\n  return item.weight ?? 1;\n}"}
    shell = trace.tool_calls[7]
    assert (shell.input, shell.output, shell.ok) == ({"command": 'cd "c:\\Users\\dev\\shop"; npm test'},
                                                     "Tests: 13 passed, 13 total", True)
    assert inputs[8] == {"query": "weight", "path": "src"}
    assert trace.meta["recorded_root"] == "c:/Users/dev/shop"
    users = [s for s in trace.steps if s.kind.value == "user"]
    assert [s.timestamp for s in users] == ["2025-10-26T19:51:00Z", "2025-10-26T20:27:00Z"]
    assert trace.ended == "2025-10-26T20:27:00Z" and trace.session_id == "0b6c2e0e-4a51-4c58-9d7e-3f1d2a6b8c90"


def test_bare_cursor_bubbles_are_calls_and_a_diff_without_a_file_takes_the_one_the_text_named(tmp_path: Path) -> None:
    trace, _ = _read(tmp_path, CURSOR_AGENT_2025)
    calls = trace.tool_calls
    assert [c.input.get("path") for c in calls] == [None, "src/checkout/total.ts", "src/checkout/discount.ts", None,
                                                     "src/checkout/total.ts", "src/checkout/total.test.ts", None]
    assert calls[0].input == {"query": "discount"}
    assert (calls[2].is_error, calls[2].output) == (True, "Could not find file 'src/checkout/discount.ts' in the "
                                                          "workspace.")
    assert calls[3].input == {} and calls[3].ok  # `Read file: undefined`: a read whose file was lost
    pathless = [s for s in trace.steps if s.tool is calls[4]][0]
    assert pathless.meta == {"tool_type": "write", "path_from_text": True}
    assert calls[4].input["edits"][0]["new_string"].endswith("  return sum - discount;\n}")
    assert (calls[6].input, calls[6].output) == ({"command": "npm test"}, "Tests: 12 passed, 12 total")
    early, _ = _read(tmp_path / "early", CURSOR_EARLY_2025)
    assert [c.input for c in early.tool_calls][:3] == [{"path": "src/components"}, {"query": "cart count"},
                                                       {"path": "src/components/Header.tsx"}]
    assert [s.text for s in early.steps if s.kind.value == "assistant"][2] == "Cancelled"  # a status, kept as text


def test_chat_code_blocks_labelled_with_a_file_are_edits_and_line_citations_are_not(tmp_path: Path) -> None:
    trace, _ = _read(tmp_path, CURSOR_CHAT_2025)
    diff, css = trace.tool_calls
    assert diff.input == {"path": "src/components/Header.tsx", "edits": [{
        "old_string": '  return <header>Shop <span className="badge">{count}</span></header>;',
        "new_string": '  const full = count >= MAX_ITEMS;\n  return <header>Shop <span className={full ? "badge red" '
                      ': "badge"}>{count}</span></header>;'}]}
    assert css.input == {"path": "src/styles/badge.css", "new_string": ".badge.red { background: #c00; }"}
    steps = [s for s in trace.steps if s.tool is not None]
    assert [s.meta for s in steps] == [{"tool_type": "write", "in_text": True}] * 2
    assert "```12:14:src/components/Header.tsx" in trace.steps[1].text  # the citation stays text


def test_v2_cursor_output_is_unescaped_and_absolute_paths_become_repo_relative(tmp_path: Path) -> None:
    trace, _ = _read(tmp_path, CURSOR_V2)
    read, search, edit, shell = trace.tool_calls
    assert read.input == {"path": "src/checkout/total.ts", "recorded_path": "/Users/dev/shop/src/checkout/total.ts"}
    assert search.input == {"query": "coupon checks"} and search.output is None
    assert edit.input["path"] == "src/checkout/coupon.ts"
    assert shell.input == {"command": "cd /Users/dev/shop && npm test"}
    assert shell.output == "FAIL src/checkout/coupon.test.ts\n  expected <10> got <12>\n"
    claude, _ = _read(tmp_path / "claude", CLAUDE_CLI_2025.replace("FAIL src", "FAIL &lt;src&gt;"))
    assert "&lt;src&gt;" in (claude.tool_calls[3].output or "")  # only the Cursor extension escapes


def test_claude_cli_2025_results_errors_written_files_and_sidechains(tmp_path: Path) -> None:
    trace, _ = _read(tmp_path, CLAUDE_CLI_2025)
    read, write, edit, bash, task, grep = trace.tool_calls
    assert read.input == {"path": "src/checkout/total.ts", "recorded_path": "./src/checkout/total.ts"}
    assert read.output is not None and read.output.startswith("1→export function total(")
    assert (write.input["path"], write.input["content"]) == ("src/checkout/shipping.ts", "export const FLAT_RATE = 5;")
    assert edit.input == {"path": "src/checkout/total.ts", "recorded_path": "/Users/ann/dev/shop/src/checkout/total.ts"}
    assert bash.input == {"command": "cd /Users/ann/dev/shop && npm test -- checkout",
                          "description": "Run the checkout tests"}
    assert (bash.is_error, bash.exit_code, bash.ok) == (True, 1, False)
    assert task.input == {"description": "Find other callers of total"}
    assert [s.sidechain for s in trace.steps] == [False] * 7 + [True, True, False]
    assert grep.output == "/Users/ann/dev/shop/src/pages/cart.tsx:4:import { total } from '../checkout/total';"


def test_codex_patches_and_opencode_generic_input_are_edits_with_their_text(tmp_path: Path) -> None:
    codex, _ = _read(tmp_path, CODEX_V2)
    search, patch, check = codex.tool_calls
    assert (search.input, search.exit_code) == ({"command": 'rg -n "total\\(" src'}, 0)
    assert patch.input["input"] == (
        "*** Begin Patch\n*** Update File: src/checkout/total.ts\n@@\n"
        "-export function total(items: Item[], discount: number): number {\n"
        "+export function cartTotal(items: Item[], discount: number): number {\n"
        '*** Add File: src/checkout/index.ts\n+export { cartTotal } from "./total";\n*** End Patch')
    assert (check.input, check.exit_code, check.ok) == ({"command": "npx tsc --noEmit"}, 2, False)
    opencode, _ = _read(tmp_path / "opencode", OPENCODE_V2)
    bash, edit = opencode.tool_calls
    assert bash.input == {"command": "grep -rn FLAT_RATE /home/dev/shop/src", "description": "Find the rate"}
    assert edit.input == {"path": "src/checkout/shipping.ts", "new_string": "export const FLAT_RATE = 6;",
                          "old_string": "export const FLAT_RATE = 5;", "description": "Set the rate to 6",
                          "recorded_path": "/home/dev/shop/src/checkout/shipping.ts"}
    assert record_from_trace(opencode).edits[0].added == ["export const FLAT_RATE = 6;"]


def test_unrecognised_blocks_are_kept_as_text_and_counted(tmp_path: Path) -> None:
    text = CURSOR_AGENT_2025.replace(
        "Read file: src/checkout/total.ts\n",
        "<details><summary>Something new • 3 things</summary>\n\nrows\n</details>\n\n---\n\n"
        "<tool-use data-tool-type=\"unknown\"><details><summary>no name</summary></details></tool-use>\n")
    trace, result = _read(tmp_path, text)
    assert dict(result.unknown_types) == {"specstory: <details> that is not a tool": 1,
                                          "specstory: tool call without a name": 1}
    assert len(trace.tool_calls) == 7 and any("Something new" in s.text for s in trace.steps)


def test_codex_commands_wrapped_in_a_shell_are_read_as_the_script(tmp_path: Path) -> None:
    """Codex's legacy `Tool use: **shell**` lines with `Output:` and the generic `- command:` rendering of
    its argv (shapes as a third-party SpecStory parser documents them; no such public export was read)."""
    text = (
        "<!-- Codex CLI Session 66666666-aaaa-bbbb-cccc-000000000009 (2025-10-26 16:21:00Z) -->\n\n"
        "_**User**_\n\nvet the code\n\n---\n\n_**Agent (gpt-5-codex)**_\n\nTool use: **shell**\n\n"
        "`bash -lc go vet ./pkg/...`\n\nOutput:\n```\nok\n```\n\n"
        "_**Agent (gpt-5-codex)**_\n\n<tool-use data-tool-type=\"shell\" data-tool-name=\"shell\"><details>\n"
        "<summary>Tool use: **shell**</summary>\n\n**Input:**\n\n- command: `[bash -lc go test ./...]`\n"
        "- timeout_ms: `120000`\n\n**Error:**\n\n```\nFAIL pkg/x\n```\n</details></tool-use>\n")
    trace, _ = _read(tmp_path, text)
    vet, test = trace.tool_calls
    assert (vet.input, vet.output, vet.ok) == ({"command": "go vet ./pkg/..."}, "ok", True)
    assert (test.input, test.output, test.ok) == ({"command": "go test ./...", "timeout_ms": "120000"},
                                                  "FAIL pkg/x", False)
    assert trace.started == "2025-10-26T16:21:00Z" and trace.agent == "codex"


@pytest.mark.parametrize(("text", "iso"), [
    ("_**User (2025-10-01 16:50Z)**_", "2025-10-01T16:50:00Z"),
    ("(2025-11-13 21:12:14Z)", "2025-11-13T21:12:14Z"),
    ("(2025-11-13 21:12:14-0700)", "2025-11-13T21:12:14-07:00"),
    ("(2025-09-29 07:44+0200)", "2025-09-29T07:44:00+02:00"),
    ("Session 5d9e (2025-07-20_10-28-48Z)", "2025-07-20T10:28:48Z"),
    ("(2025-10-11T18:39:00.871Z)", "2025-10-11T18:39:00Z"),
    ("# Starting Task #008 (2025-04-28 14:53:38)", "2025-04-28T14:53:38"),
    ("a model name, no time", None),
])
def test_times_are_read_in_every_spelling_specstory_wrote(text: str, iso: str | None) -> None:
    assert iso_stamp(text) == iso


@pytest.mark.parametrize(("title", "iso"), [
    ("## Executing Phase 1 (2/13/2025, 9:33:58 AM)", "2025-02-13T09:33:58"),
    ("## Untitled (25/02/2025, 05:43:52)", "2025-02-25T05:43:52"),
    ("## Late (12/1/2025, 12:05:00 AM)", "2025-12-01T00:05:00"),
    ("## Ambiguous (3/4/2025, 10:00:00)", None),  # March 4 or 3 April: the file name's time is used
])
def test_an_early_exports_locale_title_time_is_read_only_when_day_and_month_are_clear(title: str, iso: str | None,
                                                                                      tmp_path: Path) -> None:
    assert locale_stamp(title) == iso
    text = f"## SpecStory\n\n{title}\n\n_**User**_\n\nhello\n\n---\n\n_**Assistant**_\n\nhi\n"
    trace = read_trace_file(_export(tmp_path, text, "2025-03-04_09-00-hello.md")).traces[0]
    assert trace.started == (iso or "2025-03-04T09:00:00")
