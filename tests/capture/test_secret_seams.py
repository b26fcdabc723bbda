"""Secrets cut in pieces are found whole: seams in a text, a terminal wrap, and chunks of one streamed output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from secret_corpus import pieces, random_token

from habitus.capture import read_trace_file
from habitus.capture.redact import redact

KEY = "sk-ant-api03-" + "Zq7Xw2Rt5Yu8Io1Pa4Sd6Fg9Hj3Kl0MnTr0ub4dor9Kx2Vb7Nm5"


@pytest.mark.parametrize(("name", "text"), [
    ("shell continuation", f"export ANTHROPIC={KEY[:20]}\\\n    {KEY[20:]}\nnext"),
    ("python implicit concatenation", f'KEY = ("{KEY[:20]}"\n       "{KEY[20:]}")'),
    ("plus concatenation", f'const key = "{KEY[:15]}" + "{KEY[15:30]}" + "{KEY[30:]}";'),
    ("numbered read output", f'     1→import os\n     2→KEY = ("{KEY[:20]}"\n     3→       "{KEY[20:]}")\n'),
    ("numbered tab listing", f"Output:\n     7\tKEY={KEY[:20]}\\\n     8\t{KEY[20:]}\n     9\tdone\n"),
    ("terminal wrap", f"$ cat key.txt\n{KEY[:40]}\n{KEY[40:]}\n$ ls"),
])
def test_a_key_cut_by_a_seam_is_redacted_whole(name: str, text: str) -> None:
    out, count = redact(text)
    assert count >= 1 and not any(p in out for p in pieces(KEY)), f"{name}: {out!r}"
    assert KEY[20:] not in out and KEY[:20] not in out


def test_a_view_maps_every_character_back_to_where_it_was() -> None:
    from habitus.capture.secret_views import joined_view

    text = '     1→a = "x1" "y2"\n     2→b = 1 \\\n     3→  + 2\n'
    view = joined_view(text)
    assert view is not None and view.text == 'a = "x1y2"\nb = 1 + 2\n'
    for offset, char in enumerate(view.text):
        start, end = view.original_span(offset, offset + 1)
        assert text[start:end] == char


def test_text_without_seams_has_no_view_and_quotes_in_prose_are_no_seam() -> None:
    from habitus.capture.secret_views import joined_view

    assert joined_view("plain words, no seams") is None
    assert joined_view('she said "yes", then "no"') is None


def _codex_rollout(tmp_path: Path, first: str, second: str) -> Path:
    def item(payload: dict) -> dict:
        return {"timestamp": "2026-12-01T04:39:31Z", "type": "response_item", "payload": payload}

    rows = [{"timestamp": "2026-12-01T04:39:30Z", "type": "session_meta",
             "payload": {"id": "01a22fe6-9520-7353-9b70-d4a1a51ac579", "cwd": "/repo", "cli_version": "0.171.0"}},
            item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "print the key"}]}),
            item({"type": "function_call", "name": "exec_command", "call_id": "c1",
                  "arguments": json.dumps({"cmd": "./print-key --slow"})}),
            item({"type": "function_call_output", "call_id": "c1", "output":
                  "Chunk ID: 1a\nWall time: 1.0 seconds\nProcess running with session ID 4242\n"
                  f"Original token count: 9\nOutput:\nstarting\nkey: {first}"}),
            item({"type": "function_call", "name": "write_stdin", "call_id": "c2",
                  "arguments": json.dumps({"session_id": 4242, "chars": ""})}),
            item({"type": "function_call_output", "call_id": "c2", "output":
                  "Chunk ID: 2b\nWall time: 2.0 seconds\nProcess exited with code 0\n"
                  f"Original token count: 9\nOutput:\n{second}\ndone\n"})]
    path = tmp_path / "rollout-2026-12-01T04-39-30-01a22fe6-9520-7353-9b70-d4a1a51ac579.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_key_split_across_two_codex_output_chunks_is_redacted_in_both(tmp_path: Path) -> None:
    key = "ghp_" + random_token(__import__("random").Random(7), 36)
    result = read_trace_file(_codex_rollout(tmp_path, key[:17], key[17:]))
    (trace,) = result.traces
    outputs = [c.output for c in trace.tool_calls]
    assert len(outputs) == 2 and result.redactions >= 1
    assert not any(p in o for o in outputs for p in (key[:17], key[17:])), outputs
    assert outputs[0].startswith("Chunk ID: 1a") and outputs[1].rstrip().endswith("done")  # the rest is kept
    assert trace.tool_calls[1].exit_code == 0


def test_base64_wrapped_secrets_go_whole_and_plain_base64_stays() -> None:
    import base64

    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + random_token(__import__("random").Random(3), 70) + "\n"
    wrapped = base64.b64encode(pem.encode()).decode()
    out, count = redact(f"TLS_KEY={wrapped}")
    assert count == 1 and wrapped[:20] not in out
    image = "data:image/png;base64," + base64.b64encode(bytes(range(256)) * 2).decode()
    assert redact(image) == (image, 0)
    config = base64.b64encode(json.dumps({"name": "app", "replicas": 3}).encode()).decode()
    assert redact(config) == (config, 0)
