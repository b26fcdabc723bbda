"""Small synthetic sessions of Copilot CLI, Gemini CLI, aider and SpecStory, written the way each tool writes them.

Shapes follow the tools' own writers: Copilot CLI's `events.jsonl` as in the two real sessions in
../shared/corpus/copilot-cli (Copilot CLI 1.0.64); Gemini CLI's recording from
google-gemini/gemini-cli `packages/core/src/services/chatRecordingService.ts` and
`chatRecordingTypes.ts` (metadata line, re-appended message records, `$set`, `$rewindTo`) and
`packages/core/src/tools/shell.ts` (`Output: …` / `Exit Code: N`); aider's history from
Aider-AI/aider `aider/io.py` (`#### ` input, `> ` tool output) as in the real file in
../shared/corpus/other_agents/aider; SpecStory from specstoryai/getspecstory
`specstory-cli/pkg/markdown/markdown.go` (Markdown v2.1.0: role headers, `<tool-use>` blocks).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def copilot_events(secret: str = "(no secret)", session: str = "c0ffee00-0000-4000-8000-000000000001"
                   ) -> list[dict[str, Any]]:
    """A Copilot CLI session: one prompt, a view, a failing and a passing test run, an edit, shutdown."""
    n = 0

    def event(kind: str, data: dict[str, Any]) -> dict[str, Any]:
        nonlocal n
        n += 1
        return {"type": kind, "data": data, "id": f"e{n}", "timestamp": f"2026-06-23T05:17:{n:02d}.000Z",
                "parentId": f"e{n - 1}" if n > 1 else None}

    def request(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"toolCallId": call_id, "name": name, "arguments": arguments, "type": "function",
                "intentionSummary": name}

    def complete(call_id: str, content: str | None, success: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {"toolCallId": call_id, "model": "claude-sonnet-4.6", "turnId": "0", "success": success}
        if success:
            data["result"] = {"content": content, "detailedContent": content}
        else:
            data["error"] = {"message": content, "code": "failure"}
        return event("tool.execution_complete", data)

    return [
        event("session.start", {"sessionId": session, "version": 1, "producer": "copilot-agent",
                                "copilotVersion": "1.0.102", "startTime": "2026-06-23T05:17:00.000Z",
                                "selectedModel": "claude-sonnet-4.6",
                                "context": {"cwd": "/home/dev/shop", "gitRoot": "/home/dev/shop", "branch": "main",
                                            "headCommit": "2de577249fd743b468824e1326b8603a00792511",
                                            "repository": "dev/shop"}}),
        event("hook.start", {"hookInvocationId": "h1", "hookType": "userPromptSubmitted", "input": {}}),
        event("hook.end", {"hookInvocationId": "h1", "hookType": "userPromptSubmitted", "success": True}),
        event("system.message", {"role": "system", "content": "You are the GitHub Copilot CLI."}),
        event("user.message", {"content": f"fix the paging bug; my token is {secret}",
                               "transformedContent": "<current_datetime>…</current_datetime> fix the paging bug",
                               "attachments": []}),
        event("assistant.turn_start", {"turnId": "0"}),
        event("assistant.message", {"messageId": "m1", "model": "claude-sonnet-4.6", "content": "",
                                    "reasoningText": "Look at the code first.", "outputTokens": 40,
                                    "toolRequests": [request("t1", "view", {"path": "/home/dev/shop/paging.py"}),
                                                     request("t2", "bash", {"command": "pytest -q"})]}),
        event("tool.execution_start", {"toolCallId": "t1", "toolName": "view",
                                       "arguments": {"path": "/home/dev/shop/paging.py"}}),
        event("tool.execution_start", {"toolCallId": "t2", "toolName": "bash", "arguments": {"command": "pytest -q"}}),
        complete("t1", "1. def page(items, n):\n2.     return items[n:n + 11]"),
        complete("t2", "1 failed, 2 passed\n<shellId: 0 completed with exit code 1>"),
        event("assistant.turn_end", {"turnId": "0"}),
        event("assistant.message", {"messageId": "m2", "model": "claude-sonnet-4.6",
                                    "content": "The slice is one too long.", "outputTokens": 30,
                                    "toolRequests": [request("t3", "edit", {"path": "/home/dev/shop/paging.py",
                                                                            "old_str": "n + 11",
                                                                            "new_str": "n + 10"})]}),
        event("tool.execution_start", {"toolCallId": "t3", "toolName": "edit", "arguments": {}}),
        complete("t3", "File /home/dev/shop/paging.py updated."),
        event("assistant.message", {"messageId": "m3", "model": "claude-sonnet-4.6", "content": "",
                                    "outputTokens": 12,
                                    "toolRequests": [request("t4", "view", {"path": "/home/dev/shop/nope.py"}),
                                                     request("t5", "bash", {"command": "pytest -q"})]}),
        complete("t4", "Path does not exist", success=False),
        complete("t5", "3 passed\n<shellId: 1 completed with exit code 0>"),
        event("assistant.message", {"messageId": "m4", "model": "claude-sonnet-4.6", "content": "Fixed: tests pass.",
                                    "toolRequests": [], "outputTokens": 9}),
        event("session.shutdown", {"shutdownType": "routine", "totalPremiumRequests": 1,
                                   "codeChanges": {"linesAdded": 1, "linesRemoved": 1,
                                                   "filesModified": ["/home/dev/shop/paging.py"]},
                                   "modelMetrics": {"claude-sonnet-4.6": {
                                       "requests": {"count": 4, "cost": 1},
                                       "usage": {"inputTokens": 12000, "outputTokens": 91, "cacheReadTokens": 30000,
                                                 "cacheWriteTokens": 2000, "reasoningTokens": 0}}},
                                   "currentModel": "claude-sonnet-4.6"}),
        event("session.frobnicated", {"what": "an event type this reader does not know"}),
    ]


def gemini_records(secret: str = "(no secret)") -> list[dict[str, Any]]:
    """A Gemini CLI JSONL recording: updates re-append a message, `$set`, and a `$rewindTo` that drops a turn."""
    shell = {"id": "run_shell_command-1", "name": "run_shell_command", "args": {"command": "npm test"},
             "status": "executing", "timestamp": "2026-10-09T10:13:05.000Z"}
    failed_run = {**shell, "status": "success", "result": [{"functionResponse": {
        "id": "run_shell_command-1", "name": "run_shell_command",
        "response": {"output": "Output: FAIL test/paginate.test.js\nExit Code: 1\nProcess Group PGID: 4242"}}}],
        "resultDisplay": "FAIL test/paginate.test.js", "displayName": "Shell"}
    edit = {"id": "replace-2", "name": "replace", "status": "success", "timestamp": "2026-10-09T10:13:11.000Z",
            "args": {"file_path": "/home/dev/shop/src/paginate.js", "old_string": "+ 1;", "new_string": ";"},
            "result": [{"functionResponse": {"id": "replace-2", "name": "replace",
                                             "response": {"output": "Successfully modified file"}}}],
            "resultDisplay": {"fileDiff": "@@ -3 +3 @@", "fileName": "paginate.js"}}
    read_missing = {"id": "read_file-3", "name": "read_file", "status": "error",
                    "timestamp": "2026-10-09T10:13:12.000Z", "args": {"absolute_path": "/home/dev/shop/NOTES.md"},
                    "result": [{"functionResponse": {"id": "read_file-3", "name": "read_file",
                                                     "response": {"error": "File not found"}}}]}
    passing_run = {"id": "run_shell_command-4", "name": "run_shell_command", "args": {"command": "npm test"},
                   "status": "success", "timestamp": "2026-10-09T10:13:20.000Z",
                   "result": [{"functionResponse": {
                       "id": "run_shell_command-4", "name": "run_shell_command",
                       "response": {"output": "Output: 3 passing\nProcess Group PGID: 4250"}}}]}
    tokens = {"input": 12000, "output": 300, "cached": 8000, "thoughts": 120, "tool": 0, "total": 12420}
    return [
        {"sessionId": "9b1f0c2e-5e2a-4c1e-9d7a-0a1b2c3d4e5f", "projectHash": "shop",
         "startTime": "2026-10-09T10:13:00.000Z", "lastUpdated": "2026-10-09T10:13:00.000Z"},
        {"id": "u1", "timestamp": "2026-10-09T10:13:01.000Z", "type": "user",
         "content": [{"text": f"fix paging; AWS key {secret}"}]},
        {"$set": {"lastUpdated": "2026-10-09T10:13:01.000Z"}},
        {"id": "g1", "timestamp": "2026-10-09T10:13:04.000Z", "type": "gemini", "content": "",
         "model": "gemini-3-pro-preview", "toolCalls": [shell],
         "thoughts": [{"subject": "Plan", "description": "run the tests", "timestamp": "2026-10-09T10:13:03.000Z"}]},
        {"id": "g1", "timestamp": "2026-10-09T10:13:04.000Z", "type": "gemini", "content": "",
         "model": "gemini-3-pro-preview", "toolCalls": [failed_run], "tokens": tokens,
         "thoughts": [{"subject": "Plan", "description": "run the tests", "timestamp": "2026-10-09T10:13:03.000Z"}]},
        {"id": "g2", "timestamp": "2026-10-09T10:13:10.000Z", "type": "gemini",
         "content": [{"text": "The end index is off by one."}], "model": "gemini-3-pro-preview",
         "toolCalls": [edit, read_missing], "tokens": {**tokens, "input": 13000, "cached": 12000}},
        {"id": "i1", "timestamp": "2026-10-09T10:13:15.000Z", "type": "info", "content": "Request cancelled."},
        {"id": "g3", "timestamp": "2026-10-09T10:13:20.000Z", "type": "gemini", "content": "",
         "model": "gemini-3-pro-preview", "toolCalls": [passing_run], "tokens": {**tokens, "input": 14000}},
        {"id": "u2", "timestamp": "2026-10-09T10:14:00.000Z", "type": "user", "content": "now delete the repo"},
        {"id": "g4", "timestamp": "2026-10-09T10:14:02.000Z", "type": "gemini", "content": "Deleting.",
         "model": "gemini-3-pro-preview"},
        {"$rewindTo": "u2"},
        {"id": "g5", "timestamp": "2026-10-09T10:14:30.000Z", "type": "gemini", "content": "Paging is fixed.",
         "model": "gemini-3-flash-preview", "tokens": {**tokens, "input": 500, "cached": 0}},
        {"$set": {"summary": "Fix the paging off-by-one", "lastUpdated": "2026-10-09T10:14:31.000Z"}},
    ]


_NO_MATCH_END = ("The SEARCH section must exactly match an existing block of lines including all white space, "
                 "comments, indentation, docstrings, etc")
AIDER_HISTORY = """
# aider chat started at 2026-01-05 09:00:00

