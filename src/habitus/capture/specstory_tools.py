"""One tool call of a SpecStory export, recovered from how the export rendered it.

Every export generation renders a call as a name, a one-line summary and a body (see
`habitus.capture.specstory_turns` for where each comes from). The summary is a phrase of Cursor's
(`Read file: src/app.ts`, `Edit file: …`, `Run command: …`, `Listed directory …`, `Searched codebase
"…"`, `Grep search for "…"`, `Searched web "…"`, `Read lints for …`), an inline value (`` `go test
./...` `` for Codex, `` `./src/app.py` `` or `` path `x` pattern `y` `` for Claude Code) or a
description. The body holds, depending on the agent: a `bash` fence or an inline code line (a
command), a `Read file:` line, `**Chunk N**` diffs (Cursor edits, two-column `+ `/`- `/`  ` prefixes),
`**Update: `path`**` diffs (a Codex patch), a file's content (Claude Code `Write`), `**Input:**`
with `- key: `value`` lines (the generic rendering: OpenCode, Codex, droid), and the result after
`Result:` / `Output:` / `**Result:**`, or `Error:` / `**Error:**` when the tool failed.

Files keep the agent's spelling here; `habitus.capture.specstory_paths` makes them repo-relative.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any

from habitus.capture.common import exit_code_in, make_tool_output
from habitus.capture.specstory_markdown import Fence, fences
from habitus.capture.specstory_paths import clean_path
from habitus.core import ToolCall
from habitus.core.patch import parse_apply_patch
from habitus.core.tools import EDIT_TOOLS, READ_TOOLS, SHELL_TOOLS, WRITE_TOOLS

TOOL_USE = re.compile(r"Tool use: \*\*([^*\n]+)\*\*")
SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.DOTALL)
_TAGS = re.compile(r"</?details>|</?tool-use\b[^>]*>")
# Cursor's summary phrases: (pattern, tool it names when the export gives no name, tool type, input key).
PHRASES: tuple[tuple[re.Pattern[str], str, str, str | None], ...] = (
    (re.compile(r"^Read file:\s*(.+)$"), "read_file", "read", "path"),
    (re.compile(r"^Edit file:\s*(.+)$"), "edit_file", "write", "path"),
    (re.compile(r"^Run command:\s*(.+)$", re.DOTALL), "run_terminal_cmd", "shell", "command"),
    (re.compile(r"^Listed (?:directory\s+(.+?)|current directory)$"), "list_dir", "search", "path"),
    (re.compile(r'^Searched codebase\s+"(.+)"$'), "codebase_search", "search", "query"),
    (re.compile(r'^Grep(?: search)? for\s+"(.+?)"(?:\s+in\s+"(.+)")?$'), "grep_search", "search", "query"),
    (re.compile(r'^Searched (?:web|the web)\s+"(.+)"$'), "web_search", "search", "query"),
    (re.compile(r'^Searched files\s+"(.+)"$'), "file_search", "search", "query"),
    (re.compile(r"^Read lints for\b"), "read_lints", "read", None),
)
RESULT_MARKER = re.compile(r"^\s*(?:\*\*)?(Result|Output|Error)(?::\*\*|\*\*:|:)\s*$")
_INPUT_ITEM = re.compile(r"^- ([\w.-]+):\s*(?:`(.*)`)?\s*$")
_INLINE = re.compile(r"^\s*`([^`\n]+)`\s*$")
_PAIRS = re.compile(r"\b(path|pattern|include|query|glob)\s*:?\s*`([^`\n]*)`")
_PATCH_HEAD = re.compile(r"^\*\*(Update|Add|Delete|Modify): `([^`]+)`\*\*\s*$")
_WRITTEN = re.compile(r"(?:The file|File created successfully at:|File written to)\s+(\S+?)(?:\s|$)")
SHELL_LANGS = frozenset({"bash", "sh", "shell", "zsh", "console", "powershell", "ps1", "cmd", "pwsh"})
_OUTPUT_LANGS = frozenset({"", "text", "txt", "output", "log"})
_WRAPPED = re.compile(r"^\[?(?:/bin/)?(?:ba|z)?sh -l?c\s+(.*?)\]?$", re.DOTALL)
_RENAMED = {"filePath": "path", "file_path": "path", "oldString": "old_string", "newString": "new_string"}
_WRITE_NAMES = WRITE_TOOLS | {"write_to_file"}


@dataclass
class RawTool:
    """A tool call as rendered: its name (None when the export gives none), its type attribute, summary
    and body; `path_hint` is a file the surrounding text named when the rendering names none."""

    name: str | None
    kind: str | None
    summary: str
    body: str
    path_hint: str | None = None
    status: str | None = None  # a failure Cursor wrote in place of the call (`Could not find file …`)
    meta: dict[str, Any] = field(default_factory=dict)


def kind_of(name: str) -> str:
    """The tool type of a tool name when the export gives none."""
    if name in SHELL_TOOLS or name in ("run_terminal_cmd", "shell"):
        return "shell"
    if name in EDIT_TOOLS:
        return "write"
    if name in READ_TOOLS or name.lower() in ("webfetch", "read_lints"):
        return "read"
    if re.search(r"grep|search|glob|list|find|^ls$", name.lower()):
        return "search"
    return "generic"


def build_call(raw: RawTool, *, unescape_output: bool = False) -> tuple[ToolCall, dict[str, Any]]:
    """The call a rendered tool block stands for, and the meta its step carries (its tool type)."""
    summary, body = _summary_and_body(raw)
    phrase_name, phrase_kind, tool_input = _phrase(summary)
    name = raw.name or phrase_name or "?"
    kind = raw.kind or phrase_kind or kind_of(name)
    lines = body.split("\n")
    blocks = fences(lines)
    marker_at, failed = _marker(lines, blocks)
    output = next((b for b in blocks if b.start > marker_at), None) if marker_at is not None else None
    used: set[int] = {output.start} if output else set()
    tool_input.update(_generic_input(lines, blocks))
    _fill(tool_input, name, kind, "" if phrase_name else summary, lines, blocks, marker_at, used, raw.path_hint)
    if marker_at is None:
        plain = [b for b in blocks if b.lang in _OUTPUT_LANGS and not b.labelled_path and b.start not in used]
        output = plain[-1] if plain else None
    if summary and not _covered(summary, tool_input):
        tool_input.setdefault("description", summary)
    call = ToolCall(name=name, input=tool_input)
    if output is not None:
        text = html.unescape(output.text) if unescape_output else output.text
        make_tool_output(call, text)
        call.exit_code = exit_code_in(text[:300])
    if raw.status:
        make_tool_output(call, raw.status)
    call.is_error = (failed or bool(raw.status) or "**Error:**" in body
                     or (call.exit_code is not None and call.exit_code != 0))
    meta = {"tool_type": kind, **raw.meta}
    if raw.path_hint and tool_input.get("path") == raw.path_hint:
        meta["path_from_text"] = True
    return call, meta


def is_tool_summary(summary: str) -> bool:
    """Whether a `<details>` summary renders a tool call (`Tool use: **x**` or one of Cursor's phrases)."""
    text = html.unescape(summary)
    return bool(TOOL_USE.search(text)) or _phrase(TOOL_USE.sub("", text).replace("\n", " ").strip(" •"))[0] is not None


def _summary_and_body(raw: RawTool) -> tuple[str, str]:
    summary, body = raw.summary, raw.body
    if not TOOL_USE.sub("", summary).strip():
        inner = SUMMARY.search(body)  # Cursor 2025: `Tool use: **x**` then `<details><summary>Edit file: …`
        if inner and "Thought Process" not in inner.group(1):
            summary, body = inner.group(1), body[:inner.start()] + body[inner.end():]
    summary = html.unescape(TOOL_USE.sub("", summary)).replace("\n", " ").strip(" •")
    return summary, _TAGS.sub("", body)


def _phrase(summary: str) -> tuple[str | None, str | None, dict[str, Any]]:
    for segment in (s.strip() for s in summary.split(" • ")):
        for pattern, name, kind, key in PHRASES:
            match = pattern.match(segment)
            if not match:
                continue
            found: dict[str, Any] = {}
            if key and match.group(1):
                value = match.group(1).strip()
                found[key] = clean_path(value) if key == "path" else value
                if key == "path" and found[key] is None:
                    found.pop(key)
            if name == "grep_search" and match.group(2):
                found["path"] = clean_path(match.group(2))
            return name, kind, {k: v for k, v in found.items() if v}
    return None, None, {}


def _marker(lines: list[str], blocks: list[Fence]) -> tuple[int | None, bool]:
    """The line saying the result follows (`Result:`, `**Error:**`, …) outside any fence, and whether it failed."""
    inside = {i for b in blocks for i in range(b.start, b.end + 1)}
    for i, line in enumerate(lines):
        match = RESULT_MARKER.match(line) if i not in inside else None
        if match:
            return i, match.group(1) == "Error"
    return None, False


def _generic_input(lines: list[str], blocks: list[Fence]) -> dict[str, Any]:
    """`**Input:**` then `- key: `value`` lines (a multi-line value is the fence after `- key:`)."""
    try:
        start = next(i for i, ln in enumerate(lines) if ln.strip() == "**Input:**")
    except StopIteration:
        return {}
    found: dict[str, Any] = {}
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if RESULT_MARKER.match(line):
            break
        match = _INPUT_ITEM.match(line)
        if not match:
            continue
        key, value = _RENAMED.get(match.group(1), match.group(1)), match.group(2)
        if value is None:
            value = next((b.text for b in blocks if b.start > i), "")
        found.setdefault(key, value)
    if isinstance(found.get("path"), str):
        found["path"] = clean_path(found["path"]) or ""
    return {k: v for k, v in found.items() if v not in ("", None)}


def _fill(tool_input: dict[str, Any], name: str, kind: str, summary: str, lines: list[str], blocks: list[Fence],
          marker_at: int | None, used: set[int], hint: str | None) -> None:
    """Add what the rendering says beyond the summary phrase: a command, a query, a file and its edit."""
    inline = _inline(lines, blocks, marker_at)
    summary_value = _INLINE.match(summary)
    pairs = dict(_PAIRS.findall(summary + "\n" + "\n".join(lines[:2])))
    if kind == "shell":
        command = tool_input.get("command") or (summary_value.group(1) if summary_value else None) or inline
        if not command:
            shell = next((b for b in blocks if b.start not in used and b.lang in SHELL_LANGS), None)
            if shell is not None:
                command = shell.text
                used.add(shell.start)
        if command:
            tool_input["command"] = _unwrap(command.strip())
    elif kind == "search":
        query = next((pairs[k] for k in ("query", "pattern", "glob") if pairs.get(k)), None)
        if query is None and not pairs and summary:
            query = summary_value.group(1) if summary_value else summary
        if query and "query" not in tool_input:
            tool_input["query"] = query
        if pairs.get("path") and "path" not in tool_input:
            tool_input["path"] = clean_path(pairs["path"])
    elif kind in ("read", "write"):
        path = tool_input.get("path") or _path_named(summary_value, pairs, lines, inline)
        if path is None and kind == "write":
            results = [b.text for b in blocks if b.start in used or b.lang in _OUTPUT_LANGS]
            written = _WRITTEN.search("\n".join(results))  # Claude Code's result names the file it wrote
            path = clean_path(written.group(1).rstrip(".,")) if written else None
        if kind == "write":
            _edit_input(tool_input, name, lines, blocks, used)
            used.update(b.start for b in blocks if b.lang == "diff" or b.labelled_path)
        path = path or tool_input.get("path") or (hint if kind == "write" else None)
        if path:
            tool_input["path"] = path


def _path_named(summary_value: re.Match[str] | None, pairs: dict[str, str], lines: list[str],
                inline: str | None) -> str | None:
    """The file a read or an edit names: inline in its summary, as `path `x``, a `Read file:` line, an inline path."""
    if summary_value:
        return clean_path(summary_value.group(1))
    if pairs.get("path"):
        return clean_path(pairs["path"])
    for line in lines:
        match = PHRASES[0][0].match(line.strip())
        if match:
            return clean_path(match.group(1))
    return clean_path(inline) if inline and ("/" in inline or "." in inline) else None


def _edit_input(tool_input: dict[str, Any], name: str, lines: list[str], blocks: list[Fence], used: set[int]) -> None:
    """What an edit put in its file: a Codex patch, Cursor's chunks as old/new pairs (a new file's as its
    content), a written file's content, or the text of a chat code block labelled with the file."""
    patch = _codex_patch(lines, blocks)
    if patch:
        tool_input["input"] = patch
        files = parse_apply_patch(patch)
        if files and "path" not in tool_input:
            tool_input["path"] = clean_path(files[0][1])
        return
    diffs = [b for b in blocks if b.lang == "diff" and b.start not in used]
    if diffs and "old_string" not in tool_input:
        edits = [{"old_string": old, "new_string": new} for d in diffs for _, _, hunks in
                 parse_apply_patch("*** Update File: x\n" + _one_column(d.text)) for old, new in hunks]
        if name in _WRITE_NAMES and edits and not any(e["old_string"].strip() for e in edits):
            tool_input["content"] = "\n".join(e["new_string"] for e in edits)
        elif edits:
            tool_input["edits"] = edits
        return
    unused = [b for b in blocks if b.start not in used]
    if name in _WRITE_NAMES and unused and "content" not in tool_input:
        tool_input["content"] = unused[0].text
        used.add(unused[0].start)
    elif "new_string" not in tool_input and unused and unused[0].labelled_path:
        tool_input["new_string"] = unused[0].text  # a chat code block: the text the agent wrote for the file


def _codex_patch(lines: list[str], blocks: list[Fence]) -> str | None:
    """A Codex `apply_patch` rendered as `**Update: `path`**` + a diff fence, as the envelope it was."""
    parts: list[str] = []
    for i, line in enumerate(lines):
        match = _PATCH_HEAD.match(line.strip())
        if not match:
            continue
        op = {"Modify": "Update"}.get(match.group(1), match.group(1))
        parts.append(f"*** {op} File: {match.group(2)}")
        diff = next((b for b in blocks if b.start > i), None)
        if op != "Delete" and diff is not None:
            parts.append(diff.text)
    return "\n".join(["*** Begin Patch", *parts, "*** End Patch"]) if parts else None


def _one_column(diff: str) -> str:
    """Cursor's two-column diff lines (`+ x`, `- x`, `  x`) in the one-column form of a patch."""
    out = []
    for line in diff.split("\n"):
        if line[:1] in "+- " and line[1:2] == " ":
            out.append(line[0] + line[2:])
        elif line.startswith("@@") or line in ("+", "-", ""):
            out.append(line)
        else:
            out.append(" " + line)
    return "\n".join(out)


def _inline(lines: list[str], blocks: list[Fence], marker_at: int | None) -> str | None:
    inside = {i for b in blocks for i in range(b.start, b.end + 1)}
    for i, line in enumerate(lines):
        if marker_at is not None and i >= marker_at:
            break
        match = _INLINE.match(line)
        if match and i not in inside:
            return match.group(1)
    return None


def _unwrap(command: str) -> str:
    """`bash -lc <script>` and Go's rendering of Codex's argv (`[bash -lc <script>]`) as the script."""
    match = _WRAPPED.match(command)
    if not match or command.startswith("[") != command.endswith("]"):
        return command
    script = match.group(1).strip()
    quoted = len(script) > 1 and script[0] == script[-1] and script[0] in "'\"" and script[0] not in script[1:-1]
    return script[1:-1] if quoted else script


def _covered(summary: str, tool_input: dict[str, Any]) -> bool:
    """Whether the summary says nothing the input does not (a phrase or an inline value already read)."""
    text = summary.strip("` ")
    return any(isinstance(v, str) and v and (v in summary or text in v) for v in tool_input.values()) or bool(
        _phrase(summary)[0])


__all__ = ["PHRASES", "RESULT_MARKER", "SHELL_LANGS", "SUMMARY", "TOOL_USE", "RawTool", "build_call", "is_tool_summary",
           "kind_of"]
