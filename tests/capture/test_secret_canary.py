"""Secret canary (issue 12 acceptance): planted secrets never reach a file habitus writes or anything it prints.

Real-format sessions (Claude Code JSONL and a Codex rollout) carry every shape of `secret_shapes`:
in prompts, tool inputs, tool outputs, assistant text, file paths, a working directory, a session
id and JSON keys. They go through the real entry points — `habitus ingest`, `learn`, `recall`,
the hook (prompt, tool, session end), the MCP server over stdio, `notes add`, `workflows
import/export`, `promote --apply`, `refine`, `context simulate` — and the demo runs on its own
sample sessions with the same secrets planted. Then every byte of every file under
`$HABITUS_HOME` (the SQLite database and its WAL as they are), the repo's work tree, every output
folder and every captured stdout/stderr is searched for each secret (and its middle and last ten
characters). Since issue 21 the sessions also carry the generated corpus of `secret_corpus` (~900
shapes from the vendored rule sets, secret names in every syntax, tool flags, credential files, URLs,
unknown prefixes, split and base64-wrapped forms) and a key printed across two chunks of one Codex
command's output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from capture_sessions import codex_lines, write_jsonl
from secret_corpus import all_shapes, pieces, random_token
from secret_shapes import SHAPES, STRUCTURED
from tests.deliver.conftest import claude_mistake_session, git, make_repo

PATH_SECRET = "sk_live_" + "51PathQz7Xw2Rt5Yu8Io1Pa4"  # a folder name in a file path
CWD_SECRET = "glpat-" + "CwdSecret9vU7tS5rQ1p"  # the working directory of a session
SESSION_SECRET = "ghp_" + "SessionId2C3d4E5f6G7h8I9j0K1l2M3n4O5"  # part of a session id
KEY_SECRET = "hf_" + "JsonKeyAbCdEfGhIjKlMnOpQrStUvWx0123"  # a JSON key in a tool input
HOOK_SECRET = "sk-ant-api03-" + "HookPrompt8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0Ed"  # a prompt the hook receives
MCP_SECRET = "xoxb-" + "5550001112-2223334445-McpNoteSecretZz"  # a note an agent writes over MCP
IMPORT_SECRET = "npm_" + "ImportedWf1B2c3D4e5F6g7H8i9J0k1L2m3N4"  # a shared workflow file
CHUNKED_SECRET = "gsk_" + random_token(__import__("random").Random(21), 52)  # printed across two Codex chunks
EXTRA = [PATH_SECRET, CWD_SECRET, SESSION_SECRET, KEY_SECRET, HOOK_SECRET, MCP_SECRET, IMPORT_SECRET, CHUNKED_SECRET]
# The generated corpus (issue 21): a quarter goes into the sessions learning reads, the rest into one more session.
CORPUS = all_shapes()
LEARNED_CORPUS, STORED_CORPUS = CORPUS[::4], [shape for i, shape in enumerate(CORPUS) if i % 4]


def all_secrets() -> list[str]:
    return [s for _, _, s in SHAPES] + [s for _, _, s in STRUCTURED] + EXTRA + [s for _, _, s in CORPUS]


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "HABITUS_HOME": str(home), "HABITUS_HOOK_INLINE": "1"}


def _plant(lines: list[str], shapes: list[tuple[str, str, str]], structured: list[tuple[str, dict, str]],
           session: str, cwd: Path) -> list[str]:
    """The mistake session's lines with secrets in the prompt, commands, outputs, paths and JSON keys."""
    texts = [template.replace("{s}", secret) for _, template, secret in shapes]
    out = []
    for raw in lines:
        line = json.loads(raw)
        line["sessionId"], line["cwd"] = session, str(cwd)
        content = line.get("message", {}).get("content")
        if line["type"] == "user" and isinstance(content, str):
            line["message"]["content"] = content + "\n" + texts.pop() if texts else content
        elif isinstance(content, list):
            for block in content:
                if block.get("type") == "tool_use":
                    tool_input = block["input"]
                    if "command" in tool_input and texts and "migrate" not in tool_input["command"]:  # the fix
                        # stays clean, so a rule can be promoted from it (a command the repo ran successfully)
                        tool_input["command"] += " && echo " + json.dumps(texts.pop())
                    if "file_path" in tool_input:
                        tool_input["description"] = texts.pop() if texts else ""
                        tool_input[KEY_SECRET] = structured[0][1] if structured else {}
                elif block.get("type") == "tool_result" and texts:
                    block["content"] = texts.pop() + "\n" + block["content"]
                elif block.get("type") == "text" and texts:
                    block["text"] += "\n" + texts.pop()
        out.append(json.dumps(line))
    extra_read = {"type": "assistant", "sessionId": session, "cwd": str(cwd), "uuid": "x1", "parentUuid": "a4",
                  "timestamp": "2026-11-29T11:00:00.000Z", "message": {
                      "role": "assistant", "model": "claude-sonnet-4-5", "id": "m-x1", "type": "message",
                      "content": [{"type": "tool_use", "id": "tx1", "name": "Read",
                                   "input": {"file_path": f"{cwd}/config/{PATH_SECRET}/settings.json"}}]}}
    out.append(json.dumps(extra_read))
    for text in texts:  # whatever did not find a place above goes into assistant text
        out.append(json.dumps({"type": "assistant", "sessionId": session, "cwd": str(cwd), "uuid": f"t{len(out)}",
                               "timestamp": "2026-11-29T11:01:00.000Z", "message": {
                                   "role": "assistant", "model": "claude-sonnet-4-5", "id": f"m-t{len(out)}",
                                   "type": "message", "content": [{"type": "text", "text": text}]}}))
    return out


