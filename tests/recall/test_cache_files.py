"""The recall cache's two files: cue views (every recall) and ranking tokens (fallback only)."""

from __future__ import annotations

import json
from pathlib import Path

from backends import connect
from habitus.capture.subject import repo_subject
from habitus.recall import recall
from habitus.recall.cache import RecallIndex, _tokens_path, cache_path

from .conftest import shortcut_workflow, store_workflows
from .test_cache import MISS, _age_all
from .test_cues import DB

HIT = "Add a keyboard shortcut for export"


def test_a_cue_hit_writes_the_cue_file_and_no_tokens(shortcut_repo: Path) -> None:
    store_workflows(shortcut_repo, [shortcut_workflow(None), DB])
    _age_all(shortcut_repo)
    path = cache_path(repo_subject(shortcut_repo), conn=connect())
    first = recall(HIT, cwd=shortcut_repo, log=False)
    assert path.exists() and not _tokens_path(path).exists()
    assert RecallIndex(connect(), repo_subject(shortcut_repo)).from_cache
    assert recall(HIT, cwd=shortcut_repo, log=False).to_dict() == first.to_dict()


def test_the_fallback_writes_then_reads_the_tokens_file(shortcut_repo: Path) -> None:
    store_workflows(shortcut_repo, [shortcut_workflow(None), DB])
    _age_all(shortcut_repo)
    path = cache_path(repo_subject(shortcut_repo), conn=connect())
    first = recall(MISS, cwd=shortcut_repo, log=False)
    tokens = json.loads(_tokens_path(path).read_text(encoding="utf-8"))
    assert tokens["ids"] == sorted(tokens["ids"]) and len(tokens["tokens"]) == 2
    index = RecallIndex(connect(), repo_subject(shortcut_repo))
    assert [e.tokens for e in index.with_tokens()] == [t.split() for t in tokens["tokens"]]
    assert recall(MISS, cwd=shortcut_repo, log=False).to_dict() == first.to_dict()


def test_a_damaged_or_foreign_tokens_file_is_ignored(shortcut_repo: Path) -> None:
    store_workflows(shortcut_repo, [shortcut_workflow(None), DB])
    _age_all(shortcut_repo)
    path = cache_path(repo_subject(shortcut_repo), conn=connect())
    expected = recall(MISS, cwd=shortcut_repo, log=False).workflow_ids
    for damage in ("{not json", json.dumps({"fingerprint": [], "ids": [], "tokens": []}),
                   json.dumps({**json.loads(_tokens_path(path).read_text(encoding="utf-8")), "tokens": [1, 2]})):
        _tokens_path(path).write_text(damage, encoding="utf-8")
        assert recall(MISS, cwd=shortcut_repo, log=False).workflow_ids == expected == ["db-timeout"]
