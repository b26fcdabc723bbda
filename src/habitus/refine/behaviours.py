"""The model-free behaviour catalogue: what a run did, recognised from its commands, outputs and ending.

Each behaviour has a stable key, a family (behaviours of one family are alternatives to each other,
so a failure edit can say what to do instead), a plain observation, the instruction that codifies it
(`do`) and the guardrail against it (`avoid`), and a pattern that finds skill lines endorsing it (so
a merge can scope such a line instead of appending a distant caveat). Detection returns evidence
snippets taken verbatim from the run, so every cited trace can be checked by reading it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from habitus.refine.events import Flattened

SNIPPET_CHARS = 200


@dataclass(frozen=True)
class Behaviour:
    key: str
    family: str
    observation: str  # "runs Python through a shell heredoc"
    do: str  # instruction that codifies it
    avoid: str  # guardrail against it
    endorse: str = ""  # regex over skill lines that recommend this behaviour


@dataclass(frozen=True)
class CommandPattern:
    behaviour: Behaviour
    pattern: re.Pattern[str]
    where: str = "command"  # command | output


def _b(key: str, family: str, observation: str, do: str, avoid: str, endorse: str = "") -> Behaviour:
    return Behaviour(key, family, observation, do, avoid, endorse)


# Regex families over each command (or its output). Order is the report order.
COMMAND_PATTERNS: tuple[CommandPattern, ...] = tuple(
    CommandPattern(b, re.compile(p, re.M | re.I), where)
    for b, p, where in (
        (_b("python-heredoc", "python-runner", "runs Python through a shell heredoc",
            "Run Python through a quoted shell heredoc (`python3 - <<'PY' ... PY`) so the script runs as written.",
            "Do not paste long Python through a shell heredoc; write the script to a file and run it.",
            r"heredoc"),
         r"python3?\s+-\s*<<", "command"),
        (_b("script-file-heredoc", "python-runner", "writes a script file with cat <<EOF and then runs it",
            "Write multi-step logic to a script file and run it.",
            "Do not create script files through `cat > file <<EOF`; the terminal echo garbles long heredocs.",
            r"(?:write|save)\w*\s+(?:a\s+|the\s+)?script\s+(?:to\s+a\s+)?file|cat\s*>"),
         r"\bcat\s*>+\s*\S+\s*<<", "command"),
        (_b("python-inline", "python-runner", "runs one-line Python with python -c",
            "Use `python -c` only for one-line checks.",
            "Do not cram logic into `python -c` one-liners; quoting breaks silently.", r"python3?\s+-c\b"),
         r"\bpython3?\s+-c\s", "command"),
        (_b("pip-install", "environment", "installs packages with pip during the run",
            "Install a missing package with pip before using it.",
            "Do not pip install packages mid-task; use what the environment provides.", r"pip install"),
         r"\b(?:uv\s+)?pip3?\s+install\b", "command"),
        (_b("sed-paging", "inspection", "pages through files with sed -n",
            "Page through long files with `sed -n`.", "Do not page through files with sed instead of loading the data.",
            r"\bsed\b"),
         r"\bsed\s+-n\b", "command"),
        (_b("libreoffice-recalc", "recalculation", "recalculates the workbook with LibreOffice headless",
            "Recalculate formulas with LibreOffice headless before reading computed values.",
            "Do not round-trip the workbook through LibreOffice.", r"libreoffice|soffice"),
         r"\bsoffice\b|\blibreoffice\b", "command"),
        (_b("pandas", "library", "processes the sheet with pandas",
            "Use pandas for table-wide computation.",
            "Do not rewrite the workbook through pandas; it drops formatting, formulas and other sheets.",
            r"\bpandas\b"),
         r"\bimport pandas\b|\bpd\.read_excel\b|\.to_excel\(", "command"),
        (_b("openpyxl-save", "library", "saves the workbook through openpyxl (wb.save)",
            "Edit cells with openpyxl and save with `wb.save(output_path)` so formatting and other sheets survive.",
            "Do not save through openpyxl here.", r""),
         r"\b(?:wb|workbook|book)\.save\(", "command"),
        (_b("data-only-read", "formula-values", "reads cached cell values with data_only=True",
            "Read computed values with `load_workbook(path, data_only=True)` when checking results.",
            "Do not save a workbook opened with `data_only=True`; it replaces formulas with stale cached values.",
            r"data_only"),
         r"data_only\s*=\s*True", "command"),
        (_b("writes-formulas", "answer-form", "writes formulas into cells",
            "Write the formula string into the answer cells when the task asks for a formula.",
            "Do not write formulas where the grader reads values; compute the value in Python and write it.",
            r"\b(?:write|prefer|use|enter)\w*\b[^.;]*\bformulas?\b"),
         r"""(?:\]|\.value|\bcell\([^)]*\))\s*=\s*f?['"]=\s*[A-Z(]""", "command"),
        (_b("styles", "formatting", "edits cell styles or number formats",
            "Copy styles and number formats from neighbouring cells when writing new ones.",
            "Do not spend turns on cell styles the task does not ask for.",
            r"\b(?:copy|set|apply)\w*\b[^.;]*\b(?:styles?|number formats?)\b"),
         r"PatternFill|\.number_format\b|\.font\s*=|\._style\b|copy\(\s*\w+\.(?:font|fill|border)", "command"),
        (_b("row-structure", "structure", "inserts, deletes or moves rows and columns",
            "Insert or delete rows with openpyxl's row operations.",
            "Do not insert, delete or move rows unless the task asks for it; it shifts every answer cell below.",
            r"\b(?:insert|delete|move)\w*\s+(?:the\s+)?(?:rows|columns)\b"),
         r"\b(?:delete_rows|insert_rows|delete_cols|insert_cols|move_range)\(", "command"),
        (_b("new-workbook", "structure", "builds a new workbook from scratch",
            "Start from a fresh workbook only when the task asks for a new file.",
            "Do not rebuild the workbook from scratch; edit the original so untouched sheets survive.",
            r"\bnew workbook\b|Workbook\(\)"),
         r"\bWorkbook\(\)", "command"),
        (_b("sheet-surgery", "structure", "creates, renames or removes worksheets",
            "Create a new worksheet only when the task asks for one.",
            "Do not create, rename or remove worksheets the task did not name; graders look sheets up by name.",
            r"\b(?:create|add|rename|remove)\w*\s+(?:a\s+|new\s+|the\s+)*(?:work)?sheets?\b"),
         r"\bcreate_sheet\(|\bwb\.remove\(|\bdel\s+wb\[|\.title\s*=\s*['\"]", "command"),
        (_b("text-normalisation", "values", "normalises text labels (strip, case, replace)",
            "Normalise labels only for matching, never in the written answer.",
            "Do not normalise or retype labels in the answer; copy source text exactly as it appears.",
            r"\bnormali[sz]e|\bstrip\b|lower-?case"),
         r"\.(?:strip|lower|upper|title|replace)\(", "command"),
        (_b("rounding", "values", "rounds computed numbers",
            "Round only where the task states a precision.",
            "Do not round computed numbers unless the task states a precision; graders compare full values.",
            r"round"),
         r"\bround\(", "command"),
        (_b("interrupt", "control", "interrupts a stuck command",
            "Interrupt a stuck command and rerun a shorter version.",
            "Do not start commands that hang the terminal; keep each command short and bounded.", r""),
         r"^C-c$|\\x03|\bCtrl-C\b", "command"),
        (_b("nonzero-exit", "errors", "a command exits with a non-zero code",
            "Fix the first error before running anything else.",
            "When a command exits non-zero, fix that error before writing any output.", r""),
         r"exit code [1-9]\d*", "output"),
        (_b("not-found", "errors", "hits a not-found error (file, sheet, module or command)",
            "Check that paths, sheets and modules exist before using them.",
            "Check that every path, sheet name and module exists before using it.", r""),
         r"\bnot found\b|No such file|No module named|does not exist", "output"),
        (_b("timeout", "errors", "a command times out",
            "Keep commands bounded in time.",
            "Do not run commands that can exceed the tool timeout; work on a sample first.", r""),
         r"\btimed out\b|\bTimeoutError\b|timeout exceeded", "output"),
    )
)

