"""The turns of a SpecStory export, walked line by line into steps.

A role header (`_**User**_`, `_**Assistant (model)**_`, `_**Agent (model time)**_`, `_**Agent - sidechain
(…)**_`, `_**User (sidechain)**_`) opens a turn. Inside one, `---` separates bubbles (Cursor writes one
per message or tool call; early-2025 exports also put a `_****_` line at a tool bubble's top).
A tool call is, by export generation:

- a `<tool-use data-tool-type data-tool-name>` envelope (Markdown v2.x, from late 2025);
- a `Tool use: **name**` line and what follows it up to the next bubble (Cursor, Aug–Oct 2025) or up to
  its `Result:` / `Error:` / `Output:` fence (the `specstory` CLI for Claude Code and Codex, mid-2025);
- a `<details>` whose summary reads `Tool use: **name**` or one of Cursor's phrases (`Listed directory
  …`, `Searched codebase "…"`, `Grep search for "…"`, `Edit file: …`), as in the 2025 Cursor exports;
- a bubble that holds nothing but tool renderings (Cursor, early to mid-2025): `Read file: …` lines, a
  `bash` fence with its output fence after it, `diff` fences (an edit; the file is the one the chat code
  block's info string names, `diff:config.ts`, else the file the text just before it named in
  backticks), a code block labelled with a file (`typescript:src/app.ts`, an edit the agent wrote).

Everything else in an agent turn is text; a code block labelled with a file inside text is also an
edit of that file. `<think>` blocks are thinking steps. Anything unrecognised stays text and is counted
in `unknown_types`; nothing in an export stops the read.
"""

from __future__ import annotations

import re
from typing import Any

from habitus.capture.common import ReadResult
from habitus.capture.specstory_markdown import FENCE_OPEN, Fence, fence_end, fences, find_end, iso_stamp, strip_stamps
from habitus.capture.specstory_paths import clean_path
from habitus.capture.specstory_tools import (
    RESULT_MARKER,
    SHELL_LANGS,
    SUMMARY,
    TOOL_USE,
    RawTool,
    build_call,
    is_tool_summary,
)
from habitus.core import Step, StepKind, Trace

ROLE = re.compile(r"^_\*\*(User|Assistant|Agent)( - sidechain)?(?: \((.*?)\))?( \(sidechain\))?\*\*_\s*$")
TOOL_LINE = re.compile(r"^Tool use: \*\*([^*\n]+)\*\*(.*)$")
_TOOL_OPEN = re.compile(r"<tool-use\b([^>]*)>")
_ATTR = re.compile(r'data-tool-(type|name)="([^"]*)"')
_READ_LINE = re.compile(r"^Read file:\s*(.+)$")
_NOT_FOUND = re.compile(r"^Could not find file '(.+)' in the workspace\.?$")
_LINES_CHANGED = re.compile(r"^Lines added: \d+, lines removed: \d+$")
_FILE_TOKEN = re.compile(r"`([\w.@/\\-]+\.[A-Za-z0-9]{1,8})`")
_BUBBLE_MARK = "_****_"
_HINT_TOKENS, _HINT_PATHS = 20, 200  # how far back a path-less diff looks for its file (bounded work per diff)


