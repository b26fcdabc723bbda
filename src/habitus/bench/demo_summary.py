"""The first screen of the demo report: what was learned, what each new task was handed, the rules, the verdict.

`summary_section(facts)` builds it from the demo's facts alone (the same figures as `--json`), so
the page and the JSON cannot disagree. Texts are shortened at a word boundary, never mid-word.
"""

from __future__ import annotations

from typing import Any

from habitus.bench.report_html import Section, Table, shorten

AGENT_NAMES = {"claude-code": "Claude Code", "codex": "Codex"}


def sessions_phrase(facts: dict[str, Any]) -> str:
    """In words: "13 agent sessions (10 Claude Code, 3 Codex)"."""
    agents = facts.get("agents") or {}
    by_agent = ", ".join(f"{n} {AGENT_NAMES.get(a, a)}" for a, n in sorted(agents.items(), key=lambda kv: -kv[1]))
    return f"{facts['sessions']} agent sessions" + (f" ({by_agent})" if by_agent else "")


KIND_WORDS = {"shortcut": "added a keyboard shortcut", "endpoint": "added an API endpoint",
              "config": "added a config option", "inspect": "only asked a question"}


def and_join(parts: list[str]) -> str:
    """"a, b and c"."""
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else "".join(parts)


def kinds_phrase(kinds: dict[str, int]) -> str:
    """"4 added a config option, 4 added an API endpoint, … and 1 only asked a question"."""
    ordered = sorted(kinds.items(), key=lambda kv: (kv[0] == "inspect", kv[0]))  # the question last
    return and_join([f"{n} {KIND_WORDS.get(k, k)}" for k, n in ordered])


def learned_line(facts: dict[str, Any]) -> str:
    names = facts.get("workflows") or []
    runs = facts.get("workflow_sessions") or {}
    counts = {runs.get(n) for n in names}
    if len(counts) == 1 and None not in counts:  # the same number behind each: say it once
        what = and_join([f"**{n}**" for n in names]) + f" ({counts.pop()} sessions each)"
    else:
        what = and_join([f"**{n}**" + (f" ({runs[n]} sessions)" if runs.get(n) else "") for n in names])
    kinds = kinds_phrase(facts.get("session_kinds") or {})
    plural = "s" if len(names) != 1 else ""
    return (f"**Learned.** From {sessions_phrase(facts)} on a generated sample repository"
            + (f" ({kinds})" if kinds else "") + f", habitus learned {len(names)} workflow{plural} without a model: "
            f"{what or 'none'}.")


def handed_rows(facts: dict[str, Any]) -> list[list[str]]:
    """One row per new task: the task, what it was handed, what it needed, and whether that was right."""
    rows = []
    for r in facts.get("recall") or []:
        handed = ", ".join(r.get("handed_names") or []) or "no workflow"
        if r.get("moved"):
            handed += " (moved file found)"
        expected = r.get("expected") or "no workflow"
        rows.append([shorten(r["task"], 64), handed, expected, "yes" if r.get("right") else "no"])
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
