"""Decoding of OpenTelemetry span exports in JSON into plain, normalised span dicts.

Shapes: an OTLP/JSON export (`{"resourceSpans": [{"resource", "scopeSpans": [{"spans": [...]}]}]}`),
as one (pretty-printed) document or one request per line (the Collector file exporter); JSON lines
of single spans with OTLP field names (`traceId`, `spanId`, `startTimeUnixNano`, `attributes` as
`[{key, value: {stringValue|intValue|…}}]`); and the SDK console exporter's spans (`context.trace_id`,
ISO times, flat `attributes`), one per line or pretty-printed one after another. A cut-off last
line or document is counted and skipped. What the spans mean is `habitus.capture.otel`'s business.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from habitus.capture.common import LINE_LIMIT, ReadResult, as_int, iter_json_lines
from habitus.capture.guard import load_json, open_regular, raw_decode, read_bounded

DOCUMENT_LIMIT = 512 << 20  # a pretty-printed export is decoded whole; a larger one is refused with a reason


def iter_span_objects(path: Path, result: ReadResult) -> Any:
    """JSON lines when the first line is a whole JSON value; otherwise concatenated (pretty-printed) documents."""
    with open_regular(path) as handle:
        first = handle.readline(LINE_LIMIT).strip()
    try:
        load_json(first.decode("utf-8", errors="replace"))
        lines = True
    except ValueError:
        lines = False
    if lines:
        yield from iter_json_lines(path, result)
        return
    data = read_bounded(path, DOCUMENT_LIMIT)
    text = data.decode("utf-8", errors="replace")
    result.offset = len(data)
    for item in _decode_stream(text, result):
        result.lines += 1
        if isinstance(item, dict):
            yield item
        else:
            result.skipped_lines += 1
            result.unknown_types["<not an object>"] += 1


def _decode_stream(text: str, result: ReadResult | None = None) -> Any:
    """Values of a text holding one or more JSON documents (a top-level array is opened); a cut-off tail is counted."""
    pos, size = 0, len(text)
    while pos < size:
        while pos < size and text[pos] in " \t\r\n,]":
            pos += 1
        if pos < size and text[pos] == "[":
            pos += 1
            continue
        if pos >= size:
            return
        try:
            value, pos = raw_decode(text, pos)
        except ValueError:
            if result is not None:
                result.skipped_lines += 1
                result.unknown_types["<truncated line>"] += 1
            return
        yield value


_OTLP_START = re.compile(r'^\s*\{\s*"resourceSpans"\s*:')


def looks_like_otel(head: str) -> bool:
    """Does the start of a file look like an OTel span export (OTLP/JSON, span lines or console spans)?"""
    stripped = head.lstrip()
    if not stripped.startswith(("{", "[")):
        return False
    if _OTLP_START.match(stripped):
        return True
    objects: list[Any] = []
    for raw in stripped.splitlines()[:20]:
        try:
            objects.append(load_json(raw))
        except ValueError:
            if not objects:  # a pretty-printed first document: decode it whole, if it fits the head
                objects = [next(_decode_stream(stripped), None)]
            break
    return any(isinstance(o, dict) and (isinstance(o.get("resourceSpans"), list) or _span_shaped(o)) for o in objects)


def _span_shaped(obj: dict[str, Any]) -> bool:
    context = obj.get("context") if isinstance(obj.get("context"), dict) else {}
    has_trace = isinstance(obj.get("traceId") or context.get("trace_id"), str)
    has_span = isinstance(obj.get("spanId") or context.get("span_id"), str)
    return has_trace and has_span and "name" in obj


def spans_of(obj: dict[str, Any], result: ReadResult | None = None) -> Any:
    """Normalised spans of one JSON object: an OTLP request, a `{"spans": [...]}` batch, or one span.

    A span whose fields have the wrong types, or that has no trace id, is skipped and counted.
    """
    for raw, resource in _raw_spans(obj):
        try:
            span = normalise_span(raw, resource)
        except Exception:  # noqa: BLE001 - fields of unexpected types (or nesting): this span only is skipped
            if result is not None:
                result.unknown_types["otel:<malformed span>"] += 1
            continue
        if span is not None:
            yield span
        elif result is not None:
            result.unknown_types["otel:<span without trace id>"] += 1


def _raw_spans(obj: dict[str, Any]) -> Any:
    if isinstance(obj.get("resourceSpans"), list):
        for resource_spans in obj["resourceSpans"]:
            if not isinstance(resource_spans, dict):
                continue
            resource_obj = resource_spans.get("resource")
            resource = attributes_of(resource_obj.get("attributes")) if isinstance(resource_obj, dict) else {}
            scopes = resource_spans.get("scopeSpans") or resource_spans.get("instrumentationLibrarySpans") or []
            for scope in scopes if isinstance(scopes, list) else []:
                spans = scope.get("spans") if isinstance(scope, dict) else None
                for raw in spans if isinstance(spans, list) else []:
                    yield raw, resource
        return
    if isinstance(obj.get("spans"), list) and "trace_id" not in obj:
        for raw in obj["spans"]:
            yield raw, {}
        return
    yield obj, {}


def normalise_span(raw: Any, resource: dict[str, Any]) -> dict[str, Any] | None:
    """One span in OTLP/JSON or SDK-console form as `{trace_id, span_id, parent, name, start, end, ...}`."""
    if not isinstance(raw, dict):
        return None
    context = raw.get("context") if isinstance(raw.get("context"), dict) else {}
    trace_id = raw.get("traceId") or raw.get("trace_id") or context.get("trace_id")
    if not isinstance(trace_id, str) or not trace_id:
        return None
    status = raw.get("status") if isinstance(raw.get("status"), dict) else {}
    code = status.get("code", status.get("status_code"))
    own = raw.get("resource")
    resource = resource or (attributes_of(own.get("attributes")) if isinstance(own, dict) else {})
    return {
        "trace_id": _hex(trace_id),
        "span_id": _hex(raw.get("spanId") or raw.get("span_id") or context.get("span_id") or ""),
        "parent": _hex(raw.get("parentSpanId") or raw.get("parent_id") or raw.get("parent_span_id") or ""),
        "name": str(raw.get("name") or ""),
        "start": _nanos(raw.get("startTimeUnixNano", raw.get("start_time"))),
        "end": _nanos(raw.get("endTimeUnixNano", raw.get("end_time"))),
        "attrs": attributes_of(raw.get("attributes")),
        "events": [_event(e) for e in raw.get("events") or [] if isinstance(e, dict)],
        "error": str(code).upper() in ("2", "ERROR", "STATUS_CODE_ERROR"),
        "status_message": status.get("message") or status.get("description") or "",
        "resource": resource,
    }


def _hex(value: Any) -> str:
    text = str(value or "").lower()
    return text[2:] if text.startswith("0x") else text


def _nanos(value: Any) -> int | None:
    """Nanoseconds since the epoch from OTLP's (stringified) integer or an ISO 8601 timestamp."""
    if value is None or value == "":
        return None
    if isinstance(value, int | float) or (isinstance(value, str) and value.isdigit()):
        return int(value)
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp() * 1_000_000) * 1000


def iso(nanos: int | None) -> str | None:
    if not nanos:
        return None
    try:
        stamp = datetime.fromtimestamp(nanos / 1e9, UTC)
    except (OverflowError, OSError, ValueError):  # a time no calendar holds: unknown
        return None
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


def _event(raw: dict[str, Any]) -> dict[str, Any]:
    return {"name": str(raw.get("name") or ""), "time": _nanos(raw.get("timeUnixNano", raw.get("timestamp"))),
            "attrs": attributes_of(raw.get("attributes"))}


def attributes_of(raw: Any) -> dict[str, Any]:
    """OTLP `[{key, value: {stringValue|intValue|…}}]` (or an already flat dict) as a plain dict."""
    if isinstance(raw, dict):
        return raw
    out: dict[str, Any] = {}
    for item in raw or []:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            out[item["key"]] = any_value(item.get("value"))
    return out


def any_value(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return as_int(value["intValue"])
    if "doubleValue" in value:
        try:
            return float(value["doubleValue"])
        except (TypeError, ValueError):
            return None
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return attributes_of((value["kvlistValue"] or {}).get("values"))
    if "bytesValue" in value:
        return value["bytesValue"]
    return None
