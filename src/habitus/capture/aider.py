"""Reader for aider chat history (`.aider.chat.history.md` in the repository aider ran in).

aider appends to the file as it goes (Aider-AI/aider `aider/io.py`): `# aider chat started at
YYYY-MM-DD HH:MM:SS` opens a session, the user's input is written as `#### ` lines, the model's
answer as plain Markdown, and aider's own messages as `> ` lines. One session is one trace:

- `#### …` lines (consecutive ones joined): a user step; `/run CMD`, `/test CMD` and `!CMD` a
  `shell` tool step instead (`meta.by = "user"`);
- plain text: an assistant step (its SEARCH/REPLACE blocks included);
- `> Applied edit to PATH`: an `edit` tool step on PATH, with the SEARCH/REPLACE blocks the answer
  gave for PATH (`input.edits`);
- `> # N SEARCH/REPLACE block(s) failed to match!` and its `## SearchReplaceNoExactMatch: … in
  PATH` lines: a failed `edit` tool step per PATH;
- `> Running CMD`: a `shell` tool step (a command the model proposed and the user accepted);
- `> Tokens: 2.4k sent, … received. Cost: $X message, …`: the usage of the answer before it
  (aider prints rounded counts: `2.4k` is read as 2,400) and its cost as aider computed it;
- `> Commit abc1234 …`: a commit of the trace;
- `> Aider vX`, `> Model: M …` / `> Main model: M …`: agent version, model.

aider does not write command output to the history, so shell steps have no output and the outcome
of an aider session is unknown; the one exception is `/test`, whose output aider adds to the chat
only when the command failed (`> Added N lines of output to the chat.` after it): that call is
marked failed. Times are aider's local clock without a zone. The working directory is the folder of
a file named exactly `.aider.chat.history.md` (aider writes it at the repository root).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from habitus.capture.common import ReadResult, finish_trace, make_tool_output, tool_step
from habitus.capture.guard import read_bounded
from habitus.core import Step, StepKind, Trace, Usage

HISTORY_NAME = ".aider.chat.history.md"
HISTORY_LIMIT = 256 << 20  # the history is read whole; a larger file is refused with the reason
SESSION_START = re.compile(r"^# aider chat started at (\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})\s*$")
_APPLIED = re.compile(r"^Applied edit to (.+?)\s*$")
_RUNNING = re.compile(r"^Running (.+?)\s*$")
_COMMIT = re.compile(r"^Commit ([0-9a-f]{7,40})\b")
_VERSION = re.compile(r"^Aider v(\S+)")
_MODEL = re.compile(r"^(?:Main )?[Mm]odel: (\S+)")
_TOKENS = re.compile(r"^Tokens: (.+? received)\.(?: Cost: \$([\d.]+) message)?")
_ADDED_OUTPUT = re.compile(r"^Added \d+ lines? of output to the chat\.")
_FAILED_BLOCKS = re.compile(r"^# (\d+) SEARCH/REPLACE blocks? failed to match!")
_NO_MATCH = re.compile(r"^## SearchReplace\w*: This SEARCH block failed to exactly match lines in (.+?)\s*$")
_FAILURE_END = re.compile(r"^(The SEARCH section must exactly match|Just reply with fixed versions of the block)")
_USER_SHELL = re.compile(r"^(?:/run|/test|!)\s*(.+)$", re.DOTALL)
_BLOCK = re.compile(r"^(?P<path>[^\n`]+?)\n```[^\n]*\n<<<<<<< SEARCH\n(?P<old>.*?)^=======\n"
                    r"(?P<new>.*?)^>>>>>>> REPLACE", re.MULTILINE | re.DOTALL)
_TOKEN_COUNT = re.compile(r"([\d.]+)([kKmM]?) (sent|received|cache write|cache hit)")


def looks_like_aider(text: str) -> bool:
    """Whether `text` (the start of a file) is an aider chat history."""
    return any(SESSION_START.match(line) for line in text.splitlines()[:20])


def read_aider(path: Path) -> ReadResult:
    """Read an aider chat history: one trace per `# aider chat started at` session."""
    result = ReadResult(format="aider")
    data = read_bounded(path, HISTORY_LIMIT)
    result.offset, result.lines = len(data), data.count(b"\n")
    lines = data.decode("utf-8", errors="replace").splitlines()
    key = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
    cwd = str(path.resolve().parent) if path.name == HISTORY_NAME else None
    seen: set[str] = set()
    session: _Session | None = None
    for line in lines:
        start = SESSION_START.match(line)
        if start:
            if session is not None:
                result.traces.append(session.finish())
            stamp = f"{start.group(1)}T{start.group(2)}"
            trace_id = f"aider-{key}-{stamp.replace('-', '').replace(':', '')}"
            while trace_id in seen:
                trace_id += "+"
            seen.add(trace_id)
            session = _Session(Trace(id=trace_id, source_format="aider", agent="aider", session_id=trace_id,
                                     source_path=str(path), cwd=cwd, started=stamp))
        elif session is not None:
            session.feed(line)
        elif line.strip():
            result.skipped_lines += 1
            result.unknown_types["aider:<text before the first session>"] += 1
    if session is not None:
        result.traces.append(session.finish())
    return result


class _Session:
    """Builds one trace from the lines of one session."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.user: list[str] = []
        self.answer: list[str] = []
        self.last_answer = ""  # the latest assistant text, for the SEARCH/REPLACE blocks of its edits
        self.last_answer_step: Step | None = None
        self.failure: list[str] | None = None  # lines of a "blocks failed to match" message
        self.last_user_test: Step | None = None

    def feed(self, line: str) -> None:
        if line.startswith("####"):
            self._flush_answer()
            self._end_failure()
            self.user.append(line[4:].removeprefix(" ").rstrip())
            return
        self._flush_user()
        if line.startswith("> ") or line == ">":
            self._end_failure()
            self._flush_answer()
            self._aider_line(line[2:].rstrip())
        elif self.failure is not None:
            self.failure.append(line)
            if _FAILURE_END.match(line):
                self._end_failure()
        else:
            self.answer.append(line)

    def finish(self) -> Trace:
        self._flush_user()
        self._flush_answer()
        self._end_failure()
        return finish_trace(self.trace)

    def _flush_user(self) -> None:
        if not self.user:
            return
        text = "\n".join(self.user).strip()
        self.user = []
        if not text:
            return
        shell = _USER_SHELL.match(text)
        if shell and "\n" not in text:
            step = tool_step("shell", {"command": shell.group(1).strip()}, None, None, meta={"by": "user"})
            self.trace.steps.append(step)
            self.last_user_test = step if text.startswith("/test") else None
            return
        self.trace.steps.append(Step(kind=StepKind.USER, text=text))
        self.last_user_test = None

    def _flush_answer(self) -> None:
        text = "\n".join(self.answer).strip()
        self.answer = []
        if text:
            step = Step(kind=StepKind.ASSISTANT, text=text)
            self.trace.steps.append(step)
            self.last_answer, self.last_answer_step = text, step
            self.last_user_test = None

    def _aider_line(self, text: str) -> None:
        trace = self.trace
        if match := _APPLIED.match(text):
            path = match.group(1)
            edits = [{"old_string": b["old"], "new_string": b["new"]} for b in _BLOCK.finditer(self.last_answer)
                     if b["path"].strip().strip("`*") == path]
            step = tool_step("edit", {"path": path, "edits": edits}, None, None)
            make_tool_output(step.tool, text)  # type: ignore[arg-type]
            trace.steps.append(step)
        elif match := _RUNNING.match(text):
            trace.steps.append(tool_step("shell", {"command": match.group(1)}, None, None))
        elif match := _FAILED_BLOCKS.match(text):
            self.failure = [text]
        elif match := _COMMIT.match(text):
            if match.group(1) not in trace.git_commits:
                trace.git_commits.append(match.group(1))
        elif match := _TOKENS.match(text):
            self._usage(match.group(1), match.group(2))
        elif match := _VERSION.match(text):
            trace.meta.setdefault("agent_version", match.group(1))
        elif match := _MODEL.match(text):
            trace.model = trace.model or match.group(1)
        elif _ADDED_OUTPUT.match(text) and self.last_user_test is not None:
            call = self.last_user_test.tool
            assert call is not None
            make_tool_output(call, text)
            call.exit_code, call.is_error = 1, True  # aider adds /test output only when the command failed
            self.last_user_test = None

    def _end_failure(self) -> None:
        if self.failure is None:
            return
        message = "\n".join(self.failure).strip()
        paths = [m.group(1) for line in self.failure if (m := _NO_MATCH.match(line))]
        self.failure = None
        for path in paths or [""]:
            step = tool_step("edit", {"path": path} if path else {}, None, None)
            assert step.tool is not None
            make_tool_output(step.tool, message)
            step.tool.is_error = True
            self.trace.steps.append(step)

    def _usage(self, counts: str, cost: str | None) -> None:
        if self.last_answer_step is None:
            return
        tokens = {label: _count(number, unit) for number, unit, label in _TOKEN_COUNT.findall(counts)}
        hit, write = tokens.get("cache hit", 0), tokens.get("cache write", 0)
        usage = Usage(input_tokens=max(tokens.get("sent", 0) - hit - write, 0), cache_read_tokens=hit,
                      cache_write_tokens=write, output_tokens=tokens.get("received", 0),
                      cost=float(cost) if cost else None)
        self.last_answer_step.usage = usage
        self.last_answer_step.meta["tokens_rounded"] = True


def _count(number: str, unit: str) -> int:
    scale = {"k": 1_000, "m": 1_000_000}.get(unit.lower(), 1)
    return int(round(float(number) * scale))
