"""OTel GenAI read throughput: synthetic agent runs as span JSON lines and as one OTLP/JSON document.

Each run has `--turns` chat spans (each repeating the conversation so far in `gen_ai.input.messages`,
as instrumentations do) and one `execute_tool` span per turn. Prints MB/s, traces/s and peak RSS
for `read_trace_file` (detection, reading, outcome, redaction). The data are synthetic.

    .venv/bin/python benchmarks/bench_otel_read.py [--runs 300] [--turns 12] [--json]
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from habitus.capture import read_trace_file

T0 = 1_764_460_800_000_000_000


def _attrs(values: dict[str, Any]) -> list[dict[str, Any]]:
    def value(v: Any) -> dict[str, Any]:
        return {"intValue": str(v)} if isinstance(v, int) else {"stringValue": str(v)}
    return [{"key": k, "value": value(v)} for k, v in values.items()]


def run_spans(index: int, turns: int) -> list[dict[str, Any]]:
    trace = f"{index:032x}"
    history: list[dict[str, Any]] = [{"role": "user", "parts": [{"type": "text", "content": f"task {index}: fix "
                                                                 "the parser so the tests pass " * 4}]}]
    spans = []
    for turn in range(turns):
        command = {"command": f"pytest -q -k t{turn}"}
        call = {"type": "tool_call", "id": f"c{turn}", "name": "bash", "arguments": command}
        out = [{"role": "assistant", "parts": [{"type": "text", "content": f"step {turn}: checking the parser " * 3},
                                               call]}]
        start = T0 + index * 10**12 + turn * 10**10
        spans.append({"traceId": trace, "spanId": f"{turn:08x}c", "name": "chat m", "startTimeUnixNano": str(start),
                      "endTimeUnixNano": str(start + 10**9), "status": {},
                      "attributes": _attrs({"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                                            "gen_ai.usage.input_tokens": 1000 + turn, "gen_ai.usage.output_tokens": 50,
                                            "gen_ai.input.messages": json.dumps(history),
                                            "gen_ai.output.messages": json.dumps(out)})})
        result = "tests passed\n" + "log line of output\n" * 40
        spans.append({"traceId": trace, "spanId": f"{turn:08x}t", "name": "execute_tool bash",
                      "startTimeUnixNano": str(start + 2 * 10**9), "endTimeUnixNano": str(start + 3 * 10**9),
                      "status": {}, "attributes": _attrs({"gen_ai.operation.name": "execute_tool",
                                                          "gen_ai.tool.name": "bash", "gen_ai.tool.call.id": f"c{turn}",
                                                          "gen_ai.tool.call.result": result})})
        history += out + [{"role": "tool", "parts": [{"type": "tool_call_response", "id": f"c{turn}",
                                                       "response": result}]}]
    return spans


def measure(path: Path, runs: int) -> dict[str, Any]:
    started = time.perf_counter()
    result = read_trace_file(path)
    seconds = time.perf_counter() - started
    assert result.format == "otel" and len(result.traces) == runs, (result.format, len(result.traces))
    mb = path.stat().st_size / 1e6
    return {"file": path.name, "mb": round(mb, 1), "seconds": round(seconds, 2), "mb_per_s": round(mb / seconds, 1),
            "traces_per_s": round(runs / seconds), "steps": sum(len(t.steps) for t in result.traces)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        spans = [s for i in range(args.runs) for s in run_spans(i, args.turns)]
        lines = Path(folder) / "spans.jsonl"
        lines.write_text("".join(json.dumps(s) + "\n" for s in spans))
        document = Path(folder) / "export.json"
        document.write_text(json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]}))
        rows = [measure(lines, args.runs), measure(document, args.runs)]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    report = {"runs": args.runs, "turns": args.turns, "synthetic": True, "results": rows,
              "peak_rss_mb": round(peak_mb)}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for row in rows:
        print(f"{row['file']}: {row['mb']} MB, {args.runs} traces, {row['steps']} steps in {row['seconds']}s "
              f"= {row['mb_per_s']} MB/s, {row['traces_per_s']} traces/s (synthetic)")
    print(f"peak RSS {report['peak_rss_mb']} MB")


if __name__ == "__main__":
    main()
