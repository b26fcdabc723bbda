"""The fuzz harness of `fuzz_inputs.py` over the Copilot CLI, Gemini CLI, aider and SpecStory readers:
their small valid sessions (`agent_fixtures.py`, and one SpecStory export per generation from
`specstory_fixtures.py`) damaged every way the harness damages a file, read with the format detected and
forced, stored, and ingested beside a good file: 0 crashes, 0 hangs, 0 lost traces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_fixtures import AIDER_HISTORY, SPECSTORY_CLAUDE, copilot_events, gemini_records
from fuzz_inputs import Seed, _jsonl, damaged_inputs, run_ingest, run_readers
from specstory_fixtures import ALL as SPECSTORY_GENERATIONS


def agent_seeds() -> list[Seed]:
    records = gemini_records()
    messages: dict[str, dict] = {r["id"]: r for r in records[1:] if "id" in r}
    legacy = {**records[0], "messages": list(messages.values())}
    return [
        Seed("copilot", "copilot", "events.jsonl", _jsonl(copilot_events())),
        Seed("gemini", "gemini", "session-2026-10-09T10-13-9b1f0c2e.jsonl", _jsonl(records)),
        Seed("gemini-legacy", "gemini", "session-2025-09-18T02-45-3b44bc68.json",
             json.dumps(legacy, indent=2).encode()),
        Seed("aider", "aider", ".aider.chat.history.md", AIDER_HISTORY.encode()),
        Seed("specstory", "specstory", "2026-07-13_13-40-49Z-fix.md", SPECSTORY_CLAUDE.encode()),
        *(Seed(f"specstory-{name}", "specstory", f"2025-10-26_19-51Z-{name}.md", text.encode())
          for name, text in SPECSTORY_GENERATIONS.items()),
    ]


@pytest.fixture(scope="module")
def inputs() -> list:
    return damaged_inputs(20261201, type_variants=200, huge_mb=1, seed_list=agent_seeds())


@pytest.mark.timeout(120)
def test_the_new_readers_read_every_damaged_input_without_a_crash_or_a_hang(inputs: list, tmp_path: Path) -> None:
    report = run_readers(inputs, tmp_path, per_read_s=10)
    assert report.inputs == len(inputs) == 1227 and report.reads == 2 * 1227
    assert (report.crashes, report.hangs) == (0, 0), report.to_dict()
    assert report.traces > len(inputs)  # most damaged files still yield what they hold
    assert set(report.error_kinds) <= {"not a recognised", "not a regular", "no Gemini CLI"}, report.error_kinds


@pytest.mark.timeout(120)
def test_ingest_of_damaged_new_format_files_never_stops_a_run_nor_loses_a_stored_trace(inputs: list,
                                                                                       tmp_path: Path) -> None:
    report = run_ingest(inputs[::10], tmp_path, per_ingest_s=20)
    assert (report.crashes, report.hangs, report.good_files_missed, report.traces_lost) == (0, 0, 0, 0), \
        report.to_dict()