> /home/dev/shop/.venv/bin/aider --model gpt-5.2
> Aider v0.86.1
> Main model: gpt-5.2 with diff edit format
> Git repo: .git with 12 files

#### fix the paging bug in paging.py
#### the last item is repeated

The end index is off by one.

paging.py
```python
<<<<<<< SEARCH
    return items[n:n + 11]
=======
    return items[n:n + 10]
>>>>>>> REPLACE
```

notes.md
```
<<<<<<< SEARCH
TODO paging
=======
DONE paging
>>>>>>> REPLACE
```

> Tokens: 2.4k sent, 1.1k cache hit, 104 received. Cost: $0.0042 message, $0.0042 session.
> Applied edit to paging.py
> # 1 SEARCH/REPLACE block failed to match!

## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in notes.md
<<<<<<< SEARCH
TODO paging
=======
DONE paging
>>>>>>> REPLACE

""" + _NO_MATCH_END + """

I will create notes.md instead.
> Commit 1b2614a fix: paging end index
> Running pytest -q
> Add command output to the chat? (Y)es/(N)o [Yes]: y
> Added 3 lines of output to the chat.

#### /test pytest -q
> Added 12 lines of output to the chat.

#### /run git status
> Add command output to the chat? (Y)es/(N)o [Yes]: n

