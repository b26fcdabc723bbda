"""habitus.capture: readers that turn agent files into redacted `Trace`s (see docs/architecture.md §1).

Entry points: `read_trace_file(path)` for one file of any supported format (auto-detected),
`iter_traces_from_paths(paths)` for files and folders, `habitus.capture.ingest.ingest_paths` to
store them incrementally, `redact(text)`, `redact_value(json)` and `redact_identifier(id)` for
secret redaction (every way into the store uses them).

Names load on first use, so importing a light submodule (`habitus.capture.subject`, used on the
hook and recall paths) does not import every reader.
"""

from __future__ import annotations

from habitus.core.lazy import lazy_exports

_WHERE = {
    "OUTPUT_CAP_BYTES": "habitus.capture.common",
    "ReadResult": "habitus.capture.common",
    "FORMATS": "habitus.capture.reader",
    "detect_format": "habitus.capture.reader",
    "iter_trace_files": "habitus.capture.reader",
    "iter_traces_from_paths": "habitus.capture.reader",
    "read_trace_file": "habitus.capture.reader",
    "redact": "habitus.capture.redact",
    "redact_identifier": "habitus.capture.redact",
    "redact_trace": "habitus.capture.redact",
    "redact_value": "habitus.capture.redact",
}

__all__ = sorted(_WHERE)


__getattr__ = lazy_exports(__name__, _WHERE)