def _sessions(folder: Path, repo: Path) -> list[Path]:
    """Three Claude Code sessions, a fourth started in a folder whose name is a secret, and a Codex rollout."""
    folder.mkdir(parents=True)
    cwd_with_secret = repo / "tmp" / CWD_SECRET
    cwd_with_secret.mkdir(parents=True)
    chunks = [SHAPES[i::4] + LEARNED_CORPUS[i::4] for i in range(4)]
    ids = ["s-canary-0", f"s-{SESSION_SECRET}", "s-canary-2"]
    paths = []
    for i, session in enumerate(ids):
        lines = _plant(claude_mistake_session(session, repo, 10 + i), chunks[i], STRUCTURED[i::3], session, repo)
        path = folder / f"{session}.jsonl"  # Claude Code names the file after the session id
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    first = json.loads(claude_mistake_session("s-canary-cwd", repo, 14)[0])
    first["message"]["content"] = "summarise what the README says"  # unrelated, so it hands nothing over
    lines = _plant([json.dumps(first)], [], [], "s-canary-cwd", cwd_with_secret)
    path = folder / "s-canary-cwd.jsonl"  # a short session started in a folder whose name is a secret
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    paths.append(path)
    first = json.loads(claude_mistake_session("s-canary-corpus", repo, 15)[0])
    first["message"]["content"] = "collect the deployment notes"  # unrelated: its text is stored, not learned
    lines = _plant([json.dumps(first)], STORED_CORPUS, [], "s-canary-corpus", repo)
    path = folder / "s-canary-corpus.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    paths.append(path)
    texts = [template.replace("{s}", secret) for _, template, secret in chunks[3]]
    calls = [(text, texts[(i + 1) % len(texts)], 1 if i % 2 else 0) for i, text in enumerate(texts)]
    lines = codex_lines("019a0000-0000-7000-8000-00000000c0de", str(repo), calls)
    lines[2]["payload"]["content"][0]["text"] += "\n" + texts[0]
    env_call = {"command": ["bash", "-lc", "psql -c 'select 1'"], "workdir": str(repo),
                "env": {name: value for _, value, _ in STRUCTURED for name, value in value.items()
                        if isinstance(value, str | int)} | {"PGPASSWORD": "Pg" + "Secret77"}}
    lines.append({"timestamp": "2026-01-01T00:00:00.000Z", "type": "response_item", "payload": {
        "type": "function_call", "name": "shell", "call_id": "call_env", "arguments": json.dumps(env_call)}})
    lines += _chunked_output(CHUNKED_SECRET)
    paths.append(write_jsonl(folder / "rollout-2026-01-01T00-00-00-canary.jsonl", lines))
    return paths


