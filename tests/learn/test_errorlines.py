"""The error line of a failure is kept even when the runner prints its verdict after pages of logs (issue 13 §3:
"Watch out" quotes an actual error line, never a file header)."""

from __future__ import annotations

from habitus.core.trace import Step, StepKind, ToolCall, Trace
from habitus.learn.conventions import error_line
from habitus.learn.detours import find_detours
from habitus.learn.errorlines import error_rank

# the shape of a failing `bun run test` in shared/corpus/real-history/context-evaluator: 190 lines, the verdict last
LOGS = "\n".join(f"[10:02:08.{i:03d}] [Limiter] task {i} ok" for i in range(150))
OUTPUT = ("Exit code 1\n$ bun test src/\nbun test v1.3.5 (1e86cebd)\n\nsrc/shared/claude/response-parser.test.ts:\n"
          f"{LOGS}\nerror: expect(received).toBe(expected)\n(fail) merge > keeps sections [1.85ms]\n\n 1317 pass\n"
          " 1 fail\nerror: script \"test\" exited with code 1")


def test_a_detour_keeps_the_verdict_of_a_long_failure_and_the_trap_quotes_it() -> None:
    steps = [Step(kind=StepKind.TOOL, tool=ToolCall(name="Bash", input={"command": "bun run test"}, output=OUTPUT,
                                                    exit_code=1, is_error=True)),
             Step(kind=StepKind.TOOL, tool=ToolCall(name="Bash", input={"command": "bun run test"}, output="ok",
                                                    exit_code=0))]
    [detour] = find_detours(Trace(id="t", source_format="claude", agent="claude-code", steps=steps))
    assert "(fail) merge > keeps sections [1.85ms]" in detour.error and len(detour.error) < 1000
    assert error_line(detour.error) == "(fail) merge > keeps sections [1.85ms]"


def test_locations_banners_and_plain_logs_are_no_error_lines() -> None:
    for line in ("src/shared/claude/response-parser.test.ts:", "at src/a.ts:3:1", "bun test v1.3.5", "$ bun test",
                 "[10:02:08.940] [Limiter] task 3 ok", "src/components/"):
        assert error_rank(line) == 0, line
    assert error_rank("× Formatter would have printed the following content:") == 1
    assert error_rank("TypeError: x is not a function") == 2
    assert error_rank("Could not resolve the module; build failed") == 3
