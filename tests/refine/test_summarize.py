"""Behaviour extraction from transcripts and structured tool steps (the model-free summarizer)."""

from __future__ import annotations

import json

import pytest

from habitus.core.trace import Outcome, OutcomeSource, OutcomeStatus, Step, StepKind, ToolCall, Trace
from habitus.refine.behaviours import detect
from habitus.refine.events import flatten_trace, parse_transcript
from habitus.refine.summarize import RuleSummarizer


def call(command: str, output: str = "ok", code: int = 0, summary: str = "") -> str:
    args = json.dumps({"command": command, "summary": summary})
    return f"ASSISTANT: [tool call] terminal({args})\n---\nTOOL: {output}\n[Command finished with exit code {code}]"


def transcript(*blocks: str, final: str = "Done. Saved to /w/out.xlsx") -> str:
    return "\n---\n".join(["USER: ### instruction\nFill column D.\n### output_path\n/w/out.xlsx", *blocks,
                           f"ASSISTANT: {final}"])


def trace_of(text: str, status: OutcomeStatus = OutcomeStatus.FAILURE, tid: str = "t1") -> Trace:
    return Trace(id=tid, source_format="spans", agent="test", steps=[Step(kind=StepKind.ASSISTANT, text=text)],
                 outcome=Outcome(status, OutcomeSource.REWARDS))


def keys_of(text: str) -> set[str]:
    return set(detect(parse_transcript(text)))


def test_parse_transcript_pairs_calls_with_results_and_keeps_the_grader_verdict_apart():
    text = transcript(call("ls /w", "a.xlsx", 0), call("python3 x.py", "Traceback\nKeyError: 'B'", 1)) + (
        "\n---\nSCORING REFERENCE (metadata): grader.\nEXPECTED GROUND-TRUTH ANSWER: Value mismatch at D4")
    flat = parse_transcript(text)
    assert [(e.command, e.exit_code, e.is_error) for e in flat.calls] == [("ls /w", 0, False),
                                                                          ("python3 x.py", 1, True)]
    assert "Value mismatch at D4" in flat.diagnosis
    assert all("Value mismatch" not in (e.text + e.command) for e in flat.events)
    assert flat.final_message.startswith("Done.")


def test_finish_tool_counts_as_the_final_message_not_a_tool_call():
    finish = 'ASSISTANT: [tool call] finish({"message": "Saved the workbook to /w/out.xlsx", "summary": "x"})'
    flat = parse_transcript("\n---\n".join(["USER: task", call("python3 - <<'PY'\nprint(1)\nPY"), finish]))
    assert len(flat.calls) == 1
    assert flat.final_message == "Saved the workbook to /w/out.xlsx"


@pytest.mark.parametrize(("command", "output", "expected", "absent"), [
    ("python3 - <<'PY'\nprint(1)\nPY", "1", "python-heredoc", None),
    ("cat > /w/fix.py <<'EOF'\nprint(1)\nEOF\npython3 /w/fix.py", "1", "script-file-heredoc", None),
    ("cat /w/notes.txt", "hello", None, "script-file-heredoc"),
    ("pip install openpyxl", "Successfully installed", "pip-install", None),
    ("python3 -c 'import openpyxl'", "", "python-inline", None),
    ("python3 - <<'PY'\nimport pandas as pd\ndf = pd.read_excel('a.xlsx')\nPY", "", "pandas", None),
    ("python3 - <<'PY'\nws['I12'] = '=SUM(A1:A3)'\nPY", "", "writes-formulas", None),
    ("python3 - <<'PY'\nws['I12'] = 'SUM'\nPY", "", None, "writes-formulas"),
    ("python3 - <<'PY'\nwb.create_sheet('Out')\nPY", "", "sheet-surgery", None),
    ("python3 - <<'PY'\nws.delete_rows(3)\nPY", "", "row-structure", None),
    ("python3 - <<'PY'\nprint(round(x, 2))\nPY", "", "rounding", None),
    ("sed -n '1,40p' notes.txt", "", "sed-paging", None),
    ("soffice --headless --convert-to xlsx a.xlsx", "", "libreoffice-recalc", None),
    ("python3 x.py", "Traceback (most recent call last):\nKeyError: 'Sheet2'", "error-KeyError", None),
    ("python3 - <<'PY'\ntry:\n    x()\nexcept ValueError:\n    pass\nPY", "done", None, "error-ValueError"),
    ("python3 x.py", "No such file or directory: 'a.xlsx'", "not-found", None),
    ("python3 x.py", "boom", "nonzero-exit", None),
    ("npm test", "1 passed", "check-test", None),
])
def test_command_families_are_recognised(command, output, expected, absent):
    code = 1 if output == "boom" else 0
    keys = keys_of(transcript(call(command, output, code)))
    if expected:
        assert expected in keys
    if absent:
        assert absent not in keys