def _chunked_output(secret: str) -> list[dict[str, Any]]:
    """A still-running exec_command whose output prints `secret` across its first chunk and a write_stdin poll."""
    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "2026-01-01T00:00:01.000Z", "type": "response_item", "payload": payload}

    return [item({"type": "function_call", "name": "exec_command", "call_id": "call_run",
                  "arguments": json.dumps({"cmd": "./deploy --print-key"})}),
            item({"type": "function_call_output", "call_id": "call_run", "output":
                  "Chunk ID: a1\nWall time: 1.0 seconds\nProcess running with session ID 77\n"
                  f"Original token count: 9\nOutput:\nkey={secret[:21]}"}),
            item({"type": "function_call", "name": "write_stdin", "call_id": "call_poll",
                  "arguments": json.dumps({"session_id": 77, "chars": ""})}),
            item({"type": "function_call_output", "call_id": "call_poll", "output":
                  "Chunk ID: b2\nWall time: 2.0 seconds\nProcess exited with code 0\n"
                  f"Original token count: 9\nOutput:\n{secret[21:]}\ndeployed\n"})]


def _cli(args: list[str], env: dict[str, str], outputs: list[str], *, cwd: Path | None = None,
         stdin: str | None = None, module: str = "habitus") -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, env=env,
                          cwd=cwd, input=stdin, timeout=300, check=False)
    outputs.extend([done.stdout, done.stderr])
    return done


def _mcp(repo: Path, home: Path, outputs: list[str]) -> None:
    import anyio
    from mcp import Client, StdioServerParameters

    async def main() -> None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "habitus", "mcp"], cwd=str(repo),
                                       env={"HABITUS_HOME": str(home), "PATH": os.environ.get("PATH", "")})
        async with Client(params, read_timeout_seconds=60) as client:
            note = await client.call_tool("note", {"text": f"The staging bot token is {MCP_SECRET}",
                                                   "kind": "gotcha"})
            outputs.append(note.content[0].text)
            note_id = json.loads(note.content[0].text)["id"]
            for name, arguments in (("search", {"query": f"bot token {MCP_SECRET}"}), ("get", {"id": note_id}),
                                    ("feedback", {"id": note_id, "verdict": "helpful",
                                                  "reason": f"worked with {MCP_SECRET}"}),
                                    ("archive", {"id": note_id, "reason": f"rotated {MCP_SECRET}"})):
                result = await client.call_tool(name, arguments)
                outputs.extend(c.text for c in result.content if hasattr(c, "text"))

    anyio.run(main)


def _walk(*roots: Path) -> Iterator[Path]:
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and ".git" not in path.relative_to(root).parts:
                yield path


def _leaks(secrets: list[str], roots: list[Path], outputs: list[str]) -> list[str]:
    found = []
    blobs = {str(p): p.read_bytes() for p in _walk(*roots)}
    blobs.update({f"output #{i}": text.encode("utf-8", "replace") for i, text in enumerate(outputs)})
    for secret in secrets:
        for piece in pieces(secret):  # the secret, its middle and its last ten characters
            for where, blob in blobs.items():
                if piece.encode() in blob:
                    found.append(f"{piece[:12]}… in {where}")
    return found


