"""The marks habitus puts on the text it injects, and how capture takes that text back out of a transcript.

habitus' hooks add context to an agent's session: the hand-over (prompt submit, and again after a
compaction), pitfall warnings after a tool call, one-line warnings before an edit. The agents record
that context in their transcripts (Claude Code as a `hook_additional_context` attachment, rendered
`<system-reminder>\\nUserPromptSubmit hook additional context: …`; older Claude Code inside the user
turn as `<user-prompt-submit-hook>…`; Codex as a developer message), and a person may paste a
hand-over into a prompt. Learning must never read that text as the user's task or learn words from it.

Every such text starts with one of the marks below; `habitus.recall` and `habitus.deliver` build their
text from these constants, and capture (`habitus.capture.common.finish_trace`) strips it with
`strip_injected`. The rules, on the text of one message:

- a tagged block (`<system-reminder>…</system-reminder>`, `<user-prompt-submit-hook>…`, any `<tag>`)
  whose content starts with a mark (after an optional `<Event> hook additional context: ` label) goes
  whole;
- otherwise, at the start of a line: a hand-over head takes everything from there to the end (hooks
  append the hand-over after the prompt, and a hand-over has no end mark to stop at); a pitfall
  warning takes its head line and the `- ` items under it; an edit warning takes its one line.

Pure functions, no I/O.
"""

from __future__ import annotations

import re

from habitus.core.lazyre import lazy_re

HANDOVER_MARK = "# habitus: "  # the first line of every hand-over (workflows, or the repo's past work)
PITFALL_MARK = "habitus pitfall warning"  # the head of the warning after a tool call
MOVED_MARK, TRAP_MARK = "habitus: memory says ", "habitus: before editing "  # the one-line warnings before an edit
EDIT_MARKS = (MOVED_MARK, TRAP_MARK)
MARKS = (HANDOVER_MARK, PITFALL_MARK, *EDIT_MARKS)

# Claude Code labels hook context when it renders it for the model: "PostToolUseFailure:Bash hook additional context: "
_LABEL = r"(?:[\w:.*|-]{1,80} hook additional context: )?"
_MARK_RE = "|".join(re.escape(m) for m in MARKS)
_TAGGED = lazy_re(r"<([A-Za-z][\w-]{0,60})>\s*" + _LABEL + r"(?:" + _MARK_RE + r").*?</\1>\s*", re.DOTALL)
_LINE_START = lazy_re(r"^\s{0,3}(?:<[A-Za-z][\w-]{0,60}>\s*)?" + _LABEL + r"(" + _MARK_RE + r")", re.MULTILINE)


def has_mark(text: str) -> bool:
    """Whether `text` holds habitus' injected text anywhere (a cheap test before `strip_injected`)."""
    return "habitus" in text and _LINE_START.search(text) is not None


def strip_injected(text: str) -> str:
    """`text` without habitus' injected blocks (see the module docstring); the rest keeps its own words."""
    if not has_mark(text):
        return text
    text = _TAGGED.sub("", text)
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        match = _LINE_START.match(lines[i])
        if match is None:
            out.append(lines[i])
            i += 1
            continue
        mark = match.group(1)
        if mark == HANDOVER_MARK:
            break
        i += 1
        if mark == PITFALL_MARK:
            while i < len(lines) and lines[i].lstrip().startswith("- "):
                i += 1
    return "\n".join(out).strip()


def is_injected(text: str) -> bool:
    """Whether `text` is habitus' injected text and nothing else."""
    return has_mark(text) and not strip_injected(text)


__all__ = ["EDIT_MARKS", "HANDOVER_MARK", "MARKS", "MOVED_MARK", "PITFALL_MARK", "TRAP_MARK", "has_mark",
           "is_injected", "strip_injected"]
