"""The time habitus' prompt hook adds to a real prompt, measured by the real Claude Code client.

Claude Code (the pinned CLI in .agent-clients/, see .ci/agent-clients/package.json) writes, with
`--debug-file`, one line per hook run: `Hooks: UserPromptSubmit [command] finished with status 0
(N ms)`. That is the time the client waits before it sends the prompt to the model. This script
fills a throw-away store with 1,000 workflows and 10,000 records (the recall latency bench's
memory), installs the hooks, and plays `--sessions` sessions of `--prompts` prompts each (the first
prompt of a session starts it, the others `--resume` it; the two runners alternate session by
session, so the machine's drift hits both) against the scripted model server of the
tests (tests/scripted_model.py, a stand-in for the paid API: nothing leaves this machine). It
prints p50 / p95 / max of the hook time per prompt, for each runner (`python`: the interpreter's
absolute path; `path`: the `habitus` console script), and where the time goes: the same hook as a
bare subprocess (no client), the interpreter start, and the imports.

    .venv/bin/python benchmarks/bench_client_hook_latency.py [--sessions 6] [--prompts 6]

Target (issue 14 §1.4): p95 ≤ 150 ms per prompt.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))  # the scripted model server (a stand-in for the paid model API)

from bench_recall_latency import TASKS, hook_payload, make_repo, populate  # noqa: E402
from timing import bytecode_env, summary, timed  # noqa: E402

from scripted_model import scripted_model  # noqa: E402

HOOK_LINE = re.compile(r"Hooks: UserPromptSubmit \[(?P<cmd>[^\]]*)\] finished with status (?P<rc>\d+) "
                       r"\((?P<ms>\d+(?:\.\d+)?)ms\)")


def claude_exe() -> Path:
    exe = Path(os.environ.get("HABITUS_AGENT_CLIENTS") or ROOT / ".agent-clients") / "node_modules" / ".bin" / "claude"
    if not exe.exists():
        raise SystemExit(f"{exe} is missing: run .ci/install-agent-clients first")
    return exe


def client_env(root: Path, habitus_home: Path, model_url: str) -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    return {**bytecode_env(), "PATH": os.pathsep.join([bin_dir, "/usr/local/bin", "/usr/bin", "/bin"]),
            "HOME": str(root / "home"), "CLAUDE_CONFIG_DIR": str(root / "home" / ".claude"),
            "HABITUS_HOME": str(habitus_home), "HABITUS_LLM": "none", "ANTHROPIC_BASE_URL": model_url,
            "ANTHROPIC_API_KEY": "sk-scripted-model-stand-in", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1"}


def hook_ms_in_client(repo: Path, env: dict[str, str], session: int, prompts: int, debug: Path) -> list[float]:
    """Hook time per prompt of one session as Claude Code measured it."""
    out: list[float] = []
    exe = str(claude_exe())
    session_id = None
    for p in range(prompts):
        task = TASKS[(session + p) % len(TASKS)]
        log = debug / f"s{session}-p{p}.txt"
        args = [exe, "-p", task, "--output-format", "json", "--debug-file", str(log)]
        if session_id:
            args += ["--resume", session_id]
        done = subprocess.run(args, cwd=repo, env=env, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise SystemExit(f"claude failed: {done.stderr[-500:]}")
        session_id = json.loads(done.stdout)["session_id"]
        found = [m for m in HOOK_LINE.finditer(log.read_text()) if "habitus" in m["cmd"]]
        if len(found) != 1 or found[0]["rc"] != "0":
            raise SystemExit(f"expected one habitus UserPromptSubmit line with status 0 in {log}")
        out.append(float(found[0]["ms"]))
    return out


def prompt_hook_only(settings: Path) -> None:
    """Keep only the prompt hook: here prompts follow each other within a second, and the session-end
    hook's background learning (which a person's minutes between sessions absorb) would compete with
    the next prompt's hook for the two CPUs and the store."""
    data = json.loads(settings.read_text())
    data["hooks"] = {"UserPromptSubmit": data["hooks"]["UserPromptSubmit"]}
    settings.write_text(json.dumps(data, indent=2))


