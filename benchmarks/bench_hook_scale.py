"""The prompt hook and `habitus recall` at real size (issue 22 §6), for this checkout and others in the same run.

Two kinds of repository:

- `--repo R --home H`: a real repository and a store with its sessions ingested. The store is copied (never
  written) and learned once when it has no repo map; the repository is cloned locally (a new commit is made
  in the clone, never in R). Prompts are the recorded tasks of its sessions.
- `--files N`: a synthetic repository of N tracked files with the memory of `bench_recall_latency` (1,000
  workflows, 10,000 records, a repo map of 2,000 past tasks). Prompts are that benchmark's task mix.

Each source tree (this checkout's `src`, then every `--src`, e.g. an export of main before a change) gets
its own copy of the store, and its warm state: what it prebuilds (`python -m habitus.recall.prebuild`,
where it exists) and what its first calls cache. Then the rows run interleaved prompt by prompt, so the
machine's load falls on every tree alike: the prompt hook with a new session each prompt (the first-prompt
path, which shows and logs), the hook within one session, the same hook without the hook server (its own
forked worker, as when no server runs yet; trees that have a server), and `habitus recall --json`. Children
run with bytecode as installed (`timing.bytecode_env`). Last, for trees that prebuild: the hook right after a new
commit (the last snapshot answers, no rebuild started: `HABITUS_PREBUILD=off`) and the time of the rebuild
itself, outside the hook.

    .venv/bin/python benchmarks/bench_hook_scale.py --repo ../rh/git-sync --home ../rh/home-git-sync [--src OLD/src]
    .venv/bin/python benchmarks/bench_hook_scale.py --files 100000 [--runs 21] [--src OLD/src]

Targets (issue 22 §6, idle 2-core machine): hook p95 ≤ 150 ms on a repository of ~1,000 commits with ~250
sessions, ≤ 300 ms with 100,000 tracked files; `habitus recall` p95 ≤ 150 ms over 1,000 workflows.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_recall_latency import TASKS, hook_payload, make_repo, populate, populate_map  # noqa: E402
from timing import Run, bytecode_env, load_line, p95, summary, timed  # noqa: E402

THIS_SRC = Path(__file__).resolve().parents[1] / "src"
HABITUS = str(Path(sys.executable).with_name("habitus"))  # the console script: `habitus recall`, `habitus hook`
SERVER_IDLE_S = "120"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.email=b@example.com", "-c", "user.name=Bench", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


def recorded_tasks(db: Path, n: int, seed: int = 1) -> list[str]:
    """`n` recorded prompts of the store (longer than a follow-up), in a fixed random order."""
    conn = sqlite3.connect(db)
    try:
        rows = [json.loads(d).get("task") or "" for (d,) in conn.execute("SELECT data FROM learn_records")]
    finally:
        conn.close()
    tasks = sorted({t for t in rows if len(t) > 25})
    random.Random(seed).shuffle(tasks)
    return tasks[:n]


def real_dataset(repo: Path, home: Path, work: Path, env: dict[str, str]) -> tuple[Path, Path]:
    """(clone of `repo`, learned copy of `home`) under `work`."""
    clone = work / "repo"
    _git(work, "clone", "-q", "--local", str(repo), str(clone))
    master = work / "home-master"
    shutil.copytree(home, master)
    conn = sqlite3.connect(master / "habitus.db")
    try:
        mapped = conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'repo_maps'").fetchone()[0] and \
            conn.execute("SELECT count(*) FROM repo_maps").fetchone()[0]
    finally:
        conn.close()
    if not mapped:
        t0 = time.perf_counter()
        subprocess.run([HABITUS, "learn"], cwd=clone, env={**env, "HABITUS_HOME": str(master)},
                       check=True, capture_output=True)
        print(f"learned the store copy in {time.perf_counter() - t0:.1f} s")
    shutil.rmtree(master / "cache", ignore_errors=True)  # every tree builds its own caches
    return clone, master


def synthetic_dataset(n_files: int, work: Path) -> tuple[Path, Path]:
    """(repo of `n_files` files, home with bench_recall_latency's memory) under `work`."""
    master = work / "home-master"
    os.environ["HABITUS_HOME"] = str(master)
    t0 = time.perf_counter()
    repo, files = make_repo(work, n_files)
    populate(repo, files[:40], 1000, 10000)
    populate_map(repo, files, 2000)
    shutil.rmtree(master / "cache", ignore_errors=True)
    print(f"synthetic repo of {n_files} files with 1000 workflows, 10000 records, a map of 2000 tasks "
          f"({time.perf_counter() - t0:.1f} s)")
    return repo, master


def has(src: Path, module: str) -> bool:
    return (src / "habitus" / f"{module.replace('.', '/')}.py").exists()


def prepare(src: Path, master: Path, work: Path, index: int, repo: Path, tasks: list[str]) -> dict[str, str]:
    """The environment of one source tree: its own home, its prebuilt data, its first (caching) calls, and its hook
    server where it has one."""
    home = work / f"home-{index}"
    shutil.copytree(master, home)
    env = {**bytecode_env(src / "habitus"), "PYTHONPATH": str(src), "HABITUS_HOME": str(home),
           "HABITUS_HOOK_SERVER_IDLE_S": SERVER_IDLE_S}
    for name in ("HABITUS_PREBUILD", "HABITUS_HOOK_SERVER"):
        env.pop(name, None)
    if has(src, "recall.prebuild"):
        t0 = time.perf_counter()
        timed([sys.executable, "-m", "habitus.recall.prebuild", str(repo)], env=env)
        print(f"{src}: prebuilt HEAD in {time.perf_counter() - t0:.1f} s")
    if has(src, "deliver.hook_server"):
        SERVERS.append(subprocess.Popen([sys.executable, "-m", "habitus.deliver.hook_server"], env=env))
    for task in tasks[:3]:
        timed([HABITUS, "recall", task, "--cwd", str(repo), "--json"], env=env)
        hook(env, repo, task, "warm-up")
    time.sleep(2.5)  # the recall cache is written once memory has settled
    return env


SERVERS: list[subprocess.Popen[bytes]] = []


def hook(env: dict[str, str], repo: Path, task: str, session: str) -> Run:
    return timed([HABITUS, "hook", "UserPromptSubmit", "--agent", "claude"], env=env,
                 stdin=hook_payload(repo, task, session))


def rows(src: Path) -> list[tuple[str, str, dict[str, str]]]:
    """(name, hook | recall, environment changes) of each timed row of a tree."""
    out = [("hook, new session", "hook", {}), ("hook, same session", "hook-same", {}),
           ("recall --json (CLI)", "recall", {})]
    if has(src, "deliver.hook_server"):  # the same without the server: the hook's own forked worker, the CLI alone
        out += [("hook, new session, no server", "hook", {"HABITUS_HOOK_SERVER": "off"}),
                ("recall --json, no server", "recall", {"HABITUS_HOOK_SERVER": "off"})]
    return out


def run_row(kind: str, env: dict[str, str], repo: Path, task: str, session: str) -> Run:
    if kind == "recall":
        return timed([HABITUS, "recall", task, "--cwd", str(repo), "--json"], env=env)
    return hook(env, repo, task, session if kind == "hook" else f"{session.rsplit('-', 1)[0]}-same")


def children_cpu(pid: int) -> float:
    """CPU seconds of the waited-for children of `pid` (the hook server's forked workers)."""
    fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path)
    parser.add_argument("--home", type=Path)
    parser.add_argument("--files", type=int, default=0,
                        help="a synthetic repository of this many files instead (default without --repo: 100000)")
    parser.add_argument("--src", type=Path, action="append", default=[], help="another checkout's src to time too")
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--moved-runs", type=int, default=7)
    args = parser.parse_args()
    if args.repo or args.home:
        if not (args.repo and args.home) or args.files:
            parser.error("give --repo and --home together, or --files")
    elif not args.files:
        args.files = 100_000  # `make bench`: the repository size issue 22 names
    srcs = [THIS_SRC, *[s.resolve() for s in args.src]]
    with tempfile.TemporaryDirectory(prefix="habitus-bench-scale-") as tmp:
        work = Path(tmp)
        if args.files:
            repo, master = synthetic_dataset(args.files, work)
            tasks = TASKS
        else:
            repo, master = real_dataset(args.repo.resolve(), args.home.resolve(), work,
                                        {**os.environ, "PYTHONPATH": str(THIS_SRC)})
            tasks = recorded_tasks(master / "habitus.db", max(args.runs, 7))
        commits = _git(repo, "rev-list", "--count", "HEAD")
        tracked = len(_git(repo, "ls-files").splitlines())
        print(f"repository: {commits} commits, {tracked} tracked files; {len(tasks)} prompts, round-robin")
        envs = [prepare(src, master, work, i, repo, tasks) for i, src in enumerate(srcs)]
        try:
            time_trees(srcs, envs, repo, tasks, args.runs)
            moved(repo, tasks, [(src, env) for src, env in zip(srcs, envs, strict=True)
                                if has(src, "recall.prebuild")], args.moved_runs)
        finally:
            for server in SERVERS:
                server.terminate()
                server.wait()


