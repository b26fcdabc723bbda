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
BAG_RESAMPLES = 40  # bootstrap resamples of the history's tasks the thresholds are chosen on
BAG_SEED = 13
F1_TIE_BREAK = 1e-3  # F1 (a mean, ≤ 1 per task) only orders pairs that help as many tasks
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


def _task_outcomes(chances: list[tuple[int, float, bool]]) -> dict[int, list[tuple[float, bool]]]:
    by_task: dict[int, list[tuple[float, bool]]] = {}
    for task, p, ok in chances:
        by_task.setdefault(task, []).append((p, ok))
    for items in by_task.values():
        items.sort(key=lambda pr: -pr[0])
    return by_task


def evaluate_thresholds(chances: list[tuple[int, float, bool]], min_chance: float, handover_chance: float,
                        max_files: int = MAX_FILES, sizes: dict[int, int] | None = None,
                        _by_task: dict[int, list[tuple[float, bool]]] | None = None) -> dict[str, float]:
    """What recall would have handed the history's tasks under these thresholds: tasks, hand-overs, tasks with a
    right file, files handed and right, the net score (right − wrong files − hand-overs with no right file) and,
    given each task's number of changed files (`sizes`), the mean per-task file F1 (0 for a task handed nothing)
    with its standard error."""
    by_task = _by_task if _by_task is not None else _task_outcomes(chances)
    handovers = helped = handed = right = 0
    f1s = []
    for task, items in by_task.items():
        if not items or items[0][0] < handover_chance:
            f1s.append(0.0)
            continue
        files = [ok for p, ok in items if p >= min_chance][:max_files] or [items[0][1]]
        handovers += 1
        handed += len(files)
        hits = sum(files)
        right += hits
        helped += hits > 0
        precision, recall = hits / len(files), hits / max(sizes.get(task, hits) if sizes else hits, hits, 1)
        f1s.append(2 * precision * recall / (precision + recall) if hits else 0.0)
    n = len(f1s)
    mean = sum(f1s) / n if n else 0.0
    spread = (sum((x - mean) ** 2 for x in f1s) / (n - 1)) ** 0.5 if n > 1 else 0.0
    return {"tasks": len(by_task), "handovers": handovers, "helped": helped, "handed": handed, "right": right,
            "precision": right / handed if handed else 0.0,
            "false_rate": (handovers - helped) / handovers if handovers else 0.0,
            "net": right - (handed - right) - (handovers - helped),
            "f1": round(mean, 6) if sizes is not None else 0.0,
            "f1_se": round(spread / n ** 0.5, 6) if sizes is not None and n else 0.0}


def _outcome_matrix(by_task: dict[int, list[tuple[float, bool]]], pairs: list[tuple[float, float]],
                    sizes: dict[int, int] | None, max_files: int = MAX_FILES) -> Any:
    """tasks × pairs × (handed over, files handed, right files, helped, F1) of recall under each threshold pair."""
    import numpy as np

    out = np.zeros((len(by_task), len(pairs), 5))
    for t, (task, items) in enumerate(by_task.items()):
        for k, (min_chance, handover) in enumerate(pairs):
            if not items or items[0][0] < handover:
                continue
            files = [ok for p, ok in items if p >= min_chance][:max_files] or [items[0][1]]
            hits = sum(files)
            recall = hits / max(sizes.get(task, hits) if sizes else hits, hits, 1)
            f1 = 2 * (hits / len(files)) * recall / (hits / len(files) + recall) if hits else 0.0
            out[t, k] = (1, len(files), hits, hits > 0, f1)
    return out


