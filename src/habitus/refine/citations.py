"""Citation check: every trace an edit cites must show, in the words quoted from it, the behaviour it is cited for.

A proposal cites, per supporting trace, snippets the summarizer took from that trace. Before the
gate counts support, each citation is checked on its own terms, independently of how it was found:

* the snippet occurs in the cited trace (commands, outputs, messages, labels), so nothing cited is
  invented, truncated into something else, or taken from another run;
* the snippet itself shows the behaviour: a command pattern matches the quoted line, an exception's
  name is in it, a program behaviour's command runs that program, a check behaviour's command is a
  check of that kind, a count (`12 tool calls`, `3x pytest`) meets the behaviour's threshold and
  matches the trace, a failed call is quoted with its failure.

A trace with no snippet that passes is dropped from the proposal's support and evidence, and the
verdict says how many were dropped. The gate then applies `min_support` to what is left.
"""

from __future__ import annotations

import re
from typing import Any

from habitus.refine.behaviours import _READ, _SAVE, COMMAND_PATTERNS, _first_line
from habitus.refine.events import Flattened, flatten_trace
from habitus.refine.propose import Proposal

_PATTERNS = {cp.behaviour.key: cp.pattern for cp in COMMAND_PATTERNS if cp.behaviour.key != "nonzero-exit"}
# Where finding a behaviour is looser than showing it: `import pandas` finds pandas in a run, but only a line
# that reads or writes a table through pandas shows the sheet was processed (or rewritten) with it.
_PATTERNS["pandas"] = re.compile(r"\bpd\.read_(?:excel|csv)\b|\.to_excel\(|\bpd\.DataFrame\(|\bpd\.concat\(")
# Writing a style, not reading one: `print(c.number_format)` and `from openpyxl.styles import …` edit nothing.
_PATTERNS["styles"] = re.compile(r"\.(?:number_format|font|fill|border|alignment|protection|style|_style)\s*=(?!=)"
                                 r"|copy\(\s*\w+\.(?:font|fill|border)")
_EXIT = re.compile(r"exit code [1-9]\d*", re.I)
_COUNT = re.compile(r"^(\d+) (tool calls|commands save output)$")
_RETRIES = re.compile(r"^(\d+)x (.+)$", re.S)
_FINAL = re.compile(r"saved|output|written|wrote", re.I)
_PATH = re.compile(r"[/\\]\S+\.\w{2,5}")


def _searchable(flat: Flattened) -> str:
    parts = []
    for event in flat.events:
        parts += [event.text, event.command, event.summary]
    return "\n".join(p for p in parts if p)


def _normalised(text: str) -> str:
    return " ".join(text.split())


def snippet_shows(key: str, snippet: str, flat: Flattened) -> bool:
    """Whether `snippet`, quoted from the run `flat`, shows behaviour `key`."""
    from habitus.core.commands import check_kind, command_program

    if key in _PATTERNS:
        return bool(_PATTERNS[key].search(snippet))
    calls = flat.calls
    if key == "nonzero-exit":  # an exit code in an output, or the first line of a call the reader marked failed
        return bool(_EXIT.search(snippet)) or any(
            (c.is_error or (c.exit_code or 0) != 0) and snippet in (_first_line(c.text), _first_line(c.command))
            for c in calls)
    if key.startswith("error-"):
        return re.search(rf"\b{re.escape(key[6:])}\b", snippet) is not None
    if key.startswith("runs-"):
        return command_program(snippet) == key[5:]
    if key.startswith("check-"):
        return check_kind(snippet) == key[6:]
    if key.startswith("tool-"):
        return any(c.tool == key[5:] and snippet == (c.summary or c.tool) for c in calls)
    count = _COUNT.match(snippet)
    if key in ("long-run", "short-run"):
        n = int(count.group(1)) if count and count.group(2) == "tool calls" else -1
        return n == len(calls) and (n >= 8 if key == "long-run" else 0 < n <= 4)
    if key == "repeated-saves":
        n = int(count.group(1)) if count and count.group(2) == "commands save output" else -1
        return n >= 3 and n == sum(1 for c in calls if _SAVE.search(c.command))
    if key == "retry-loop":
        retries = _RETRIES.match(snippet)
        return bool(retries) and int(retries.group(1)) >= 3 and sum(
            1 for c in calls if _normalised(c.command)[:160] == retries.group(2)) >= 3
    if key in ("edits-first", "no-verification"):
        return bool(_SAVE.search(snippet))
    if key == "inspects-first":
        return bool(_READ.search(snippet)) or snippet.lower().startswith(("inspect", "list", "print", "read"))
    if key == "verifies-after-save":
        return bool(_READ.search(snippet)) or snippet == "reloads the workbook in the saving script"
    if key == "final-names-output":
        return bool(_FINAL.search(snippet) and _PATH.search(snippet))
    return False  # a behaviour this check does not know is not evidence


_DESCRIBED = ("long-run", "short-run", "repeated-saves", "retry-loop")  # counts, not quotes


def verify_citations(proposal: Proposal, traces: dict[str, Any]) -> dict[str, Any]:
    """Keep only the citations that show the behaviour (in place); returns {checked, kept, dropped: {id: why}}."""
    dropped: dict[str, str] = {}
    kept: dict[str, list[str]] = {}
    for trace_id in proposal.supporting_trace_ids:
        trace = traces.get(trace_id)
        snippets = proposal.evidence.get(trace_id) or []
        if trace is None:
            dropped[trace_id] = "cited trace not found"
            continue
        flat = flatten_trace(trace)
        text = _normalised(_searchable(flat))
        good = [s for s in snippets
                if (proposal.behaviour in _DESCRIBED or _normalised(s) in text)
                and snippet_shows(proposal.behaviour, s, flat)]
        if good:
            kept[trace_id] = good
        else:
            dropped[trace_id] = ("no quoted snippet shows the behaviour" if snippets else "nothing quoted")
    proposal.evidence = kept
    proposal.supporting_trace_ids = sorted(kept)
    return {"checked": len(kept) + len(dropped), "kept": len(kept), "dropped": dropped}
