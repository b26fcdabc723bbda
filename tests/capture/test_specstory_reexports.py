"""SpecStory exports a conversation again, whole, under a new timestamped file name: one trace, the longer.

Exports are in the shapes of tests/capture/agent_fixtures.py (SpecStory Markdown v2.1.0 with a session
comment, and the older Cursor export that names no session). Runs on both stores.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_fixtures import SPECSTORY_CLAUDE, SPECSTORY_CURSOR_LEGACY

from backends import open_store
from habitus.capture import read_trace_file
from habitus.capture.ingest import ingest_paths

MORE = """
_**User**_

now add a /ready endpoint too

---

_**Assistant**_

<tool-use data-tool-type="shell" data-tool-name="run_terminal_cmd">
<details><summary>Tool use: **run_terminal_cmd** • Run command: npm test</summary>

```
Tests: 6 passed
```
</details>
</tool-use>

Both endpoints are in.
"""


@pytest.fixture(autouse=True)
def _both_stores(store_backend: str) -> str:
    return store_backend


def _history(tmp_path: Path) -> Path:
    folder = tmp_path / "app" / ".specstory" / "history"
    folder.mkdir(parents=True)
    return folder


def _traces(store) -> list:  # noqa: ANN001 - any Store
    return [store.get_trace(s.id) for s in store.list_traces()]


@pytest.mark.parametrize("longer_first", [False, True])
def test_a_re_export_without_a_session_id_is_one_trace_with_the_longer_exports_steps(
        tmp_path: Path, longer_first: bool) -> None:
    folder = _history(tmp_path)
    short = folder / "2025-03-05_10-00-00Z-add-a-health-endpoint.md"
    long = folder / "2025-03-05_10-42-17Z-add-a-health-endpoint.md"
    short.write_text(SPECSTORY_CURSOR_LEGACY)
    long.write_text(SPECSTORY_CURSOR_LEGACY + MORE)
    first, second = (long, short) if longer_first else (short, long)
    assert read_trace_file(short).traces[0].id == read_trace_file(long).traces[0].id
    with open_store(tmp_path / "h.db") as store:
        ingest_paths([first], store)
        report = ingest_paths([second], store)
        (trace,) = _traces(store)
        assert len(trace.steps) == len(read_trace_file(long).traces[0].steps) == 8
        assert trace.source_path.endswith(long.name)
        assert report.traces_kept_longer == (1 if longer_first else 0) and report.traces_renamed == 0


def test_a_re_export_that_renders_turns_differently_still_keeps_one_trace(tmp_path: Path) -> None:
    folder = _history(tmp_path)
    old = folder / "2026-07-13_13-40-49Z-fix-the-flaky-test.md"
    new = folder / "2026-07-14_09-02-11Z-fix-the-flaky-test.md"
    old.write_text(SPECSTORY_CLAUDE)
    # a later SpecStory renders the first answer's text differently, and the conversation went on
    new.write_text(SPECSTORY_CLAUDE.replace("I'll look at the test first.", "I'll look at the tests first.")
                   + "\n_**User (2026-07-13 13:45:00Z)**_\n\nand the other flaky one in api.py\n\n---\n\n"
                   "_**Agent (claude-opus-4-6 2026-07-13 13:45:09Z)**_\n\nFixed that one too.\n")
    with open_store(tmp_path / "h.db") as store:
        ingest_paths([old, new], store)
        ingest_paths([old], store, force=True)  # the shorter export read again never replaces the longer
        (trace,) = _traces(store)
        assert trace.id == "specstory:5c7d5c23-0691-4467-b98e-0fb865b4a639"
        assert trace.steps[-1].text == "Fixed that one too." and trace.source_path.endswith(new.name)


def test_two_different_conversations_stay_two_traces(tmp_path: Path) -> None:
    folder = _history(tmp_path)
    (folder / "2025-03-05_10-00-00Z-health.md").write_text(SPECSTORY_CURSOR_LEGACY)
    (folder / "2025-03-05_11-00-00Z-ready.md").write_text(
        SPECSTORY_CURSOR_LEGACY.replace("add a /health endpoint", "add a /ready endpoint"))
    (folder / "2025-03-06_10-00-00Z-health.md").write_text(  # the same first prompt on another day
        SPECSTORY_CURSOR_LEGACY.replace("2025-03-05 10:00:00", "2025-03-06 10:00:00"))
    with open_store(tmp_path / "h.db") as store:
        report = ingest_paths([folder], store)
        assert report.traces == 3 and len(_traces(store)) == 3