def test_evidence_snippets_are_quoted_from_the_run():
    found = detect(parse_transcript(transcript(call("python3 - <<'PY'\nwb.create_sheet('Summary')\nPY"))))
    assert found["sheet-surgery"][1] == ["wb.create_sheet('Summary')"]


@pytest.mark.parametrize(("blocks", "present", "absent"), [
    ([call("python3 - <<'PY'\nwb=load_workbook('a')\nprint(wb.sheetnames)\nPY", summary="Inspect"),
      call("python3 - <<'PY'\nwb.save('/w/out.xlsx')\nPY"),
      call("python3 - <<'PY'\nprint(load_workbook('/w/out.xlsx').active['D2'].value)\nPY")],
     {"inspects-first", "verifies-after-save", "short-run", "final-names-output"}, {"no-verification"}),
    ([call("python3 - <<'PY'\nwb.save('/w/out.xlsx')\nPY")],
     {"edits-first", "no-verification"}, {"verifies-after-save", "inspects-first"}),
    ([call("python3 fix.py", "err", 1)] * 3, {"retry-loop"}, set()),
    ([call(f"python3 - <<'PY'\nprint({i})\nPY") for i in range(9)], {"long-run"}, {"short-run"}),
    ([call(f"python3 - <<'PY'\nwb.save('o{i}.xlsx')\nPY") for i in range(3)], {"repeated-saves"}, set()),
])
def test_process_behaviours(blocks, present, absent):
    keys = keys_of(transcript(*blocks))
    assert present <= keys
    assert not (absent & keys)


def test_structured_tool_steps_are_read_like_transcripts():
    bash = ToolCall(name="Bash", input={"command": "pytest -q"}, output="FAILED test_a.py", exit_code=1)
    edit = ToolCall(name="Edit", input={"file_path": "a.py"}, output="ok")
    trace = Trace(id="c1", source_format="claude", agent="claude-code", outcome=Outcome(OutcomeStatus.SUCCESS),
                  steps=[Step(kind=StepKind.USER, text="fix the test"), Step(kind=StepKind.TOOL, tool=bash),
                         Step(kind=StepKind.TOOL, tool=edit)])
    keys = set(detect(flatten_trace(trace)))
    assert {"check-test", "tool-Edit", "nonzero-exit", "runs-pytest"} <= keys


def test_summary_carries_polarity_observations_and_the_diagnosis():
    text = transcript(call("python3 - <<'PY'\nimport pandas as pd\nPY")) + (
        "\n---\nSCORING REFERENCE: x\nEXPECTED GROUND-TRUTH ANSWER: Value mismatch at E2")
    registry: dict = {}
    summary = RuleSummarizer().summarize(trace_of(text), registry)
    assert summary.polarity == "failure"
    assert "processes the sheet with pandas" in summary.observations
    assert summary.diagnosis == "Value mismatch at E2"
    assert "pandas" in registry
    assert summary.task == "Fill column D."


def test_unknown_outcome_is_refused():
    with pytest.raises(ValueError, match="no known outcome"):
        RuleSummarizer().summarize(trace_of("USER: x", OutcomeStatus.UNKNOWN), {})


def test_codex_wrapped_commands_and_shell_keywords():
    wrapped = ToolCall(name="shell", input={"command": ["bash", "-lc", "pytest -q tests"]}, output="ok")
    loop = ToolCall(name="shell", input={"command": ["bash", "-lc", "for f in a b; do cat $f; done"]}, output="")
    trace = Trace(id="x1", source_format="codex", agent="codex", outcome=Outcome(OutcomeStatus.SUCCESS),
                  steps=[Step(kind=StepKind.TOOL, tool=wrapped), Step(kind=StepKind.TOOL, tool=loop)])
    keys = set(detect(flatten_trace(trace)))
    assert {"runs-pytest", "check-test"} <= keys
    assert not {"runs-bash", "runs-done", "tool-shell"} & keys