@pytest.fixture(scope="module")
def canary_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("canary")
    home, out, given = base / "home", base / "out", base / "inputs"  # `given`: files we wrote (with secrets)
    for folder in (home, out, given):
        folder.mkdir()
    repo = make_repo(base)
    (repo / "db").mkdir()
    (repo / "db" / "migrations.py").write_text("MIGRATIONS = []\n")
    (repo / "AGENTS.md").write_text("# Agents\n\nKeep changes small.\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "db")
    env, outputs = _env(home), []
    sessions = _sessions(base / "sessions", repo)
    steps: dict[str, subprocess.CompletedProcess] = {}
    steps["ingest"] = _cli(["ingest", str(base / "sessions"), "--json", "-q"], env, outputs)
    steps["learn"] = _cli(["learn", "--repo", str(repo), "--json"], env, outputs)
    steps["recall"] = _cli(["recall", f"add an email column to the users table, token {HOOK_SECRET}", "--cwd",
                            str(repo), "--json"], env, outputs)
    prompt = {"session_id": f"hook-{SESSION_SECRET}", "cwd": str(repo), "hook_event_name": "UserPromptSubmit",
              "prompt": f"add an email column to the users table; my key is {HOOK_SECRET}"}
    steps["hook prompt"] = _cli(["UserPromptSubmit", "--agent", "claude"], env, outputs, stdin=json.dumps(prompt),
                                module="habitus.deliver.hook")
    tool = {"session_id": f"hook-{SESSION_SECRET}", "cwd": str(repo), "tool_name": "Bash",
            "tool_input": {"command": f"pytest -q --token {HOOK_SECRET}"},
            "tool_response": {"exit_code": 1, "stdout": f"auth failed for {HOOK_SECRET}"}}
    steps["hook tool"] = _cli(["PostToolUse", "--agent", "claude"], env, outputs, stdin=json.dumps(tool),
                              module="habitus.deliver.hook")
    end = {"session_id": f"hook-{SESSION_SECRET}", "cwd": str(repo), "transcript_path": str(sessions[1])}
    steps["hook end"] = _cli(["SessionEnd", "--agent", "claude"], env, outputs, stdin=json.dumps(end),
                             module="habitus.deliver.hook")
    steps["notes add"] = _cli(["notes", "add", f"deploy key for staging: {MCP_SECRET}", "--kind", "gotcha",
                               "--json"], env, outputs, cwd=repo)
    _mcp(repo, home, outputs)
    exported = out / "export.yaml"
    steps["export"] = _cli(["workflows", "export", "--repo", str(repo), "-o", str(exported)], env, outputs)
    docs = [d for d in yaml.safe_load_all(exported.read_text()) if d] if exported.is_file() else []
    if docs:
        hostile = dict(docs[0], id="wf-shared", name=f"shared workflow {IMPORT_SECRET}", pitfalls=[])
        hostile["use_when"] = f"when the token is {IMPORT_SECRET}"
        (given / "hostile.yaml").write_text(yaml.safe_dump(hostile))
        steps["import"] = _cli(["workflows", "import", str(given / "hostile.yaml"), "--repo", str(repo), "--json"],
                               env, outputs)
        steps["export again"] = _cli(["workflows", "export", "-o", str(out / "export-again.yaml")], env, outputs)
    steps["promote"] = _cli(["promote", "--target", "AGENTS.md", "--apply", "--json"], env, outputs, cwd=repo)
    skill = out / "SKILL.md"
    skill.write_text("---\nname: db\n---\n# Database changes\n\n- Run the tests.\n")
    rewards = {"s-canary-0": False, f"s-{SESSION_SECRET}": True, "s-canary-2": True, "s-canary-cwd": True,
               "s-canary-corpus": True, "019a0000-0000-7000-8000-00000000c0de": False}
    (given / "rewards.json").write_text(json.dumps(rewards))
    steps["refine"] = _cli(["refine", str(skill), "--traces", str(base / "sessions"), "--rewards",
                            str(given / "rewards.json"), "--out", str(out / "refine"), "--clusterer", "single",
                            "--json"], env, outputs)
    steps["context"] = _cli(["context", "simulate", str(sessions[0]), "-p", "full", "-o", str(out / "context"),
                             "--json"], env, outputs)
    steps["traces"] = _cli(["traces", "list", "--json"], env, outputs)
    listed = json.loads(steps["traces"].stdout or "[]")
    for item in listed if isinstance(listed, list) else listed.get("traces", []):
        _cli(["traces", "show", str(item["id"]), "--json"], env, outputs)
    return {"home": home, "repo": repo, "out": out, "outputs": outputs, "steps": steps}


def test_every_stage_ran(canary_run: dict[str, Any]) -> None:
    steps = canary_run["steps"]
    for name, done in steps.items():
        assert done.returncode == 0, f"{name}: {done.stderr[-2000:]}"
    ingest = json.loads(steps["ingest"].stdout)
    assert ingest["traces"] == 6 and ingest["redactions"] >= len(SHAPES) + len(CORPUS)
    assert "import" in steps, "nothing was learned, so nothing was exported"
    assert (canary_run["repo"] / "AGENTS.md").read_text().count("habitus:rules:begin") == 1
    assert (canary_run["out"] / "refine" / "manifest.json").is_file()


def test_no_planted_secret_reaches_any_file_or_output(canary_run: dict[str, Any]) -> None:
    roots = [canary_run["home"], canary_run["repo"], canary_run["out"]]
    assert any(p.name.endswith("-wal") or p.name == "habitus.db" for p in _walk(canary_run["home"]))
    assert len(all_secrets()) >= 900
    leaks = _leaks(all_secrets(), roots, canary_run["outputs"])
    assert not leaks, "\n".join(leaks)


def _plant_demo_sessions(root: Path) -> None:
    """Put every shape into the demo's generated sessions: prompts, tool outputs, assistant text."""
    texts = [template.replace("{s}", secret) for _, template, secret in SHAPES]
    files = sorted((root / "claude").rglob("*.jsonl")) + sorted((root / "codex").rglob("*.jsonl"))
    for number, path in enumerate(files):
        lines = []
        for raw in path.read_text(encoding="utf-8").splitlines():
            line = json.loads(raw)
            text = texts[(number * 7 + len(lines)) % len(texts)]
            content = line.get("message", {}).get("content") if isinstance(line.get("message"), dict) else None
            if line.get("type") == "user" and isinstance(content, str):
                line["message"]["content"] = f"{content}\n{text}"
            elif isinstance(content, list):
                for block in content:
                    if block.get("type") == "tool_result" and isinstance(block.get("content"), str):
                        block["content"] = f"{text}\n{block['content']}"
                    elif block.get("type") == "text":
                        block["text"] = f"{block['text']}\n{text}"
            payload = line.get("payload") if line.get("type") == "response_item" else None
            if isinstance(payload, dict) and payload.get("role") == "user":
                payload["content"][0]["text"] += f"\n{text}"
            lines.append(json.dumps(line))
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_demo_report_on_sessions_with_planted_secrets_holds_none(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from habitus.bench import demo, fixture

    made = []
    original = fixture.make_fixture_repo

    def planted(root: Path, **kwargs: Any) -> Any:
        fx = original(root, **kwargs)
        _plant_demo_sessions(fx.root)
        made.append(fx)
        return fx

    monkeypatch.setattr(fixture, "make_fixture_repo", planted)
    result = demo.run_demo(tmp_path / "report", tmp_path / "work", bench_scenarios=1)
    assert made and result.report.is_file() and result.facts["ingest"]["redactions"] >= len(SHAPES)
    secrets = [s for _, _, s in SHAPES]
    leaks = _leaks(secrets, [tmp_path / "report", tmp_path / "work" / "home", made[0].repo],
                   [json.dumps(result.to_dict(), default=str)])
    assert not leaks, "\n".join(leaks)


def test_a_remote_url_with_a_token_never_becomes_part_of_the_subject(tmp_path: Path) -> None:
    from habitus.capture.subject import repo_subject

    repo = make_repo(tmp_path)
    token = "ghp_" + "Remote0Url1Token2Xy3Zw4Vu5Ts6Rq7Po8Nm"
    git(repo, "remote", "add", "origin", f"https://x-access-token:{token}@github.com/acme/app.git")
    subject = repo_subject(repo)
    assert subject is not None and token not in subject and "github.com/acme/app.git" in subject


def test_a_hook_log_line_never_holds_a_secret(habitus_home: Path) -> None:
    from habitus.deliver.hook import log_line

    log_line("UserPromptSubmit", "claude", f"error: ValueError: bad cwd /home/u/{PATH_SECRET}/x")
    text = (habitus_home / "logs" / "hooks.log").read_text()
    assert PATH_SECRET not in text and "[REDACTED:" in text
