"""What a team shares: allowlisted repos only, redacted on this machine, each record with a pseudonymous producer;
personal notes stay local and are never promoted; a promoted rule counts the members behind it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from backends import connect, open_store
from habitus.core import Step, StepKind, Trace
from habitus.deliver.candidates import collect
from habitus.deliver.promote import propose
from habitus.store.notes import add_note, list_notes
from habitus.store.share import is_shared, member_id
from habitus.store.sqlite_store import SQLiteStore

ROOT_A, ROOT_B = "a" * 40, "b" * 40
SECRET = "ghp_" + "Zq7Xw2Rt5Yu8Io1Pa4Sd6Fg9Hj3Kl0MnTr0u"  # random-looking: an alphabet run is gitleaks' stopword


def _trace(trace_id: str, subject: str | None, text: str = "fix the flaky test") -> Trace:
    return Trace(id=trace_id, source_format="claude", agent="claude-code", session_id=trace_id,
                 cwd="/work/repo", subject=subject, started="2026-02-01T00:00:00Z", task=text,
                 steps=[Step(kind=StepKind.USER, text=text)])


@pytest.mark.parametrize("entry, subject, shared", [
    ("*", f"{ROOT_A}@github.com/acme/app", True),
    (ROOT_A[:7], f"{ROOT_A}@github.com/acme/app", True),
    ("github.com/acme/app", f"{ROOT_A}@git@github.com:acme/app.git", True),
    ("https://github.com/acme/app.git", f"{ROOT_A}@github.com/acme/app", True),
    ("github.com/acme/app", f"{ROOT_B}@github.com/acme/other", False),
    (ROOT_A[:7], ROOT_B, False),
    ("", ROOT_A, False),  # an empty allowlist shares nothing
    (ROOT_A[:7], None, False),  # a trace of no repo is shared only under `*`
    ("*", None, True),
])
def test_allowlist_matches_root_commits_and_remotes(entry: str, subject: str | None, shared: bool) -> None:
    assert is_shared(subject, [entry] if entry else []) is shared


def test_only_allowlisted_repos_reach_a_shared_store(store_backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HABITUS_SHARE_REPOS", ROOT_A[:12])
    with open_store() as store:
        store.put_traces([_trace("ta", ROOT_A), _trace("tb", ROOT_B), _trace("tn", None)])
        stored = sorted(s.id for s in store.list_traces())
    with SQLiteStore() as own:
        local = sorted(s.id for s in own.list_traces())
    if store_backend == "postgres":
        assert stored == ["ta"]
        assert local == ["tb", "tn"]  # kept on this machine, nothing lost
    else:  # the embedded store is the developer's own: everything is kept there
        assert stored == local == ["ta", "tb", "tn"]


def test_a_shared_store_receives_traces_redacted(store_backend: str) -> None:
    if store_backend != "postgres":
        pytest.skip("the embedded store takes traces as capture redacted them; a shared store redacts again itself")
    with open_store() as store:
        store.put_trace(_trace("ts", ROOT_A, text=f"use token {SECRET} to push"))
        stored = store.get_trace("ts")
        raw = store.conn.execute("SELECT count(*) FROM steps WHERE text LIKE ?", (f"%{SECRET}%",)).fetchone()[0]
    assert stored is not None and SECRET not in stored.task and "[REDACTED:github_" in stored.steps[0].text
    assert raw == 0


def test_every_trace_keeps_its_producer_and_list_mine_shows_mine(monkeypatch: pytest.MonkeyPatch) -> None:
    from habitus.cli.main import app

    for member, trace_id in (("m-alice", "t-alice"), ("m-bob", "t-bob")):
        monkeypatch.setenv("HABITUS_MEMBER", member)
        with open_store() as store:
            store.put_trace(_trace(trace_id, ROOT_A))
    with open_store() as store:
        assert {s.id: s.producer for s in store.list_traces()} == {"t-alice": "m-alice", "t-bob": "m-bob"}
    done = CliRunner().invoke(app, ["traces", "list", "--mine", "--json"])  # still m-bob here
    assert done.exit_code == 0, done.output
    assert [row["id"] for row in json.loads(done.stdout)] == ["t-bob"]


def test_member_id_is_pseudonymous_and_stable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HABITUS_MEMBER", raising=False)
    first = member_id()
    assert first.startswith("m-") and len(first) == 14 and first == member_id()


def test_personal_notes_stay_local_and_are_never_promoted(store_backend: str, tmp_path: Path) -> None:
    subject = f"{ROOT_A}@github.com/acme/app"
    conn = connect()
    try:
        team = add_note(conn, "Run make migrate before pytest", kind="gotcha", subject=subject)
        mine = add_note(conn, "I prefer small commits here", kind="convention", subject=subject, layer="personal")
        cross = add_note(conn, "Never trust the staging data", kind="gotcha")  # global: personal by default
        assert (team.layer, mine.layer, cross.layer) == ("team", "personal", "personal")
        assert {n.id for n in list_notes(conn, subject=subject)} == {team.id, mine.id, cross.id}
        on_store = {r[0] for r in conn.execute("SELECT id FROM notes")}
        if store_backend == "postgres":  # personal notes never reach the team's server
            assert on_store == {team.id}
        candidates = {c.id for c in collect(conn, subject) if c.source == "note"}
        assert candidates == {f"note:{team.id}"}
    finally:
        conn.close()


def test_a_promoted_rule_counts_the_members_behind_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from deliver.conftest import make_repo
    from habitus.capture.ingest import ingest_paths
    from habitus.learn import learn
    from untrusted.conftest import session

    # three sessions, two members, each ingesting their own: `pytest -q` fails, `make migrate && pytest -q` passes,
    # so `habitus learn` finds the trap and the check (3 tasks in 3 sessions) that promote proposes as rules
    repo = make_repo(tmp_path)
    for i, member in enumerate(["m-alice", "m-bob", "m-alice"]):
        monkeypatch.setenv("HABITUS_MEMBER", member)
        folder = tmp_path / f"sessions-{i}"
        folder.mkdir()
        (folder / f"s{i}.jsonl").write_text("\n".join(session(f"sess-{i}", repo, 20 + i)) + "\n")
        with open_store() as store:
            assert ingest_paths([folder], store).traces == 1
    conn = connect()
    try:
        learn(conn, repo=repo)
        proposal = propose(conn, repo / "AGENTS.md")
    finally:
        conn.close()
    kinds = sorted(a.rule.evidence["situation"]["kind"] for a in proposal.additions)
    assert kinds == ["check", "trap"], proposal.to_dict()
    for addition in proposal.additions:
        evidence = addition.rule.evidence
        assert evidence["sessions"] == 3 and evidence["members"] == 2, evidence
        assert "m-alice" not in json.dumps(evidence) and "m-bob" not in json.dumps(evidence)  # a count, not who


def test_config_store_url_switches_every_command(store_backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from habitus.cli.main import app

    runner = CliRunner()
    url = os.environ.get("HABITUS_STORE_URL")
    monkeypatch.delenv("HABITUS_STORE_URL", raising=False)
    if url:  # the configured key, not the environment, now names the shared store
        assert runner.invoke(app, ["config", "set", "store.url", url]).exit_code == 0
    info = runner.invoke(app, ["store", "info", "--json"])
    assert info.exit_code == 0, info.output
    assert json.loads(info.stdout)["backend"] == store_backend
    shown = runner.invoke(app, ["config", "show", "--json"])
    assert "secret" not in shown.stdout and (url is None or url not in shown.stdout)  # the URL is masked
    bad = runner.invoke(app, ["config", "set", "store.url", "mysql://db/habitus"])
    assert bad.exit_code == 1 and "postgresql://" in bad.output
