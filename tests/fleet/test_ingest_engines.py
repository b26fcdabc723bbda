"""`habitus ingest --engine ray` stores exactly what the single-process path stores, redacted in the workers."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from backends import open_store
from habitus.bench.fleet_corpus import PLANTED_SECRET, write_sharded_corpus
from habitus.capture.ingest import ingest_paths
from habitus.cli.main import app
from habitus.fleet.engine import EngineError, LocalEngine, RayEngine, get_engine

CHAT_SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def chat_shard(path: Path, start: int, n: int) -> None:
    """Chat-messages JSONL with tool calls, one malformed line and a secret in a tool output."""
    lines = []
    for i in range(start, start + n):
        output = f"token {CHAT_SECRET}" if i == start + 1 else f"{i} passed"
        lines.append(json.dumps({
            "id": f"chat-{i}", "model": "gpt-x", "outcome": {"status": "success" if i % 3 else "failure"},
            "messages": [
                {"role": "user", "content": f"fix bug {i}"},
                {"role": "assistant", "content": "running the tests",
                 "tool_calls": [{"id": f"c{i}", "function": {"name": "bash",
                                                             "arguments": json.dumps({"command": "pytest -q"})}}]},
                {"role": "tool", "tool_call_id": f"c{i}", "content": output, "exit_code": i % 3 and 0 or 1},
                {"role": "assistant", "content": "done"},
            ]}))
        if i == start + 2:
            lines.append("{this line is not json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def sharded(tmp_path: Path) -> Path:
    root = tmp_path / "fleet-input"
    write_sharded_corpus(root / "spans", 90, shard_size=20, secret_every=25)
    with (root / "spans" / "shard-00001" / "traces.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("{broken span line\n")
    chat_shard(root / "chat" / "part-000.jsonl", 0, 12)
    chat_shard(root / "chat" / "part-001.jsonl", 100, 12)
    return root


def snapshot(store: Any) -> dict[str, tuple[int, str]]:
    """trace id -> (steps, sha256 of the stored trace as JSON)."""
    out = {}
    for trace in store.iter_traces():
        text = json.dumps(trace.to_dict(), sort_keys=True, ensure_ascii=False)
        out[trace.id] = (len(trace.steps), hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest())
    return out


def comparable(report: Any) -> dict[str, Any]:
    data = report.to_dict()
    data.pop("seconds")
    return data


def test_ray_ingest_stores_what_the_single_process_path_stores(sharded: Path, tmp_path: Path, local_ray: Any,
                                                               store_backend: str) -> None:
    with open_store(tmp_path / "local.db") as store_a, open_store(tmp_path / "ray.db") as store_b:
        local = ingest_paths([sharded], store_a, engine=LocalEngine())
        ray_report = ingest_paths([sharded], store_b, engine=RayEngine())
        assert comparable(local) == comparable(ray_report)
        assert (local.files, local.traces, local.skipped_lines, local.errors) == (7, 114, 3, [])  # 3 malformed lines
        assert local.redactions >= 6  # 4 planted span keys, 2 chat tokens
        a, b = snapshot(store_a), snapshot(store_b)
        assert a == b and len(a) == 114
        dumped = json.dumps([t.to_dict() for t in store_b.iter_traces()])
        assert PLANTED_SECRET not in dumped and CHAT_SECRET not in dumped
        again = ingest_paths([sharded], store_b, engine=RayEngine())  # file states written the same way
        assert (again.files, again.files_unchanged, again.traces) == (0, 7, 0)


def test_ray_ingest_continues_a_grown_shard_like_the_local_path(sharded: Path, tmp_path: Path,
                                                                local_ray: Any) -> None:
    with open_store(tmp_path / "local.db") as store_a, open_store(tmp_path / "ray.db") as store_b:
        ingest_paths([sharded], store_a)
        ingest_paths([sharded], store_b, engine=RayEngine())
        chat = sharded / "chat" / "part-001.jsonl"
        chat.write_text(chat.read_text(encoding="utf-8") + json.dumps(
            {"id": "chat-late", "messages": [{"role": "user", "content": "one more"}]}) + "\n", encoding="utf-8")
        grown_a = ingest_paths([sharded], store_a)
        grown_b = ingest_paths([sharded], store_b, engine=RayEngine())
        assert comparable(grown_a) == comparable(grown_b)
        assert (grown_b.files, grown_b.traces) == (1, 1)
        assert snapshot(store_a) == snapshot(store_b)


def test_cli_ingest_engine_ray_reads_a_file_url(sharded: Path, local_ray: Any) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["ingest", sharded.as_uri(), "--engine", "ray", "--json", "-q"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["engine"], data["files"], data["traces"]) == ("ray", 7, 114)


@pytest.mark.parametrize(("args", "message"), [
    (["--engine", "spark"], "unknown engine 'spark'; choose one of local, ray"),
    (["--address", "ray://head:10001"], "--address needs --engine ray"),
])
def test_cli_ingest_bad_engine_options_are_one_line_errors(sharded: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["ingest", str(sharded), *args])
    assert result.exit_code == 1
    assert message in result.stderr and "Traceback" not in result.output


def test_cli_ingest_remote_url_is_refused_with_a_reason(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["ingest", "s3://bucket/spans/"])
    assert result.exit_code == 1
    assert "habitus reads local files only; mount or copy the shards" in result.stderr


def test_missing_ray_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what an environment without the extra looks like
    with pytest.raises(EngineError, match=r"--engine ray needs Ray: pip install 'habitus\[fleet\]'"):
        get_engine("ray")
