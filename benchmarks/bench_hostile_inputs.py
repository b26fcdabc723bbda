"""Benchmark: hostile inputs stay cheap (issue 12, finding 15).

Reports, on generated (synthetic) inputs in a fresh store and git repo:
- `promote` wall time with one oversized note already in the store (20 MB by default; written
  around the note bound, as a store from before the bound could hold it), and `wrap_rule` on a
  2 MB single token;
- `workflows import` of the ~400-byte YAML alias bomb: wall time to refuse it and the process's peak
  RSS growth while doing so.

    .venv/bin/python benchmarks/bench_hostile_inputs.py [--note-mb 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _repo(base: Path) -> Path:
    repo = base / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.com"}
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)
    return repo


def _bomb(levels: int = 9) -> str:
    names = "abcdefghijklmnop"[:levels]
    lines = ["id: bomb", "name: bomb", 'x-a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"x-{n}: &{n} [{','.join(['*' + p] * 9)}]" for p, n in zip(names, names[1:], strict=False)]
    return "\n".join(lines) + "\n"


def run(note_mb: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HABITUS_HOME"] = str(Path(tmp) / "home")
        from habitus.capture.subject import repo_subject
        from habitus.deliver.promote import propose, wrap_rule
        from habitus.learn.files import WorkflowFileError, import_file
        from habitus.store.notes import add_note
        from habitus.store.sqlite import connect

        repo = _repo(Path(tmp))
        conn = connect()
        note = add_note(conn, "placeholder", kind="gotcha", subject=repo_subject(repo), source="agent")
        conn.execute("UPDATE notes SET text = ? WHERE id = ?", ("Beware the cache. " * (note_mb * 58_255),
                                                                 note.id))
        start = time.perf_counter()
        propose(conn, repo / "AGENTS.md")
        promote_s = time.perf_counter() - start
        start = time.perf_counter()
        wrap_rule("y" * 2_000_000)
        wrap_s = time.perf_counter() - start
        bomb = Path(tmp) / "bomb.yaml"
        bomb.write_text(_bomb())
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.perf_counter()
        try:
            import_file(conn, bomb, subject=repo_subject(repo))
            refused = False
        except WorkflowFileError:
            refused = True
        bomb_s = time.perf_counter() - start
        rss_growth_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024
        conn.close()
    return {"note_mb": note_mb, "promote_s": round(promote_s, 3), "wrap_rule_2mb_token_s": round(wrap_s, 4),
            "bomb_bytes": len(_bomb()), "bomb_refused": refused, "bomb_s": round(bomb_s, 3),
            "bomb_peak_rss_growth_mb": round(rss_growth_mb, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--note-mb", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.note_mb)
    if args.json:
        print(json.dumps(result))
        return
    for key, value in result.items():
        print(f"{key:>26}: {value}")


if __name__ == "__main__":
    sys.exit(main())
