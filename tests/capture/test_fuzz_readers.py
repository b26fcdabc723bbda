"""Fuzz every reader and the ingest entry point with damaged inputs (fixed seed): 0 crashes, 0 hangs, 0 lost traces.

The inputs and the harness are in `fuzz_inputs.py` (5,089 damaged files from small valid seeds of
every format: cuts, invalid UTF-8, NUL, huge lines, deep nesting, wrong types in every field, unknown
lines, a named pipe). On the code before the guard, the same inputs crashed 370 of the 5,089 inputs
(736 of 10,178 reads, 37 distinct sites) and hung on 1; in the ingest phase 51 of 610 runs crashed,
28 good files after a damaged one were never read, and 11 stored traces were lost or shrunk.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzz_inputs import INGEST_EVERY, damaged_inputs, run_ingest, run_readers


@pytest.fixture(scope="module")
def inputs() -> list:
    return damaged_inputs()


@pytest.mark.timeout(120)
def test_every_reader_reads_every_damaged_input_without_a_crash_or_a_hang(inputs: list, tmp_path: Path) -> None:
    report = run_readers(inputs, tmp_path, per_read_s=10)
    assert report.inputs == 5089 and report.reads == 2 * 5089
    assert (report.crashes, report.hangs) == (0, 0), report.to_dict()
    assert report.traces > 10_000  # most damaged files still yield what they hold
    assert set(report.error_kinds) <= {"not a recognised", "not a regular"}, report.error_kinds


@pytest.mark.timeout(120)
def test_ingest_of_damaged_files_never_stops_a_run_nor_loses_a_stored_trace(inputs: list, tmp_path: Path) -> None:
    report = run_ingest(inputs[::INGEST_EVERY], tmp_path, per_ingest_s=20)
    assert report.inputs == 204 and report.ingests >= 600
    assert (report.crashes, report.hangs, report.good_files_missed, report.traces_lost) == (0, 0, 0, 0), \
        report.to_dict()
