"""The citation check: a cited trace counts only if a snippet quoted from it is in it and shows the behaviour."""

from __future__ import annotations

import pytest

from habitus.core import Step, StepKind, ToolCall, Trace
from habitus.refine.citations import snippet_shows, verify_citations
from habitus.refine.events import flatten_trace

from .helpers import proposal


def _trace(trace_id: str, commands: list[tuple[str, str, bool]]) -> Trace:
    steps = [Step(kind=StepKind.TOOL, tool=ToolCall(name="Bash", input={"command": c}, output=o, is_error=e))
             for c, o, e in commands]
    return Trace(id=trace_id, source_format="claude", agent="claude-code", steps=steps)


SCRIPT = "python3 - <<'PY'\nimport pandas as pd\ndf = pd.read_excel('in.xlsx')\ndf.to_excel('out.xlsx')\nPY"
RUN = _trace("t1", [("ls", "in.xlsx", False), (SCRIPT, "ok", False),
                    ("python3 fix.py", "Traceback (most recent call last):\nKeyError: 'Total'", True)])


@pytest.mark.parametrize(("key", "snippet", "shows"), [
    ("pandas", "df.to_excel('out.xlsx')", True),
    ("pandas", "import pandas as pd", False),  # imported is not processed
    ("styles", "c.fill = PatternFill('solid', fgColor='FFFF00')", True),
    ("styles", "from openpyxl.styles import PatternFill", False),  # an import edits nothing
    ("styles", "print(c.number_format, c.font.bold)", False),  # reading a style is not editing it
    ("python-heredoc", "python3 - <<'PY'", True),
    ("python-heredoc", "python3 -", False),  # the line cut before the heredoc
    ("error-KeyError", "KeyError: 'Total'", True),
    ("error-KeyError", "Traceback (most recent call last):", False),
    ("nonzero-exit", "Traceback (most recent call last):", True),  # first line of a call marked failed
    ("nonzero-exit", "ls", False),
    ("short-run", "3 tool calls", True),
    ("short-run", "2 tool calls", False),  # the count must be the run's own
    ("long-run", "3 tool calls", False),
    ("runs-ls", "ls", True),
    ("unknown-behaviour", "anything", False),
])
def test_snippet_shows_the_behaviour(key: str, snippet: str, shows: bool) -> None:
    assert snippet_shows(key, snippet, flatten_trace(RUN)) is shows


def test_citations_that_do_not_show_the_behaviour_are_dropped_from_support_and_evidence() -> None:
    other = _trace("t2", [("python3 -c 'import pandas as pd'", "", False)])
    edit = proposal("pandas", 0)
    edit.supporting_trace_ids = ["t1", "t2", "t3", "t4"]
    edit.evidence = {"t1": ["import pandas as pd", "df.to_excel('out.xlsx')"], "t2": ["import pandas as pd"],
                     "t3": ["df.to_excel('x')"], "t4": ["df.to_excel('invented.xlsx')"]}
    report = verify_citations(edit, {"t1": RUN, "t2": other, "t4": RUN})
    assert edit.supporting_trace_ids == ["t1"] and edit.evidence == {"t1": ["df.to_excel('out.xlsx')"]}
    assert report["kept"] == 1 and report["checked"] == 4
    assert set(report["dropped"]) == {"t2", "t3", "t4"} and report["dropped"]["t3"] == "cited trace not found"
