"""Calibrating where-to-look on the repo's own history: the evidence model and the abstention threshold.

The history is replayed in date order ("prequential"): each task is shown to the map built from
the tasks before it only, every file some evidence points at becomes a row (its features from
`habitus.recall.where.candidates`, labelled by whether the task changed it), and then the task is
added to the map. A logistic model with an L2 penalty is fitted on those rows, so the weight of
each kind of evidence (a named path, a defined symbol, a quoted phrase, the map's and the code's
word scores, how often the file changes) is this repo's, not a constant. With fewer than
`MIN_TASKS` replayable tasks or `MIN_POSITIVES` right files the documented default model is kept.

The two thresholds recall applies are chosen on the same history, out of sample (each task's
chances come from a model fitted on the other half of the history, split by date): a hand-over is
made when the best file's chance reaches `handover_chance`, and it holds the files whose chance
reaches `min_chance` (at most `habitus.recall.where.MAX_FILES`). Of the pairs on a grid, the one
that helps the most past tasks (at least one right file) is kept, among those whose files were right
at least `PRECISION_FLOOR` of the time and whose hand-overs were all wrong at most
`FALSE_HANDOVER_LIMIT` of the time. The two limits are stated product targets with a margin (files
right ≥ 40%, false hand-overs ≤ 25%), not values fitted to any repo.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from habitus.core.record import Record
from habitus.learn.repomap import MapBuilder, is_change_task, task_files
from habitus.recall.where import DEFAULT_MODEL, FEATURES, MAX_FILES, candidates

if TYPE_CHECKING:
    from habitus.core.repomap import RepoMap
    from habitus.index.code import CodeIndex

PRECISION_FLOOR = 0.5  # files handed must have been right this often on the history (target 0.4, margin 0.1)
FALSE_HANDOVER_LIMIT = 0.2  # … and hand-overs with no right file this rare (target 0.25, margin 0.05)
GRID = tuple(round(0.05 * i, 2) for i in range(1, 19))  # chance thresholds tried: 0.05 … 0.90
DEFAULT_THRESHOLDS = {"min_chance": 0.4, "handover_chance": 0.5}  # with the default model
MIN_TASKS = 20  # replayable past tasks needed to fit the model …
MIN_POSITIVES = 10  # … and right files among their candidates
WARMUP_TASKS = 3  # the first tasks only build the map (there is nothing to ask yet)
L2 = 1.0
MAX_ROWS = 20_000  # the most recent rows are kept for fitting (bounds learning on long histories)


@dataclass
class Row:
    task: int
    file: str
    features: dict[str, float]
    label: bool


def history_rows(records: list[Record], subject: str | None, code: CodeIndex | None,
                 repo: Path | None) -> list[Row]:
    """The prequential rows of the history (see the module docstring)."""
    builder = MapBuilder(subject, code)
    rows: list[Row] = []
    if code is None:
        return rows
    docs = code.term_docs()
    for i, rec in enumerate(records):
        if is_change_task(rec) and builder.map.tasks >= WARMUP_TASKS:
            truth = set(task_files(rec))
            for c in candidates(rec.task, builder.map, code, repo, code_docs=docs):
                rows.append(Row(task=i, file=c.file, features=c.features, label=c.file in truth))
        builder.add(rec)
    return rows[-MAX_ROWS:]


def fit_logistic(rows: list[Row], l2: float = L2, iterations: int = 50) -> dict[str, float]:
    """Weights (with `bias`) of an L2-penalised logistic regression by Newton's method."""
    import numpy as np

    x = np.array([[1.0] + [r.features.get(f, 0.0) for f in FEATURES] for r in rows])
    y = np.array([1.0 if r.label else 0.0 for r in rows])
    w = np.zeros(x.shape[1])
    penalty = np.eye(x.shape[1]) * l2
    penalty[0, 0] = 0.0  # the bias is not penalised
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30, 30)))
        grad = x.T @ (p - y) + penalty @ w
        hess = (x.T * (p * (1 - p))) @ x + penalty + np.eye(x.shape[1]) * 1e-9
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-7:
            break
    return {"bias": float(w[0]), **{f: float(v) for f, v in zip(FEATURES, w[1:], strict=True)}}


