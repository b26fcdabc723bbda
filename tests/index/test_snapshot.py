"""A commit's code index on disk (`habitus.index.snapshot`) answers every lookup exactly as the index in memory.

Real git repos; names chosen to hit every rule of `habitus.recall.where`: case variants of one path, one base
name in several folders, stems with dots, a symbol defined in many files, terms shared by most files.
"""

from __future__ import annotations

import random
import subprocess
import threading
from pathlib import Path

import pytest

from habitus.index.code import CodeIndex, code_index
from habitus.index.snapshot import CodeSnapshot, SnapshotError, open_snapshot, snapshot_name, write_snapshot
from habitus.recall.where import bm25_normalised

FILES = {
    "README.md": "# Demo\n",
    "readme.md": "# lower-case twin\n",
    "docs/Readme.MD": "# third spelling\n",
    "src/app/main.py": "def main():\n    pass\nclass Runner:\n    pass\n",
    "src/cli/main.py": "def main():\n    pass\ndef parse_args():\n    pass\n",
    "src/cli/parser.test.ts": "export function parseArgs() {}\nexport const MAX_ARGS = 3;\n",
    "src/cli/parser.ts": "export function parseArgs() {}\nexport class ArgParser {}\n",
    "src/export/palette_export.py": "class PaletteExporter:\n    pass\nLABEL = 'Export palette'\n",
    "src/export/grid.py": "class GridExporter:\n    pass\n",
    "lib/util/strings.go": "package util\nfunc Slugify(s string) string { return s }\n",
    "lib/util/strings_test.go": "package util\nfunc TestSlugify(t *T) {}\n",
    "assets/logo.png": "\x89PNG not text",
}


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@example.com", "-c", "user.name=T",
                           "-c", "commit.gpgsign=false", *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def make_repo(root: Path, files: dict[str, str]) -> tuple[Path, str]:
    repo = root / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "core.ignorecase", "false")
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "files")
    return repo, _git(repo, "rev-parse", "HEAD")


@pytest.fixture
def built(tmp_path: Path) -> tuple[CodeIndex, CodeSnapshot]:
    repo, head = make_repo(tmp_path, FILES)
    code = code_index(repo, head)
    assert code is not None
    path = tmp_path / snapshot_name(head)
    assert write_snapshot(code, path)
    snap = CodeSnapshot(path, head)
    yield code, snap
    snap.close()


LOOKUPS = [
    ("path_by_lower", ("readme.md",)), ("path_by_lower", ("docs/readme.md",)), ("path_by_lower", ("nope.py",)),
    ("lower_with_suffix", ("/main.py", 2)), ("lower_with_suffix", ("/parser.ts", 2)),
    ("lower_with_suffix", ("/readme.md", 2)), ("lower_with_suffix", ("/strings.go", 1)),
    ("with_name", ("main.py", 2)), ("with_name", ("readme.md", 5)), ("with_name", ("logo.png", 2)),
    ("with_stem", ("parser", 2)), ("with_stem", ("parser", 5)), ("with_stem", ("readme", 5)),
    ("with_stem", ("strings_test", 2)), ("has", ("src/cli/main.py",)), ("has", ("src/cli",)),
]


@pytest.mark.parametrize(("method", "args"), LOOKUPS, ids=[f"{m}{a}" for m, a in LOOKUPS])
def test_every_lookup_answers_as_the_index_in_memory(built, method, args) -> None:
    code, snap = built
    own, theirs = (snap, code) if method == "has" else (snap.names(), code.names())
    assert getattr(own, method)(*args) == getattr(theirs, method)(*args)


def test_symbols_and_membership_answer_as_the_index_in_memory(built) -> None:
    code, snap = built
    names = {"main", "parseArgs", "Runner", "PaletteExporter", "Slugify", "MAX_ARGS", "missing", "LABEL"}
    for limit in (1, 2, 3):
        assert snap.definers(names, limit) == code.definers(names, limit)
    paths = ["src/cli/main.py", "README.md", "gone.py", "assets/logo.png"]
    assert snap.existing(paths) == code.existing(paths) == {"src/cli/main.py", "README.md", "assets/logo.png"}


def _expected(query: list[str], docs: dict[str, dict[str, int]], keep: int, also: set[str]) -> dict[str, float]:
    full = bm25_normalised(query, docs)
    best = sorted(full.items(), key=lambda kv: (-kv[1], kv[0]))[:keep]
    return {p: s for p, s in full.items() if p in dict(best) or p in also}


