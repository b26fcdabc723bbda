"""Whole-process latency of `habitus recall` with 1,000 workflows, 10,000 records and a repo map in the store.

Builds a throw-away HABITUS_HOME and a small real git repo, fills the store with synthetic
workflows (steps at the repo's files, cues drawn from a vocabulary) and records through
`habitus.store.memory`, then times real CLI processes for a mix of tasks: ones whose cue fires
(validation + render), unrelated ones (cue miss → BM25 fallback over all workflows), negated and
inspect-only ones, a pasted plan naming files (where to look: the repo map of `--map-tasks` past tasks,
the code index of HEAD, a quoted phrase searched with `git grep`), and the prompt-submit hook
(`habitus hook UserPromptSubmit`, which runs recall). Prints p50 / p95 / max wall and CPU time per
entry point.

Child processes run as an installed package does: the package is byte-compiled first
(`compileall`) and the children get an environment without PYTHONDONTWRITEBYTECODE, so they load
cached bytecode instead of recompiling every module.


    .venv/bin/python benchmarks/bench_recall_latency.py [--runs 60] [--workflows 1000] [--records 10000]
        [--map-tasks 2000] [--files 40]

Target (issue 4 §7): p95 ≤ 200 ms for `habitus recall` on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import bytecode_env, summary, timed  # noqa: E402

VOCAB = str.split("grid toolbar export import palette layer brush zoom canvas history undo redo selection snap ruler "
         "guide font text shape filter plugin theme cache session login token upload download search index "
         "queue worker retry timeout backoff parser lexer schema migration route handler endpoint config "
         "option flag metric logger trace span report chart table column pager sort")
VERBS = ("add", "fix", "rename", "remove", "support", "implement", "refactor", "speed up")

TASKS = [
    "Add a keyboard shortcut Alt+G for toggling the grid",  # fires the hand-made shortcut workflow
    "Add the palette export option to the toolbar",  # fires synthetic cues
    "Fix the retry backoff in the upload worker",
    "Write a haiku about autumn leaves",  # unrelated: cue miss, BM25 fallback over all workflows
    "Toggle the grid from the menu; do not add a keyboard shortcut",  # negated
    "Review the keyboard shortcuts described in the docs only, no code changes",  # inspect
    "Implement the following plan:\n\n# Plan: Faster palette export\n\n## Context\nThe \"Export palette\" button "
    "is slow.\n\n## Changes\n**File:** `src/palette_2.py`\n- Cache `Palette2` lookups.\n",  # where to look
]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.email=b@example.com", "-c", "user.name=Bench", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


def make_repo(root: Path, n_files: int = 40) -> tuple[Path, list[str]]:
    repo = root / "repo"
    (repo / "src").mkdir(parents=True)
    files = []
    for i in range(n_files):
        rel = f"src/{VOCAB[i % len(VOCAB)]}_{i}.py"
        body = [f'"""Module {i}."""', "", f"class {VOCAB[i % len(VOCAB)].title()}{i}:"]
        for j in range(8):
            body += [f"    def method_{j}(self, value):", f"        return value + {j}", ""]
        if i == 2:
            body += ['LABEL = "Export palette"']
        (repo / rel).write_text("\n".join(body) + "\n", encoding="utf-8")
        files.append(rel)
    (repo / "src/keymap.py").write_text("class Keymap:\n    def bindings(self):\n        return {}\n", encoding="utf-8")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "bench repo")
    return repo, files


def populate_map(repo: Path, files: list[str], n_tasks: int, seed: int = 11) -> None:
    """A repo map learned from `n_tasks` synthetic past tasks over the repo's files (default model and limits)."""
    from habitus.capture.subject import repo_subject
    from habitus.core.record import EditFact, Record
    from habitus.core.repomap import CheckConvention, Trap
    from habitus.learn.repomap import MapBuilder
    from habitus.recall.where import DEFAULT_MODEL
    from habitus.store.repomap import save_repo_map
    from habitus.store.sqlite import connect

    rng = random.Random(seed)
    builder = MapBuilder(repo_subject(repo))
    for i in range(n_tasks):
        words = " ".join(rng.sample(VOCAB, 4))
        builder.add(Record(trace_id=f"map-{i}", task=f"{rng.choice(VERBS)} the {words}",
                           date=f"2026-09-{1 + i % 28:02d}",
                           edits=[EditFact(file=f) for f in rng.sample(files, rng.randint(1, 3))]))
    repomap = builder.map
    repomap.model = dict(DEFAULT_MODEL)
    repomap.thresholds = {"min_chance": 0.4, "handover_chance": 0.5}
    repomap.checks = [CheckConvention(command="python -m pytest -q", kind="test", tasks=n_tasks // 2)]
    repomap.checked_tasks = n_tasks // 2
    repomap.traps = [Trap(failing="python -m pytest -q", error="E   ModuleNotFoundError: No module named 'src'",
                          fixing="PYTHONPATH=. python -m pytest -q", tasks=12, files=files[:5])]
    conn = connect()
    save_repo_map(conn, repo_subject(repo) or "", repomap)
    conn.close()


def populate(repo: Path, files: list[str], n_workflows: int, n_records: int, seed: int = 7) -> None:
    from habitus.capture.subject import repo_subject
    from habitus.core.record import CommandFact, EditFact, Record
    from habitus.core.workflow import Place, Workflow
    from habitus.store.db import open_db
    from habitus.store.memory import import_workflows, save_records

    rng = random.Random(seed)
    subject = repo_subject(repo)
    head = _git(repo, "rev-parse", "HEAD")
    workflows = [Workflow.from_dict({
        "id": "wf-shortcut", "name": "Add a keyboard shortcut", "intent": "change",
        "cues": {"any": ["keyboard shortcut", "hotkey"], "none": []},
        "fills": [{"blank": "{key}", "from": "key", "n": 1}],
        "steps": [{"do": "Bind {key} in the keymap", "place": {"file": "src/keymap.py",
                                                               "chain": ["class Keymap:", "def bindings(self):"]}}],
        "checks": ["python -m pytest -q"],
        "provenance": {"sources": [{"trace": "t0", "commit": head, "date": "2026-11-01"}]},
    })]
    for i in range(n_workflows - 1):
        a, b = rng.sample(VOCAB, 2)
        verb = rng.choice(VERBS)
        steps = []
        for _ in range(rng.randint(2, 5)):
            f = rng.choice(files)
            k = rng.randint(0, 7)
            steps.append({"do": f"{verb} {a} handling in {f}",
                          "place": {"file": f, "chain": [f"class {Path(f).stem.split('_')[0].title()}"
                                                         f"{Path(f).stem.split('_')[1]}:",
                                                         f"def method_{k}(self, value):"]}})
        workflows.append(Workflow.from_dict({
            "id": f"wf-{i:04d}", "name": f"{verb.title()} {a} {b}", "use_when": f"a task about {a} and {b}",
            "intent": "change", "cues": {"any": [f"{a} {b}", f"{b} {a}"], "none": []},
            "steps": steps, "checks": ["python -m pytest -q"],
            "pitfalls": [{"text": f"Run the {a} tests with -q", "trigger": {"on": "command", "all": ["pytest"]}}],
            "provenance": {"sources": [{"trace": f"t{i}", "commit": head, "date": "2026-11-01"}]},
        }))
    records = [Record(trace_id=f"trace-{i:05d}", subject=subject, task=f"{rng.choice(VERBS)} the {rng.choice(VOCAB)}",
                      session_id=f"s{i}", agent="claude-code", date=f"2026-10-{1 + i % 28:02d}",
                      edits=[EditFact(file=rng.choice(files), places=[Place(rng.choice(files), ["class X:"])],
                                      added=["x = 1"], tool="Edit")],
                      commands=[CommandFact("python -m pytest -q", 0)], checks=["python -m pytest -q"],
                      outcome="success")
               for i in range(n_records)]
    conn = open_db()  # the configured store: SQLite, or HABITUS_STORE_URL (bench_store_backends.py)
    import_workflows(conn, subject, workflows)
    save_records(conn, records)
    conn.close()


CHILD_ENV: dict[str, str] = {}


def time_runs(cmd: list[str], tasks: list[str], runs: int, repo: Path) -> tuple[list[float], list[float]]:
    """(wall ms, CPU ms) of `runs` recall processes over `tasks`, round-robin."""
    times = [timed([*cmd, tasks[i % len(tasks)], "--cwd", str(repo), "--json"], env=CHILD_ENV or None)
             for i in range(runs)]
    return [t.wall for t in times], [t.cpu for t in times]


def hook_payload(repo: Path, task: str, session: str) -> bytes:
    return json.dumps({"cwd": str(repo), "hook_event_name": "UserPromptSubmit", "prompt": task,
                       "session_id": session}).encode()


def time_hook(habitus: str, tasks: list[str], runs: int, repo: Path, *,
              new_session: bool) -> tuple[list[float], list[float]]:
    """(wall ms, CPU ms) of `habitus hook UserPromptSubmit` with a real payload."""
    times = [timed([habitus, "hook", "UserPromptSubmit", "--agent", "claude"], env=CHILD_ENV or None,
                   stdin=hook_payload(repo, tasks[i % len(tasks)], f"bench-{i}" if new_session else "bench-same"))
             for i in range(runs)]
    return [t.wall for t in times], [t.cpu for t in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--workflows", type=int, default=1000)
    parser.add_argument("--records", type=int, default=10000)
    parser.add_argument("--map-tasks", type=int, default=2000, help="past tasks in the repo map (0: no map)")
    parser.add_argument("--files", type=int, default=40, help="files in the bench repo")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="run the children with PYTHONDONTWRITEBYTECODE as inherited (every module recompiled)")
    args = parser.parse_args()
    if not args.no_bytecode:
        CHILD_ENV.update(bytecode_env())
    with tempfile.TemporaryDirectory(prefix="habitus-bench-recall-") as tmp:
        root = Path(tmp)
        os.environ["HABITUS_HOME"] = str(root / "home")
        repo, files = make_repo(root, args.files)
        t0 = time.perf_counter()
        populate(repo, files, args.workflows, args.records)
        if args.map_tasks:
            populate_map(repo, files, args.map_tasks)
        print(f"store: {args.workflows} workflows, {args.records} records, a repo map of {args.map_tasks} past tasks "
              f"over {args.files} files (filled in {time.perf_counter() - t0:.1f} s); tasks: {len(TASKS)} kinds, "
              "round-robin")
        habitus = str(Path(sys.executable).with_name("habitus"))
        fast = [sys.executable, "-m", "habitus.recall"]
        time_runs([habitus, "recall"], TASKS, 3, repo)  # warm the page cache
        # "--count": every show bumps counters, which invalidates the recall cache until it settles (2 s);
        # plain (not counted, the default by hand): memory unchanged between prompts (cache warm)
        rows = [("habitus recall --count (CLI)", [habitus, "recall", "--count"]),
                ("python -m habitus.recall --count", [*fast, "--count"]),
                ("habitus recall (CLI)", [habitus, "recall"]),
                ("python -m habitus.recall", fast)]
        print(f"load average before timing: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs "
              "(wall time grows with other load; CPU time much less)")
        print("child processes: " + ("bytecode as inherited (PYTHONDONTWRITEBYTECODE="
                                     f"{os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r})" if args.no_bytecode
                                     else "package byte-compiled first, bytecode enabled (as installed)"))
        for name, cmd in rows:
            if "--count" not in cmd:
                time.sleep(2.5)  # let the last counted show settle so the cache is written once
            print(summary(name, *time_runs(cmd, TASKS, args.runs, repo)))
        for task in TASKS:
            print(summary(f"  CLI: {task[:22]}", *time_runs([habitus, "recall"], [task], max(5, args.runs // 6), repo)))
        for name, new_session in (("hook prompt submit (new session)", True),
                                  ("hook prompt submit (same session)", False)):
            print(summary(name, *time_hook(habitus, TASKS, args.runs, repo, new_session=new_session)))
        print(f"load average after timing: {os.getloadavg()[0]:.2f}")
        from habitus.recall import recall

        inproc = []
        for i in range(args.runs):
            start = time.perf_counter()
            recall(TASKS[i % len(TASKS)], cwd=repo, log=False)
            inproc.append((time.perf_counter() - start) * 1000)
        print(summary("recall() in process", inproc))


if __name__ == "__main__":
    main()