def _best_pairs(totals: Any) -> Any:
    """Per row of summed outcomes (resamples × pairs × 5): the index of the qualifying pair that helps the most
    tasks (at least one right file), ties broken by mean F1 (-1 when none qualifies). Qualifying: within the
    precision and false-hand-over limits, net score > 0. Helping a task is what a hand-over is for; the limits
    keep it honest (ranking by F1 alone chose stricter pairs that abstained on tasks the limits allowed)."""
    import numpy as np

    handovers, handed, right, helped, f1 = (totals[..., i] for i in range(5))
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(handed > 0, right / np.maximum(handed, 1), 0.0)
        false_rate = np.where(handovers > 0, (handovers - helped) / np.maximum(handovers, 1), 0.0)
    net = right - (handed - right) - (handovers - helped)
    ok = (handovers > 0) & (precision >= PRECISION_FLOOR) & (false_rate <= FALSE_HANDOVER_LIMIT) & (net > 0)
    score = np.where(ok, helped + F1_TIE_BREAK * f1, -1.0)
    best = score.argmax(axis=-1)
    return np.where(score.max(axis=-1) >= 0, best, -1)


def choose_thresholds(chances: list[tuple[int, float, bool]], sizes: dict[int, int] | None = None,
                      resamples: int = BAG_RESAMPLES) -> tuple[dict[str, float], dict[str, float] | None]:
    """The (min_chance, handover_chance) pair for recall, chosen on the history's out-of-sample chances.

    Qualifying pairs stay within the precision and false-hand-over limits and beat handing nothing by the net
    score; of those, the one that helps the most past tasks, then the best mean per-task file F1. Which pair
    tops that on one history is noise that would swing with a few sessions: the pair is chosen on `resamples`
    bootstrap resamples of the history's tasks (fixed seed) and each threshold is the median of those choices
    ("bagging"). The default when no pair qualifies; the best qualifying pair when the median pair does not."""
    import numpy as np

    by_task = _task_outcomes(chances)
    pairs = [(m, h) for h in GRID for m in GRID if m <= h]
    if not by_task:
        return dict(DEFAULT_THRESHOLDS), None
    outcomes = _outcome_matrix(by_task, pairs, sizes)
    whole = int(_best_pairs(outcomes.sum(axis=0)[None])[0])
    if whole < 0:
        return dict(DEFAULT_THRESHOLDS), None
    rng = np.random.default_rng(BAG_SEED)
    counts = rng.multinomial(len(by_task), [1 / len(by_task)] * len(by_task), size=resamples)
    picks = [int(k) for k in _best_pairs(np.einsum("bt,tpf->bpf", counts, outcomes)) if k >= 0]
    chosen = whole
    if picks:
        min_chance = float(np.median([pairs[k][0] for k in picks]))
        handover = float(np.median([pairs[k][1] for k in picks]))
        median = min(range(len(pairs)), key=lambda k: (abs(pairs[k][0] - min_chance) + abs(pairs[k][1] - handover),
                                                       -pairs[k][1]))
        if int(_best_pairs(outcomes.sum(axis=0)[None, [median]])[0]) == 0:
            chosen = median
    min_chance, handover = pairs[chosen]
    figures = evaluate_thresholds(chances, min_chance, handover, sizes=sizes, _by_task=by_task)
    figures["resamples"] = len(picks)
    return {"min_chance": min_chance, "handover_chance": handover}, figures


def calibrate(repomap: RepoMap, records: list[Record], *, code: CodeIndex | None, repo: Path | None) -> None:
    """Fit `repomap.model` and choose `repomap.thresholds` from the history (see the module docstring)."""
    rows = history_rows(records, repomap.subject, code, repo)
    tasks = len({r.task for r in rows})
    positives = sum(r.label for r in rows)
    info: dict[str, Any] = {"rows": len(rows), "tasks": tasks, "positives": positives,
                            "precision_floor": PRECISION_FLOOR, "false_handover_limit": FALSE_HANDOVER_LIMIT}
    if tasks >= MIN_TASKS and positives >= MIN_POSITIVES:
        repomap.model = fit_logistic(rows)
        sizes = {i: len(task_files(rec)) for i, rec in enumerate(records)}
        thresholds, figures = choose_thresholds(out_of_sample_chances(rows), sizes)
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