class TurnWalker:
    """Walks an export's lines once, appending its steps to the trace."""

    def __init__(self, trace: Trace, result: ReadResult, *, unescape_output: bool) -> None:
        self.trace, self.result, self.unescape = trace, result, unescape_output
        self.role: str | None = None
        self.sidechain = False
        self.stamp: str | None = None
        self.model_meta: dict[str, Any] = {}
        self.buf: list[str] = []
        self.known_paths: list[str] = []
        self.last_text = ""

    def run(self, lines: list[str]) -> None:
        i = 0
        while i < len(lines):
            i = self._line(lines, i) + 1
        self._flush()

    def _line(self, lines: list[str], i: int) -> int:
        """Take the line at `i` (and the block it opens); return the last index consumed."""
        line = lines[i]
        role = ROLE.match(line)
        if role:
            self._flush()
            self._open(role.group(1), bool(role.group(2) or role.group(4)), role.group(3) or "")
            return i
        if self.role is None:
            return i  # the header: generator comment, title, session comment
        stripped = line.strip()
        if FENCE_OPEN.match(line):
            end = fence_end(lines, i)
            self.buf.extend(lines[i:end + 1])
            return end
        if stripped == "---":
            self._flush()
            return i
        if stripped == _BUBBLE_MARK:
            return i
        if stripped.startswith("<tool-use"):
            return self._envelope(lines, i)
        if stripped.startswith("<think>"):
            end = find_end(lines, i, lambda s: "</think>" in s)
            self._flush()
            self._thinking("\n".join(lines[i:end + 1]))
            return end
        if self.role == "agent":
            named = TOOL_LINE.match(stripped)
            if named:
                end = self._tool_line_end(lines, i)
                self._flush()
                self._tool(RawTool(named.group(1).strip(), None, named.group(2), "\n".join(lines[i + 1:end + 1])))
                return end
            if stripped.startswith("<details"):
                end = find_end(lines, i, lambda s: "</details>" in s)
                block = "\n".join(lines[i:end + 1])
                summary = SUMMARY.search(block)
                if summary and is_tool_summary(summary.group(1)):
                    self._flush()
                    name = TOOL_USE.search(summary.group(1))
                    self._tool(RawTool(name.group(1).strip() if name else None, None, summary.group(1),
                                       block[:summary.start()] + block[summary.end():]))
                    return end
                self.result.unknown_types["specstory: <details> that is not a tool"] += 1
                self.buf.extend(lines[i:end + 1])  # kept as text, whole: never scanned again
                return end
        self.buf.append(line)
        return i

    def _envelope(self, lines: list[str], i: int) -> int:
        end = find_end(lines, i, lambda s: "</tool-use>" in s)
        block = "\n".join(lines[i:end + 1])
        opening = _TOOL_OPEN.search(block)
        attrs = dict(_ATTR.findall(opening.group(1) if opening else ""))
        summary = SUMMARY.search(block)
        body = block[summary.end():] if summary else block[opening.end():] if opening else block
        self._flush()
        self._tool(RawTool(attrs.get("name") or None, attrs.get("type") or None,
                           summary.group(1) if summary else "", body))
        return end

    @staticmethod
    def _tool_line_end(lines: list[str], i: int) -> int:
        """A `Tool use:` block runs to its result fence, or to the next bubble, turn or block."""
        seen_marker = False
        j = i + 1
        while j < len(lines):
            line, stripped = lines[j], lines[j].strip()
            if FENCE_OPEN.match(line):
                end = fence_end(lines, j)
                if seen_marker:
                    return end
                j = end + 1
                continue
            if (ROLE.match(line) or stripped == "---" or TOOL_LINE.match(stripped)
                    or stripped.startswith(("<tool-use", "<think>"))):
                return j - 1
            seen_marker = seen_marker or bool(RESULT_MARKER.match(line))
            j += 1
        return len(lines) - 1

    def _open(self, role: str, sidechain: bool, info: str) -> None:
        self.role = "user" if role == "User" else "agent"
        self.sidechain = sidechain or info.strip() == "sidechain"
        self.stamp = iso_stamp(info)
        self.last_text = ""
        model = strip_stamps(info).strip().strip(",").strip()
        model = re.sub(r"^model\s+", "", model).split(",")[0].strip()
        self.model_meta = {}
        if self.role == "agent" and model and model != "sidechain":
            if not self.trace.model:
                self.trace.model = model
            if model != self.trace.model:
                self.model_meta = {"model": model}

    def _common(self) -> dict[str, Any]:
        return {"timestamp": self.stamp, "sidechain": self.sidechain}  # the export names no subagent

    def _flush(self) -> None:
        lines, self.buf = self.buf, []
        if self.role is None or not any(line.strip() for line in lines):
            return
        if self.role == "agent":
            tools = self._bare_tools(lines)
            if tools is not None:
                for raw in tools:
                    self._tool(raw)
                return
        text = "\n".join(lines).strip()
        kind = StepKind.USER if self.role == "user" else StepKind.ASSISTANT
        self.trace.steps.append(Step(kind=kind, text=text, meta=dict(self.model_meta), **self._common()))
        if self.role == "agent":
            self.last_text = text
            for block in fences(lines):
                if block.labelled_path:  # a chat code block for a file: the edit the agent wrote for it
                    self._tool(_labelled_edit(lines, block))

    def _bare_tools(self, lines: list[str]) -> list[RawTool] | None:
        """The calls a bubble holding only tool renderings stands for (None when it holds text)."""
        units: list[tuple[str, Any]] = []
        j = 0
        while j < len(lines):
            line, stripped = lines[j], lines[j].strip()
            if FENCE_OPEN.match(line):
                end = fence_end(lines, j)
                block = fences(lines[j:end + 1])[0]
                units.append(("fence", (block, "\n".join(lines[j:end + 1]))))
                j = end + 1
                continue
            read, missing = _READ_LINE.match(stripped), _NOT_FOUND.match(stripped)
            if read or missing:
                units.append(("read", ((read or missing).group(1), bool(missing))))  # type: ignore[union-attr]
            elif stripped and stripped != _BUBBLE_MARK and not _LINES_CHANGED.match(stripped):
                return None
            j += 1
        return self._tools_of(units) if units else None

    def _tools_of(self, units: list[tuple[str, Any]]) -> list[RawTool] | None:
        tools: list[RawTool] = []
        k = 0
        while k < len(units):
            what, value = units[k]
            if what == "read":
                path, missing = value
                tools.append(RawTool("read_file", "read", f"Read file: {path}", "", status=(
                    f"Could not find file '{path}' in the workspace." if missing else None)))
                k += 1
                continue
            block, raw = value
            if block.lang in SHELL_LANGS:
                body = [raw]
                if k + 1 < len(units) and units[k + 1][0] == "fence" and units[k + 1][1][0].lang == "":
                    body.append(units[k + 1][1][1])
                    k += 1
                tools.append(RawTool("run_terminal_cmd", "shell", "", "\n".join(body)))
            elif block.lang == "diff":
                body = [raw]
                while (k + 1 < len(units) and units[k + 1][0] == "fence" and units[k + 1][1][0].lang == "diff"
                       and units[k + 1][1][0].labelled_path == block.labelled_path):
                    body.append(units[k + 1][1][1])
                    k += 1
                path = block.labelled_path
                tools.append(RawTool("edit_file", "write", f"Edit file: {path}" if path else "", "\n".join(body),
                                     path_hint=None if path else self._path_hint()))
            elif block.labelled_path:
                tools.append(RawTool("edit_file", "write", f"Edit file: {block.labelled_path}", raw))
            else:
                return None  # an output or code fence on its own is text
            k += 1
        return tools

    def _path_hint(self) -> str | None:
        """The file the text just before a path-less diff named last, as a path the trace already knows."""
        for token in reversed(_FILE_TOKEN.findall(self.last_text)[-_HINT_TOKENS:]):
            token = clean_path(token) or ""
            for known in reversed(self.known_paths[-_HINT_PATHS:]):
                if known == token or known.endswith("/" + token):
                    return known
            if "/" in token:
                return token
        return None

    def _thinking(self, block: str) -> None:
        body = re.sub(r"</?think>|</?details>|<summary>.*?</summary>", "", block, flags=re.DOTALL).strip()
        if body:
            self.trace.steps.append(Step(kind=StepKind.ASSISTANT, text=body,
                                         meta={"thinking": True, **self.model_meta}, **self._common()))

    def _tool(self, raw: RawTool) -> None:
        call, meta = build_call(raw, unescape_output=self.unescape)
        if call.name == "?":
            self.result.unknown_types["specstory: tool call without a name"] += 1
        path = call.input.get("path")
        if isinstance(path, str) and path:
            self.known_paths.append(path)
        self.trace.steps.append(Step(kind=StepKind.TOOL, tool=call, meta={**meta, **self.model_meta},
                                     **self._common()))


def _labelled_edit(lines: list[str], block: Fence) -> RawTool:
    raw = "\n".join(lines[block.start:block.end + 1])
    return RawTool("edit_file", "write", f"Edit file: {block.labelled_path}", raw, meta={"in_text": True})


__all__ = ["ROLE", "TurnWalker"]