# aider chat started at 2026-01-06 10:00:00

> Aider v0.86.1
> Model: gpt-5.2 with diff edit format

#### /ask what does page() return?

A slice of at most ten items.

> Tokens: 3.1k sent, 40 received. Cost: $0.0050 message, $0.0050 session.
"""


SPECSTORY_CLAUDE = """<!-- Generated by SpecStory, Markdown v2.1.0 -->

<!-- Claude Code Session 5c7d5c23-0691-4467-b98e-0fb865b4a639 (2026-07-13 13:40:49Z) -->

# 2026-07-13 13:40:49Z

_**User (2026-07-13 13:40:49Z)**_

fix the flaky test in app.py

---

_**Agent (claude-opus-4-6 2026-07-13 13:40:56Z)**_

<think><details><summary>Thought Process</summary>
Run the tests first.
</details></think>

I'll look at the test first.

<tool-use data-tool-type="shell" data-tool-name="Bash"><details>
<summary>Tool use: **Bash**</summary>
Run the suite

`pytest tests/ -q`

```text
Exit code 1
1 failed, 3 passed
```
</details></tool-use>

_**Agent (claude-opus-4-6 2026-07-13 13:41:05Z)**_

<tool-use data-tool-type="read" data-tool-name="Read"><details>
<summary>Tool use: **Read**</summary>
 `./src/app.py`

```text
1\tx = 1
```
</details></tool-use>

_**Agent (claude-opus-4-6 2026-07-13 13:41:20Z)**_

<tool-use data-tool-type="write" data-tool-name="Edit"><details>
<summary>Tool use: **Edit**</summary>

```text
The file /home/dev/widgets/src/app.py has been updated successfully.
```
</details></tool-use>

_**Agent - sidechain (claude-haiku-4-5 2026-07-13 13:41:30Z)**_

<tool-use data-tool-type="search" data-tool-name="Grep"><details>
<summary>Tool use: **Grep** pattern `flaky`</summary>
</details></tool-use>

_**Agent (claude-opus-4-6 2026-07-13 13:41:40Z)**_

<tool-use data-tool-type="shell" data-tool-name="Bash"><details>
<summary>Tool use: **Bash**</summary>

```bash
cd /home/dev/widgets
pytest tests/ -q
```

```text
4 passed
```
</details></tool-use>

The test is fixed.
"""

SPECSTORY_CURSOR_LEGACY = """<!-- Generated by SpecStory -->

# Add a health endpoint (2025-03-05 10:00:00)

_**User**_

add a /health endpoint

---

_**Assistant**_

I'll read the router first.

<details>
            <summary>Tool use: **read_file** • Read file: src/router.ts</summary>

</details>

<tool-use data-tool-type="shell" data-tool-name="run_terminal_cmd">
<details><summary>Tool use: **run_terminal_cmd** • Run command: npm test</summary>

```bash
npm test
```

```
Tests: 5 passed
```
</details>
</tool-use>

Done.
"""


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