def out_of_sample_chances(rows: list[Row]) -> list[tuple[int, float, bool]]:
    """(task, chance, right) per row, each chance from a model fitted on the other half of the history (by date)."""
    from habitus.recall.where import chance

    tasks = sorted({r.task for r in rows})
    if len(tasks) < 4:
        return []
    cut = tasks[len(tasks) // 2]
    first = [r for r in rows if r.task < cut]
    second = [r for r in rows if r.task >= cut]
    out = []
    for train, test in ((first, second), (second, first)):
        model = fit_logistic(train) if sum(r.label for r in train) >= 3 else dict(DEFAULT_MODEL)
        out += [(r.task, chance(r.features, model), r.label) for r in test]
    return out


def evaluate_thresholds(chances: list[tuple[int, float, bool]], min_chance: float, handover_chance: float,
                        max_files: int = MAX_FILES) -> dict[str, float]:
    """What recall would have handed the history's tasks under these thresholds: tasks, hand-overs, tasks with a
    right file, files handed and right."""
    by_task: dict[int, list[tuple[float, bool]]] = {}
    for task, p, ok in chances:
        by_task.setdefault(task, []).append((p, ok))
    handovers = helped = handed = right = 0
    for items in by_task.values():
        items.sort(key=lambda pr: -pr[0])
        if not items or items[0][0] < handover_chance:
            continue
        files = [ok for p, ok in items if p >= min_chance][:max_files] or [items[0][1]]
        handovers += 1
        handed += len(files)
        right += sum(files)
        helped += any(files)
    return {"tasks": len(by_task), "handovers": handovers, "helped": helped, "handed": handed, "right": right,
            "precision": right / handed if handed else 0.0,
            "false_rate": (handovers - helped) / handovers if handovers else 0.0}


def choose_thresholds(chances: list[tuple[int, float, bool]]) -> tuple[dict[str, float], dict[str, float] | None]:
    """The (min_chance, handover_chance) pair that helped the most past tasks within the precision and
    false-hand-over limits (ties: fewer false hand-overs, then higher precision); the default when none qualifies."""
    best: tuple[tuple[float, ...], dict[str, float], dict[str, float]] | None = None
    for handover in GRID:
        for min_chance in GRID:
            if min_chance > handover:
                continue
            figures = evaluate_thresholds(chances, min_chance, handover)
            if not figures["handovers"] or figures["precision"] < PRECISION_FLOOR or \
                    figures["false_rate"] > FALSE_HANDOVER_LIMIT:
                continue
            key = (figures["helped"], -figures["false_rate"], figures["precision"], -handover)
            if best is None or key > best[0]:
                best = (key, {"min_chance": min_chance, "handover_chance": handover}, figures)
    if best is None:
        return dict(DEFAULT_THRESHOLDS), None
    return best[1], best[2]


def calibrate(repomap: RepoMap, records: list[Record], *, code: CodeIndex | None, repo: Path | None) -> None:
    """Fit `repomap.model` and choose `repomap.thresholds` from the history (see the module docstring)."""
    rows = history_rows(records, repomap.subject, code, repo)
    tasks = len({r.task for r in rows})
    positives = sum(r.label for r in rows)
    info: dict[str, Any] = {"rows": len(rows), "tasks": tasks, "positives": positives,
                            "precision_floor": PRECISION_FLOOR, "false_handover_limit": FALSE_HANDOVER_LIMIT}
    if tasks >= MIN_TASKS and positives >= MIN_POSITIVES:
        repomap.model = fit_logistic(rows)
        thresholds, figures = choose_thresholds(out_of_sample_chances(rows))
        info.update(model="fitted", thresholds="chosen on the history, out of sample" if figures else
                    "default: no threshold met the limits on the history", out_of_sample=figures)
    else:
        repomap.model = dict(DEFAULT_MODEL)
        thresholds = dict(DEFAULT_THRESHOLDS)
        info.update(model="default", thresholds="default",
                    reason=f"{tasks} replayable past tasks with {positives} right files "
                           f"(need {MIN_TASKS} and {MIN_POSITIVES})")
    repomap.thresholds = thresholds
    repomap.calibration = info


def explain(repomap: RepoMap) -> str:
    """One line on how the map's model and thresholds were chosen."""
    info = repomap.calibration
    if not info:
        return "where-to-look: not calibrated"
    head = (f"where-to-look model {info.get('model')} on {info.get('tasks')} past tasks "
            f"({info.get('rows')} candidate files, {info.get('positives')} right)")
    return (f"{head}; a hand-over when the best file's chance ≥ {repomap.thresholds.get('handover_chance')}, "
            f"holding files at chance ≥ {repomap.thresholds.get('min_chance')}")


__all__ = ["FALSE_HANDOVER_LIMIT", "PRECISION_FLOOR", "Row", "calibrate", "choose_thresholds", "evaluate_thresholds",
           "explain", "fit_logistic", "history_rows", "out_of_sample_chances"]
