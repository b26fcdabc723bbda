"""What `habitus learn` did, in words: traces and records as what they are, why a build was not used, what next.

`explain(report)` takes `LearnReport.to_dict()` and returns the lines the CLI prints (pure, so
each case is a table test). A *trace* is one stored session transcript; a *record* is one task
within it (a session may hold several); a *build* is the set of workflows made from the records,
which the replay gate keeps only when it serves the repo's past tasks at least as well as the memory
in use.
"""

from __future__ import annotations

from typing import Any


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def _replayed(verdict: dict[str, Any], lead: str, memory: str, negatives: str) -> str:
    """What the replay gate measured of a build: places found, and hand-overs to tasks that needed nothing."""
    c, m = verdict["candidate"], verdict["current"]
    said = (f"{lead}: replayed on {_plural(c['tasks'], 'past task')}, they pointed to "
            f"{c['found']} of the {c['edited']} places those tasks edited ({memory}: {m['found']})")
    if c["negatives"]:
        said += (f" and handed something to {c['false_retrievals']} of {c['negatives']} tasks that needed nothing "
                 f"({negatives}: {m['false_retrievals']})")
    return said


def _rejected(verdict: dict[str, Any], in_use: int) -> str:
    said = _replayed(verdict, "the new workflows were not used", "the memory in use", "in use")
    keeps = f"the {_plural(in_use, 'workflow')} in use stay" if in_use else "no workflow is in use"
    return f"{said}, so {keeps} (`habitus learn --show-rejected` lists the build, #{verdict.get('rejected_id')})"


def _accepted(verdict: dict[str, Any]) -> str:
    return _replayed(verdict, "these workflows are now in use", "the memory before", "before")


def _workflows(data: dict[str, Any]) -> list[str]:
    lines = []
    for wf in data["workflows"]:
        seed = " (single run)" if wf["single_run"] else ""
        lines.append(f"  workflow {wf['id']} {wf['name']}: {wf['steps']} steps, {len(wf['checks'])} checks, "
                     f"{wf['pitfalls']} pitfalls, {wf['runs']} runs{seed}; cues: {', '.join(wf['cues']) or '-'}")
    return lines


def explain(data: dict[str, Any]) -> list[str]:
    """The lines `habitus learn` prints for a finished run (`LearnReport.to_dict()`)."""
    from habitus.learn.replay import describe_map

    seen, new = data["traces_seen"], data.get("traces_new", data["records_new"])
    if not seen:
        return ["no traces in the store yet: ingest coding sessions first (`habitus ingest`), then learn again"]
    if not new and data.get("unchanged") and not data["workflows"] and not data.get("replay"):
        return [f"nothing new since the last learn: {_plural(seen, 'trace')} and "
                f"{_plural(data['records_total'], 'task record')} already learned, "
                f"{_plural(data.get('active_workflows', 0), 'workflow')} in use; memory left as it was "
                f"({data['seconds']:.1f} s)",
                "next: after new sessions, `habitus ingest` then `habitus learn`; `habitus learn --rebuild` builds "
                "again anyway"]
    lines = [f"read {_plural(new, 'new or changed trace')} of the {seen} in the store into "
             f"{_plural(data['records_new'], 'task record')} ({data['records_total']} in all) in "
             f"{data['seconds']:.1f} s"]
    if data.get("skipped_no_subject"):
        lines.append(f"  {_plural(data['skipped_no_subject'], 'trace')} ran outside a git repository: nothing to "
                     "learn per repository from them")
    lines += _workflows(data)
    note = data.get("annotation")
    if note:
        lines.append(f"  annotation: {note['calls']} model calls, {note['named']} names, {note['steps']} steps "
                     f"polished, {note['refused']} refused" + (f" ({note['skipped']})" if note["skipped"] else ""))
    lines += [f"  feedback: {fb['workflow']} {fb['verdict']}" for fb in data["feedback"]]
    for verdict in data.get("replay") or []:
        if not verdict.get("accepted"):
            lines.append("  " + _rejected(verdict, data.get("active_workflows", 0)))
        elif not verdict.get("workflows"):
            lines.append("  no workflow: no kind of task recurred in enough sessions to make one")
        elif not verdict.get("skipped"):
            lines.append("  " + _accepted(verdict))
    lines += [f"  {describe_map(summary)}" for summary in data.get("repo_maps") or []]
    if data.get("unchanged"):
        lines.append(f"  {_plural(len(data['unchanged']), 'repository', 'repositories')} with nothing new left as "
                     "they were")
    lines.append(_next(data))
    return lines


def _next(data: dict[str, Any]) -> str:
    maps = data.get("repo_maps") or []
    serves = data.get("active_workflows", 0) or any(m.get("accepted") for m in maps)
    if serves:
        return ("next: `habitus recall \"TASK\" --cwd REPO` shows what a task would be handed; `habitus bench replay "
                "--repo REPO` says whether to use it there; `habitus hooks install` hands it to your agent")
    return ("next: nothing is handed over yet for what was learned; more sessions of the repository help "
            "(`habitus ingest`, then `habitus learn`), and `habitus bench replay --repo REPO` shows where it stands")