def time_trees(srcs: list[Path], envs: list[dict[str, str]], repo: Path, tasks: list[str], runs: int) -> None:
    """Every row of every tree, interleaved prompt by prompt; a summary line per row, then the p95 ratios."""
    print(f"before timing: {load_line()}")
    cpu0 = [children_cpu(s.pid) for s in SERVERS]
    results: dict[tuple[int, str], list[Run]] = {}
    for n in range(runs):
        task = tasks[n % len(tasks)]
        for i, env in enumerate(envs):  # interleaved: every tree sees the same load
            for r, (name, kind, extra) in enumerate(rows(srcs[i])):
                results.setdefault((i, name), []).append(run_row(kind, {**env, **extra}, repo, task,
                                                                 f"bench-{i}-{r}-{n}"))
    print(f"after timing: {load_line()}")
    served = 3 * runs  # per tree with a server: two hook rows and the CLI row go to it
    for server, before in zip(SERVERS, cpu0, strict=True):
        per_call = 1000 * (children_cpu(server.pid) - before) / served
        print(f"hook server {server.pid}: its workers' CPU {per_call:.1f} ms per served call (mean of {served}; the "
              "callers' own CPU is in the rows)")
    for i, src in enumerate(srcs):
        print(f"[{i}] {src}")
        for name, kind, _ in rows(src):
            done = results[(i, name)]
            printed = f" | printed {sum(bool(r.out.strip()) for r in done)}/{len(done)}" if kind != "recall" else ""
            print(summary(f"  {name}", [r.wall for r in done], [r.cpu for r in done]) + printed)
    for name in ("hook, new session", "recall --json (CLI)"):
        base = p95([r.wall for r in results[(0, name)]])
        for i in range(1, len(srcs)):
            print(f"p95 ratio [{i}] / [0], {name}: {p95([r.wall for r in results[(i, name)]]) / base:.2f}")