def subprocess_ms(cmd: list[str], runs: int, env: dict[str, str], stdin: bytes = b"") -> list[float]:
    return [timed(cmd, env=env, stdin=stdin).wall for _ in range(runs)]  # a failing run is never timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=6)
    parser.add_argument("--prompts", type=int, default=6)
    parser.add_argument("--workflows", type=int, default=1000)
    parser.add_argument("--records", type=int, default=10000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="habitus-bench-client-") as tmp:
        root = Path(tmp)
        habitus_home = root / "habitus-home"
        os.environ["HABITUS_HOME"] = str(habitus_home)
        repo, files = make_repo(root)
        populate(repo, files, args.workflows, args.records)
        (root / "home" / ".claude").mkdir(parents=True)
        n = args.sessions * args.prompts
        print(f"store: {args.workflows} workflows, {args.records} records; {n} prompts per runner "
              f"({args.sessions} sessions x {args.prompts} prompts); Claude Code "
              f"{subprocess.run([str(claude_exe()), '--version'], capture_output=True, text=True).stdout.strip()}")
        with scripted_model([]) as model:  # every prompt: one short scripted answer (`done (end of script)`)
            env = client_env(root, habitus_home, model.url)
            habitus = str(Path(sys.executable).parent / "habitus")
            measured: dict[str, list[float]] = {"python": [], "path": [], "noop": []}
            settings = root / "home" / ".claude" / "settings.json"
            for session in range(args.sessions):  # runners alternate per session: the machine's drift hits all
                for runner, ms in measured.items():
                    if runner == "noop":  # the client's own cost of running a hook: `true` (named habitus to be found)
                        settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [
                            {"type": "command", "command": "true # habitus no-op"}]}]}}))
                    else:
                        settings.unlink(missing_ok=True)
                        subprocess.run([habitus, "hooks", "install", "--agent", "claude", "--scope", "user",
                                        "--runner", runner], cwd=repo, env=env, check=True, capture_output=True)
                        prompt_hook_only(settings)
                    debug = root / f"debug-{runner}"
                    debug.mkdir(exist_ok=True)
                    ms += hook_ms_in_client(repo, env, session, args.prompts, debug)
            for runner, ms in measured.items():
                name = f"in Claude Code, runner {runner}" if runner != "noop" else "in Claude Code, no-op hook `true`"
                print(summary(name, ms))
                first = ms[::args.prompts]  # a session's first prompt: the client is still starting up beside it
                later = [m for i, m in enumerate(ms) if i % args.prompts]
                print(summary("  first prompt of a session", first))
                print(summary("  later prompts (--resume)", later))
        payload = hook_payload(repo, TASKS[1], "bench-bare")
        bare = env
        print(summary("same hook, bare subprocess (python)",
                      subprocess_ms([sys.executable, "-m", "habitus.deliver.hook", "UserPromptSubmit"], n, bare,
                                    payload)))
        print(summary("same hook, bare subprocess (habitus)",
                      subprocess_ms([habitus, "hook", "UserPromptSubmit"], n, bare, payload)))
        print(summary("hook with an empty payload (start+exit)",
                      subprocess_ms([sys.executable, "-m", "habitus.deliver.hook", "UserPromptSubmit"], n, bare)))
        print(summary("interpreter start (python -c pass)", subprocess_ms([sys.executable, "-c", "pass"], n, bare)))
        imports = "import habitus.deliver.events, habitus.recall.api, habitus.store.sqlite"
        print(summary("interpreter + hook imports", subprocess_ms([sys.executable, "-c", imports], n, bare)))
        shutil.rmtree(root / "home", ignore_errors=True)


if __name__ == "__main__":
    main()
