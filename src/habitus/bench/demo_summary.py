"""The first screen of the demo report: what was learned, what each new task was handed, the rules, the verdict.

`summary_section(facts)` builds it from the demo's facts alone (the same figures as `--json`), so
the page and the JSON cannot disagree. Texts are shortened at a word boundary, never mid-word.
"""

from __future__ import annotations

from typing import Any

from habitus.bench.report_html import Section, Table, shorten

AGENT_NAMES = {"claude-code": "Claude Code", "codex": "Codex"}


def sessions_phrase(facts: dict[str, Any]) -> str:
    """In words: "13 agent sessions (10 Claude Code, 3 Codex; 14 transcripts, as one session ran a subagent)"."""
    agents = facts.get("agents") or {}
    by_agent = ", ".join(f"{n} {AGENT_NAMES.get(a, a)}" for a, n in sorted(agents.items(), key=lambda kv: -kv[1]))
    traces = (facts.get("ingest") or {}).get("traces") or 0
    extra = traces - facts["sessions"]
    read = f"{traces} transcripts, as {'one session' if extra == 1 else f'{extra} sessions'} ran a subagent"
    inner = "; ".join(p for p in (by_agent, read if extra > 0 else "") if p)
    return f"{facts['sessions']} agent sessions" + (f" ({inner})" if inner else "")


def learned_line(facts: dict[str, Any]) -> str:
    names = facts.get("workflows") or []
    what = ", ".join(f"**{n}**" for n in names) if names else "no workflow"
    return (f"**Learned.** From {sessions_phrase(facts)} on a generated sample repository, habitus learned "
            f"{len(names)} workflow{'s' if len(names) != 1 else ''} without a model: {what}.")


def handed_rows(facts: dict[str, Any]) -> list[list[str]]:
    """One row per new task: the task, what it was handed, what it needed, and whether that was right."""
    rows = []
    for r in facts.get("recall") or []:
        handed = ", ".join(r.get("handed_names") or []) or "no workflow"
        if r.get("moved"):
            handed += f" ({r['moved']} step shown at its new path)"
        expected = r.get("expected") or "no workflow"
        rows.append([shorten(r["task"], 72), handed, expected, "yes" if r.get("right") else "no"])
    return rows


def summary_section(facts: dict[str, Any]) -> Section:
    """The summary a user reads first (Markdown text and one table)."""
    recall = facts.get("recall") or []
    right = sum(1 for r in recall if r.get("right"))
    rules = (facts.get("promote") or {}).get("rules") or []
    verdict = (facts.get("replay") or {}).get("verdict")
    parts = [learned_line(facts),
             f"**New tasks.** Asked about {len(recall)} new tasks, it handed the right workflow (or rightly none) to "
             f"{right} of them:"]
    after = []
    if rules:
        after.append(f"**Rules block.** {len(rules)} rule{'s' if len(rules) != 1 else ''} backed by repeated "
                     "evidence went into the sample AGENTS.md, between habitus' markers:")
        after.append("\n".join(f"- {shorten(rule, 160)}" for rule in rules))
    if verdict:
        after.append(f"**Replay verdict** (a second generated repository, {facts['replay']['history']} past "
                     f"sessions learned, {facts['replay']['tasks']} later tasks replayed): {verdict}")
    after.append("Below: [the hand-overs in full](#handovers) and [the replay](#replay). Research parts (context "
                 "policies, an expense benchmark, the recall benchmark, skill refinement): [their own page]"
                 "(research.html).")
    return Section("Summary", text="\n\n".join(parts), anchor="summary",
                   tables=[Table(["new task", "handed", "it needed", "right?"], handed_rows(facts), markdown=True)],
                   after="\n\n".join(after))