def moved(repo: Path, tasks: list[str], trees: list[tuple[Path, dict[str, str]]], runs: int) -> None:
    """After a new commit: the hook from the last snapshot (no rebuild started), then the rebuild's own time."""
    if not trees:
        return
    (repo / "bench_moved.txt").write_text("a new commit\n", encoding="utf-8")
    _git(repo, "add", "bench_moved.txt")
    _git(repo, "commit", "-q", "-m", "bench: HEAD moves")
    for src, env in trees:
        quiet = {**env, "HABITUS_PREBUILD": "off"}
        done = [hook(quiet, repo, tasks[n % len(tasks)], f"moved-{n}") for n in range(runs)]
        print(f"[{src}] after a new commit ({load_line()}):")
        print(summary("  hook, new session, last snapshot", [r.wall for r in done], [r.cpu for r in done])
              + f" | printed {sum(bool(r.out.strip()) for r in done)}/{len(done)}")
        t0 = time.perf_counter()
        build = timed([sys.executable, "-m", "habitus.recall.prebuild", str(repo)], env=env)
        print(f"  rebuild outside the hook (facts + HEAD's snapshot): {time.perf_counter() - t0:.1f} s wall, "
              f"{build.cpu / 1000:.1f} s CPU")


if __name__ == "__main__":
    main()