def test_bm25_scores_are_the_same_floats_as_over_the_documents(built) -> None:
    code, snap = built
    docs = code.term_docs()
    for query, also in ((["main", "parser", "arg"], set()), (["export", "palett", "grid"], {"src/cli/main.py"}),
                        (["src", "cli"], {"README.md"}), (["nothing", "here"], set())):
        assert snap.top(query, 4, also) == _expected(query, docs, 4, also), query


def test_bm25_prunes_common_terms_only_where_no_file_can_reach_the_best(tmp_path: Path, monkeypatch) -> None:
    # many files share the common words; a few hold the rare ones; ties among equal files break by path
    rng = random.Random(5)
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa"]
    files = {}
    for i in range(160):
        chosen = rng.sample(words, rng.randint(1, 4))
        body = "".join(f"def {w}_{rng.randint(0, 3)}():\n    pass\n" for w in chosen)
        files[f"pkg/{'common' if i % 3 else 'shared'}/mod_{i:03d}.py"] = body
    repo, head = make_repo(tmp_path, files)
    code = code_index(repo, head)
    assert code is not None
    path = tmp_path / snapshot_name(head)
    assert write_snapshot(code, path)
    docs = code.term_docs()
    import habitus.index.snapshot as snapshot

    for common_df in (1_000_000, 40, 5, 1):  # nothing common … every term common
        monkeypatch.setattr(snapshot, "COMMON_DF", common_df)
        snap = CodeSnapshot(path, head)
        for _ in range(150):
            query = rng.sample([*words, "pkg", "common", "shared", "mod", "absent"], rng.randint(1, 5))
            also = set(rng.sample(sorted(code.files), 3))
            for keep in (1, 4):
                assert snap.top(query, keep, also) == _expected(query, docs, keep, also), (common_df, query)
        snap.close()


def test_a_damaged_or_foreign_file_is_no_snapshot(tmp_path: Path, built) -> None:
    code, _ = built
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    assert open_snapshot(junk) is None
    assert open_snapshot(tmp_path / "missing.sqlite") is None
    good = tmp_path / "good.sqlite"
    assert write_snapshot(code, good)
    assert open_snapshot(good, "0" * 40) is None  # another commit's
    data = good.read_bytes()
    truncated = tmp_path / "truncated.sqlite"
    truncated.write_bytes(data[: len(data) // 3])
    snap = open_snapshot(truncated)
    if snap is not None:  # the header survived: the first query that reaches a lost page says so
        with pytest.raises(SnapshotError):
            for query in (["main"], ["export"], ["src", "cli", "parser", "util", "string"]):
                snap.top(query, 4)
            snap.definers({"main", "Slugify"}, 3)
            snap.with_stem("strings", 2)


def test_concurrent_writers_leave_one_whole_snapshot(tmp_path: Path, built) -> None:
    code, _ = built
    path = tmp_path / "shared" / snapshot_name(code.commit)
    results: list[bool] = []
    threads = [threading.Thread(target=lambda: results.append(write_snapshot(code, path))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(results) and len(results) == 6
    snap = CodeSnapshot(path, code.commit)
    assert snap.names().with_name("main.py", 5) == code.names().with_name("main.py", 5)
    assert list(path.parent.iterdir()) == [path]  # no temporary file left behind


def test_a_file_ahead_only_by_its_common_terms_is_still_scored(tmp_path: Path, monkeypatch) -> None:
    # `zork` is rare (2 files), `quux` common (5 files, above COMMON_DF = 3): A leads on `zork` alone, B holds less
    # `zork` but adds `quux` and is the best file; folders `x`/`y` and stop words give the paths no terms
    files: dict[str, tuple[str, ...] | None] = {"x/of.py": ("zork",), "x/to.py": ("zork", "quux", "quux")}
    files |= {f"x/{w}.py": ("quux",) for w in ("in", "on", "at", "by")}
    files |= {f"y/{w}.py": ("blip",) for w in ("in", "on", "at", "by", "an", "is", "of", "to", "as", "be")}
    code = CodeIndex(commit="c" * 40, files=files)
    docs = code.term_docs()
    assert docs["x/to.py"] == {"zork": 1, "quux": 2} and docs["y/of.py"] == {"blip": 1}
    full = bm25_normalised(["zork", "quux"], docs)
    assert max(full, key=full.__getitem__) == "x/to.py"
    assert docs["x/of.py"]["zork"] and full["x/to.py"] > full["x/of.py"]
    import habitus.index.snapshot as snapshot

    monkeypatch.setattr(snapshot, "COMMON_DF", 3)
    path = tmp_path / snapshot_name(code.commit)
    assert write_snapshot(code, path)
    snap = CodeSnapshot(path, code.commit)
    assert snap.top(["zork", "quux"], 1) == _expected(["zork", "quux"], docs, 1, set()) == {"x/to.py": full["x/to.py"]}
    snap.close()