# When a guardrail applies, for scoping an endorsed instruction in place ("<instruction> — except <scope>: ...").
SCOPES = {
    "python-heredoc": "for long scripts",
    "script-file-heredoc": "when the terminal echoes heredocs back",
    "python-inline": "for anything longer than one expression",
    "pip-install": "when the environment already provides the package",
    "sed-paging": "when the data itself can be loaded",
    "libreoffice-recalc": "when nothing needs recalculating",
    "pandas": "when saving the workbook",
    "data-only-read": "when the workbook will be saved",
    "writes-formulas": "where the grader reads computed values",
    "styles": "when the task does not ask for formatting",
    "row-structure": "when the task does not ask for it",
    "new-workbook": "when an original workbook exists",
    "sheet-surgery": "for sheets the task did not name",
    "text-normalisation": "in the written answer",
    "rounding": "when the task states no precision",
}

_NONZERO = next(cp.behaviour for cp in COMMAND_PATTERNS if cp.behaviour.key == "nonzero-exit")
_EXCEPTION = re.compile(r"^(?:[\w.]+\.)?([A-Z]\w*(?:Error|Exception))(?::|$)", re.M)
_SAVE = re.compile(r"\.save\(|\.to_excel\(|\bwrite_text\(|>\s*\S+\.(?:xlsx|csv|json)\b")
_READ = re.compile(r"load_workbook|read_excel|\bcat\b|\bhead\b|open\(")
_MAX_EXCEPTIONS = 3

