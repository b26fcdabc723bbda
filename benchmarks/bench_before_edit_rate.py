"""How often the before-edit warning (PreToolUse) fires on real sessions: it must stay rare.

Replays the 98 real Claude Code sessions of shared/corpus/real-history/context-evaluator (a real
repository with its own agent history) in the order they were recorded. For each session, the
repository is checked out at the last commit before the session started, and the session's own
prompts and tool calls go through the real hook handlers with the memory learned from the
sessions before it only: each prompt through the prompt hook (which marks what the hand-over
showed), each Edit / MultiEdit / Write through PreToolUse, each call through PostToolUse (the
trap warning shares its once-per-session keys). Then the session is ingested and learned from,
and the next one is replayed. The transcripts were recorded on the maintainers' machines: their
`cwd` (and the paths under it) are rewritten to the local clone, in a temporary copy.

    .venv/bin/python benchmarks/bench_before_edit_rate.py [--corpus ../shared/corpus] [--json OUT]

Prints edit calls, warnings before an edit (trap / moved), sessions with at least one, and the
tool-call warnings for comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EDIT_TOOLS = {"Edit", "MultiEdit", "Write", "NotebookEdit"}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout.strip()


def prepare(corpus: Path, work: Path) -> tuple[Path, list[Path]]:
    """A clone of the code at `work/code` and the session transcripts with their cwd rewritten to it."""
    src = corpus / "real-history" / "context-evaluator"
    code = work / "code"
    subprocess.run(["git", "clone", "-q", "--branch", "main", str(src / "code.bundle"), str(code)], check=True)
    raw = work / "checkpoints"
    with tarfile.open(src / "checkpoints.tar.xz") as tar:
        tar.extractall(raw, filter="data")
    sessions = work / "sessions"
    sessions.mkdir()
    out = []
    for full in sorted(raw.rglob("full.jsonl")):
        text = full.read_text(encoding="utf-8")
        first = next((json.loads(ln) for ln in text.splitlines() if '"cwd"' in ln), None)
        if not first or not first.get("cwd"):
            continue
        dest = sessions / f"{first['sessionId']}.jsonl"
        dest.write_text(text.replace(first["cwd"], str(code)), encoding="utf-8")
        out.append(dest)
    return code, out


def replay(code: Path, transcripts: list[Path]) -> dict:
    from habitus.capture.claude import read_claude
    from habitus.capture.ingest import ingest_paths
    from habitus.deliver.events import run_event
    from habitus.learn import learn
    from habitus.store import open_store
    from habitus.store.sqlite import connect

    traces = []
    for path in transcripts:
        read = read_claude(path).traces
        main = [t for t in read if t.steps and not t.id.startswith("agent-")]
        if main:
            traces.append((main[0].started or "", path, main[0]))
    traces.sort(key=lambda t: t[0])
    counts: Counter[str] = Counter()
    fired_sessions: set[str] = set()
    examples: list[dict] = []
    conn = connect()
    for started, path, trace in traces:
        commit = _git(code, "rev-list", "-1", f"--before={started}", "main") or _git(code, "rev-list",
                                                                                    "--max-parents=0", "main")
        _git(code, "checkout", "-q", "--detach", commit)
        base = {"session_id": trace.id, "cwd": str(code)}
        for step in trace.steps:
            if step.sidechain:
                continue
            if step.kind.value == "user" and step.text.strip():
                run_event("UserPromptSubmit", {**base, "prompt": step.text}, conn=conn)
                counts["prompts"] += 1
            elif step.tool is not None:
                call = {**base, "tool_name": step.tool.name, "tool_input": step.tool.input}
                if step.tool.name in EDIT_TOOLS:
                    counts["edit_calls"] += 1
                    out = run_event("PreToolUse", {**call, "hook_event_name": "PreToolUse"}, conn=conn)
                    if out:
                        text = out["hookSpecificOutput"]["additionalContext"]
                        counts["before_edit_warnings"] += 1
                        counts["before_edit_moved" if "moved to" in text else "before_edit_trap"] += 1
                        fired_sessions.add(trace.id)
                        examples.append({"session": trace.id, "file": step.tool.input.get("file_path"), "text": text})
                after = {**call, "hook_event_name": "PostToolUse", "tool_response": {
                    "exit_code": step.tool.exit_code, "is_error": step.tool.is_error, "output": step.tool.output}}
                counts["tool_calls"] += 1
                if run_event("PostToolUse", after, conn=conn):
                    counts["tool_warnings"] += 1
        conn.commit()
        with open_store() as store:
            ingest_paths([path], store)
        learn(conn, repo=code)
        conn.commit()
    _git(code, "checkout", "-q", "main")
    counts["sessions"] = len(traces)
    counts["sessions_with_a_before_edit_warning"] = len(fired_sessions)
    return {"counts": dict(counts), "examples": examples[:10]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    if not (args.corpus / "real-history" / "context-evaluator").is_dir():
        raise SystemExit(f"{args.corpus}/real-history/context-evaluator is missing")
    with tempfile.TemporaryDirectory(prefix="habitus-before-edit-") as tmp:
        work = Path(tmp)
        os.environ["HABITUS_HOME"] = str(work / "home")
        os.environ["HABITUS_LLM"] = "none"
        code, transcripts = prepare(args.corpus, work)
        result = replay(code, transcripts)
    c = result["counts"]
    edits = max(1, c.get("edit_calls", 0))
    print(f"sessions {c['sessions']}, prompts {c.get('prompts', 0)}, tool calls {c.get('tool_calls', 0)}, "
          f"edit calls {c.get('edit_calls', 0)}")
    print(f"before-edit warnings: {c.get('before_edit_warnings', 0)} "
          f"({100 * c.get('before_edit_warnings', 0) / edits:.1f} % of edit calls; trap "
          f"{c.get('before_edit_trap', 0)}, moved {c.get('before_edit_moved', 0)}), in "
          f"{c['sessions_with_a_before_edit_warning']} of {c['sessions']} sessions")
    print(f"tool-call warnings: {c.get('tool_warnings', 0)} of {c.get('tool_calls', 0)} calls")
    for ex in result["examples"]:
        print(f"  e.g. {ex['file']}: {ex['text'][:200]}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
