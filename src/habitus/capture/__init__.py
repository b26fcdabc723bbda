"""habitus.capture: readers that turn agent files into redacted `Trace`s (see DESIGN.md §1).

Entry points: `read_trace_file(path)` for one file of any supported format (auto-detected),
`iter_traces_from_paths(paths)` for files and folders, `habitus.capture.ingest.ingest_paths` to
store them incrementally, `redact(text)` for secret redaction.
"""

from habitus.capture.common import OUTPUT_CAP_BYTES, ReadResult
from habitus.capture.reader import FORMATS, detect_format, iter_trace_files, iter_traces_from_paths, read_trace_file
from habitus.capture.redact import redact, redact_trace

__all__ = [
    "FORMATS",
    "OUTPUT_CAP_BYTES",
    "ReadResult",
    "detect_format",
    "iter_trace_files",
    "iter_traces_from_paths",
    "read_trace_file",
    "redact",
    "redact_trace",
]