PROCESS = {
    "inspects-first": _b("inspects-first", "order", "inspects the input before editing",
                         "Inspect the input first: print sheet names, used range and the first rows.",
                         "Do not spend the run inspecting; decide after one inspection pass.", r"inspect"),
    "edits-first": _b("edits-first", "order", "writes output before inspecting the input",
                      "Write output right away.",
                      "Do not write output before inspecting the input and resolving columns from the data.",
                      r""),
    "verifies-after-save": _b("verifies-after-save", "verification", "re-reads the output after saving",
                              "After saving, reload the output file and print the cells you wrote.",
                              "Do not re-read the output after saving.", r"\breload|\bverify\b"),
    "no-verification": _b("no-verification", "verification", "finishes without re-reading the saved output",
                          "Finish right after saving.",
                          "Do not finish right after saving: reload the output and check the written cells.",
                          r""),
    "repeated-saves": _b("repeated-saves", "saving", "rewrites the output file three or more times",
                         "Save the output as often as needed.",
                         "Do not rewrite the output file over and over; settle the logic on a dry run, then save once.",
                         r"\bsave\s+(?:often|after each)"),
    "retry-loop": _b("retry-loop", "control", "repeats the same command three or more times",
                     "Rerun a command until it works.",
                     "Do not rerun the same command a third time; change the approach after two failures.", r""),
    "long-run": _b("long-run", "length", "takes eight or more tool calls",
                   "Take as many tool calls as needed.",
                   "Do not keep exploring past a handful of calls; write the answer once the columns are resolved.",
                   r""),
    "short-run": _b("short-run", "length", "finishes in four or fewer tool calls",
                    "Keep the run short: inspect once, write once, verify once.",
                    "Do not rush to finish in a few calls.", r""),
    "final-names-output": _b("final-names-output", "final-answer", "ends with a message naming the saved output",
                             "End with a short message that names the output file and the cells written.",
                             "Do not end by only naming the output file.", r""),
}


def exception_behaviour(name: str) -> Behaviour:
    return _b(f"error-{name}", "errors", f"hits {name}",
              f"Handle {name} where it can occur.",
              f"Guard against {name}: check the inputs of the step that raised it before rerunning.", r"")


def _snippet(text: str, match: re.Match[str]) -> str:
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    line = text[start: end if end != -1 else len(text)].strip()
    return line[:SNIPPET_CHARS]


def _normalise_command(command: str) -> str:
    return " ".join(command.split())[:500]


def detect(flat: Flattened) -> dict[str, tuple[Behaviour, list[str]]]:
    """Behaviours present in a run: key -> (behaviour, evidence snippets quoted from the run)."""
    found: dict[str, tuple[Behaviour, list[str]]] = {}

    def add(behaviour: Behaviour, snippet: str) -> None:
        entry = found.setdefault(behaviour.key, (behaviour, []))
        if snippet and snippet not in entry[1] and len(entry[1]) < 3:
            entry[1].append(snippet)

    calls = flat.calls
    for call in calls:
        for cp in COMMAND_PATTERNS:
            text = call.command if cp.where == "command" else call.text
            for match in cp.pattern.finditer(text or ""):  # every matching line: the first may not show it best
                add(cp.behaviour, _snippet(text, match))
        if call.is_error and "nonzero-exit" not in found:  # structured steps: the reader set the status
            add(_NONZERO, _first_line(call.text) or _first_line(call.command))
        exceptions = sorted({m.group(1) for m in _EXCEPTION.finditer(call.text or "")})
        for name in exceptions[:_MAX_EXCEPTIONS]:
            match = re.search(rf"\b{re.escape(name)}\b.*", call.text, re.M)
            add(exception_behaviour(name), match.group(0)[:SNIPPET_CHARS] if match else name)
    if not calls:
        return found
    _generic(calls, add)

    saves = [i for i, c in enumerate(calls) if _SAVE.search(c.command)]
    first = calls[0]
    if saves and saves[0] == 0:
        add(PROCESS["edits-first"], _first_line(first.command))
    elif _READ.search(first.command) or first.summary.lower().startswith(("inspect", "list", "print", "read")):
        add(PROCESS["inspects-first"], first.summary or _first_line(first.command))
    if saves:
        after = [c for c in calls[saves[-1] + 1:] if _READ.search(c.command)]
        last_save = calls[saves[-1]]
        reverified = bool(after) or re.search(r"load_workbook[\s\S]*\.save\([\s\S]*load_workbook", last_save.command)
        if reverified:
            add(PROCESS["verifies-after-save"], (after[0].summary or _first_line(after[0].command)) if after
                else "reloads the workbook in the saving script")
        else:
            add(PROCESS["no-verification"], last_save.summary or _first_line(last_save.command))
    if len(saves) >= 3:
        add(PROCESS["repeated-saves"], f"{len(saves)} commands save output")
    repeats = Counter(_normalise_command(c.command) for c in calls if c.command.strip())
    command, times = max(repeats.items(), key=lambda kv: (kv[1], kv[0]), default=("", 0))
    if times >= 3:
        add(PROCESS["retry-loop"], f"{times}x {command[:160]}")
    if len(calls) >= 8:
        add(PROCESS["long-run"], f"{len(calls)} tool calls")
    elif len(calls) <= 4:
        add(PROCESS["short-run"], f"{len(calls)} tool calls")
    final = flat.final_message
    if final and re.search(r"saved|output|written|wrote", final, re.I) and re.search(r"[/\\]\S+\.\w{2,5}", final):
        add(PROCESS["final-names-output"], _first_line(final))
    return found


# The catalogue already says what these runs did, or the word is shell syntax rather than a program.
_COVERED_PROGRAMS = ("python", "python3", "cat", "sed", "cd", "echo", "done", "fi", "then", "do", "else", "esac",
                     "true", "false", "exit")


def _generic(calls: list, add) -> None:
    """Tool and program families and check runs: what makes the catalogue work beyond spreadsheets."""
    from habitus.core.commands import check_kind, command_program
    from habitus.core.tools import SHELL_TOOLS

    for call in calls:
        if call.tool and call.tool not in SHELL_TOOLS:
            add(_b(f"tool-{call.tool}", "tools", f"uses the {call.tool} tool", f"Use the {call.tool} tool.",
                   f"Avoid the {call.tool} tool here.", r""), call.summary or call.tool)
        program = command_program(call.command.splitlines()[0] if call.command.strip() else "")
        if program and re.fullmatch(r"[a-z0-9][\w.\-]{1,39}", program) and program not in _COVERED_PROGRAMS:
            add(_b(f"runs-{program}", "programs", f"runs `{program}`", f"Run `{program}` where it applies.",
                   f"Do not reach for `{program}` here.", r""), _first_line(call.command))
        kind = check_kind(call.command)
        if kind:
            add(_b(f"check-{kind}", "verification", f"runs {kind} checks", f"Run the project's {kind} checks.",
                   f"Do not rely on {kind} checks alone.", r""), _first_line(call.command))


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:SNIPPET_CHARS]
    return ""


def catalogue() -> dict[str, Behaviour]:
    """Every fixed behaviour by key (exception behaviours are made on the fly)."""
    out = {cp.behaviour.key: cp.behaviour for cp in COMMAND_PATTERNS}
    out.update(PROCESS)
    return out
