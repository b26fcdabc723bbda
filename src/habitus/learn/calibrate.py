"""Calibrating where-to-look on the repo's own history, around the cross-repository prior.

The history is replayed in date order ("prequential"): each task is shown to the map built from
the tasks before it only, every file some evidence points at becomes a row (its features from
`habitus.recall.where.candidates`, labelled by whether the task changed it), and then the task is
added to the map. A logistic model is fitted on those rows with an L2 penalty around the prior's
weights (`habitus.learn.prior`: what many repositories' histories say), so a repo with a short
history keeps close to the prior and one with a long history moves as far as its own evidence
carries. With fewer than `MIN_TASKS` replayable tasks or `MIN_POSITIVES` right files the prior's
model is used as it is.

The two thresholds recall applies (hand over when the best unnamed file's chance reaches
`handover_chance`, holding the files at `min_chance` or above; files the task names are always
handed, `habitus.recall.where.choose_files`) are the prior's: chosen across repositories by
`choose_thresholds`, never on one repo's few tasks, where they swung between 0.05 and 0.5 as
sessions were added. The repo's own history still judges the result: its out-of-sample figures
(each half of the history predicted by a model fitted on the other half, around the prior) under
those thresholds, on the later half of the history (`later_half`), go to the map's gate
(`habitus.learn.replay.map_verdict`); when they miss the product's targets the thresholds are raised
on the repo's own history until they meet them (`thresholds_for_repo`).

`choose_thresholds` picks, among the pairs whose files were right at least `PRECISION_FLOOR` of the
time and whose hand-overs were all wrong at most `FALSE_HANDOVER_LIMIT` of the time, the one that
helps the most tasks (F1 breaking ties), bagged over bootstrap resamples. The two limits are the
product targets (files right ≥ 40%, false hand-overs ≤ 25%) with a margin, not values fitted to any repo.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from habitus.core.record import Record
from habitus.learn.prior import WherePrior, shipped_prior
from habitus.learn.repomap import MapBuilder, is_change_task, task_files
from habitus.recall.where import FEATURES, MAX_FILES, candidates, choose_files, is_named

if TYPE_CHECKING:
    from habitus.core.repomap import RepoMap
    from habitus.index.code import CodeIndex

PRECISION_TARGET = 0.4  # the product's targets: files handed right at least this often …
FALSE_HANDOVER_TARGET = 0.25  # … and hand-overs with no right file at most this often
PRECISION_FLOOR = 0.5  # choosing the prior's thresholds: the targets with a margin (0.1 and 0.05)
FALSE_HANDOVER_LIMIT = 0.2
GRID = tuple(round(0.05 * i, 2) for i in range(1, 19))  # chance thresholds tried: 0.05 … 0.90
MIN_TASKS = 5  # replayable past tasks needed to move the model away from the prior …
MIN_POSITIVES = 3  # … and right files among their candidates
MIN_JUDGED = 10  # past tasks the repo's own figures are judged on, at least
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

    @property
    def named(self) -> bool:
        return is_named(self.features)


class Scored(NamedTuple):
    """One candidate file of one past task, as the threshold choice sees it."""

    task: int
    chance: float
    right: bool
    named: bool = False


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
            for c in candidates(rec.task, builder.map, code, repo, code_docs=docs, names=builder.names):
                rows.append(Row(task=i, file=c.file, features=c.features, label=c.file in truth))
        builder.add(rec)
    return rows[-MAX_ROWS:]


def fit_logistic(rows: list[Row], l2: float = L2, iterations: int = 50,
                 center: dict[str, float] | None = None) -> dict[str, float]:
    """Weights (with `bias`) of an L2-penalised logistic regression by Newton's method; the penalty pulls towards
    `center` (a prior's weights, bias included) when given, else towards 0 (bias free)."""
    import numpy as np

    x = np.array([[1.0] + [r.features.get(f, 0.0) for f in FEATURES] for r in rows])
    y = np.array([1.0 if r.label else 0.0 for r in rows])
    w0 = np.array([center.get("bias", 0.0)] + [center.get(f, 0.0) for f in FEATURES]) if center else \
        np.zeros(x.shape[1])
    w = w0.copy()
    penalty = np.eye(x.shape[1]) * l2
    if center is None:
        penalty[0, 0] = 0.0  # towards 0 the bias is not penalised
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30, 30)))
        grad = x.T @ (p - y) + penalty @ (w - w0)
        hess = (x.T * (p * (1 - p))) @ x + penalty + np.eye(x.shape[1]) * 1e-9
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-7:
            break
    return {"bias": float(w[0]), **{f: float(v) for f, v in zip(FEATURES, w[1:], strict=True)}}


def fit_around(rows: list[Row], prior: WherePrior) -> dict[str, float]:
    """The repo's model: fitted on its rows around the prior's weights, or the prior's when they are too few."""
    tasks = len({r.task for r in rows})
    if tasks < MIN_TASKS or sum(r.label for r in rows) < MIN_POSITIVES:
        return dict(prior.model)
    return fit_logistic(rows, l2=prior.strength, center=prior.model)


def score_rows(rows: list[Row], model: dict[str, float]) -> list[Scored]:
    from habitus.recall.where import chance

    return [Scored(r.task, chance(r.features, model), r.label, r.named) for r in rows]


def out_of_sample_chances(rows: list[Row], prior: WherePrior | None = None) -> list[Scored]:
    """Each row's chance from a model fitted (around the prior) on the other half of the history, by date."""
    prior = prior or shipped_prior()
    tasks = sorted({r.task for r in rows})
    if len(tasks) < 4:
        return []
    cut = tasks[len(tasks) // 2]
    first = [r for r in rows if r.task < cut]
    second = [r for r in rows if r.task >= cut]
    out: list[Scored] = []
    for train, test in ((first, second), (second, first)):
        out += score_rows(test, fit_around(train, prior))
    return out


def _task_outcomes(chances: list[Scored] | list[tuple]) -> dict[int, list[Scored]]:
    by_task: dict[int, list[Scored]] = {}
    for item in chances:
        scored = Scored(*item)
        by_task.setdefault(scored.task, []).append(scored)
    for items in by_task.values():
        items.sort(key=lambda s: -s.chance)
    return by_task


def _handed(items: list[Scored], min_chance: float, handover_chance: float, max_files: int) -> list[bool]:
    """Right or wrong, per file recall would hand this task (`habitus.recall.where.choose_files`)."""
    chosen = choose_files([s.chance for s in items], [s.named for s in items], min_chance=min_chance,
                          handover_chance=handover_chance, max_files=max_files)
    return [items[i].right for i in chosen]


def _task_f1(files: list[bool], size: int) -> float:
    hits = sum(files)
    if not hits:
        return 0.0
    precision, recall = hits / len(files), hits / max(size, hits, 1)
    return 2 * precision * recall / (precision + recall)


def evaluate_thresholds(chances: list[Scored] | list[tuple], min_chance: float, handover_chance: float,
                        max_files: int = MAX_FILES, sizes: dict[int, int] | None = None) -> dict[str, float]:
    """What recall would have handed the history's tasks under these thresholds: tasks, hand-overs, tasks with a
    right file, files handed and right, the net score (right − wrong files − hand-overs with no right file) and,
    given each task's number of changed files (`sizes`), the mean per-task file F1 (0 for a task handed nothing)
    with its standard error."""
    outcomes = _outcome_matrix(_task_outcomes(chances), [(min_chance, handover_chance)], sizes, max_files)[:, 0]
    handovers, handed, right, helped = (int(outcomes[:, i].sum()) for i in range(4))
    f1s = outcomes[:, 4]
    n = len(f1s)
    mean = float(f1s.mean()) if n else 0.0
    spread = float(f1s.std(ddof=1)) if n > 1 else 0.0
    return {"tasks": n, "handovers": handovers, "helped": helped, "handed": handed, "right": right,
            "precision": right / handed if handed else 0.0,
            "false_rate": (handovers - helped) / handovers if handovers else 0.0,
            "net": right - (handed - right) - (handovers - helped),
            "f1": round(mean, 6) if sizes is not None else 0.0,
            "f1_se": round(spread / n ** 0.5, 6) if sizes is not None and n else 0.0}


def _outcome_matrix(by_task: dict[int, list[Scored]], pairs: list[tuple[float, float]],
                    sizes: dict[int, int] | None, max_files: int = MAX_FILES) -> Any:
    """tasks × pairs × (handed over, files handed, right files, helped, F1) of recall under each threshold pair."""
    import numpy as np

    out = np.zeros((len(by_task), len(pairs), 5))
    for t, (task, items) in enumerate(by_task.items()):
        for k, (min_chance, handover) in enumerate(pairs):
            files = _handed(items, min_chance, handover, max_files)
            if files:
                hits = sum(files)
                size = sizes.get(task, hits) if sizes else hits
                out[t, k] = (1, len(files), hits, hits > 0, _task_f1(files, size))
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


def choose_thresholds(chances: list[Scored] | list[tuple], sizes: dict[int, int] | None = None,
                      resamples: int = BAG_RESAMPLES,
                      default: dict[str, float] | None = None) -> tuple[dict[str, float], dict[str, float] | None]:
    """The (min_chance, handover_chance) pair for recall, chosen on the history's out-of-sample chances.

    Qualifying pairs stay within the precision and false-hand-over limits and beat handing nothing by the net
    score; of those, the one that helps the most past tasks, then the best mean per-task file F1. Which pair
    tops that on one history is noise that would swing with a few sessions: the pair is chosen on `resamples`
    bootstrap resamples of the history's tasks (fixed seed) and each threshold is the median of those choices
    ("bagging"). `default` (the prior's thresholds) when no pair qualifies; the best qualifying pair when the
    median pair does not."""
    import numpy as np

    from habitus.learn.prior import DEFAULT_THRESHOLDS

    by_task = _task_outcomes(chances)
    pairs = [(m, h) for h in GRID for m in GRID if m <= h]
    if not by_task:
        return dict(default or DEFAULT_THRESHOLDS), None
    outcomes = _outcome_matrix(by_task, pairs, sizes)
    whole = int(_best_pairs(outcomes.sum(axis=0)[None])[0])
    if whole < 0:
        return dict(default or DEFAULT_THRESHOLDS), None
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
    figures = evaluate_thresholds(chances, min_chance, handover, sizes=sizes)
    figures["resamples"] = len(picks)
    return {"min_chance": min_chance, "handover_chance": handover}, figures


def calibrate(repomap: RepoMap, records: list[Record], *, code: CodeIndex | None, repo: Path | None,
              prior: WherePrior | None = None) -> None:
    """Fit `repomap.model` around the prior, take the prior's thresholds, and measure both on the history out of
    sample for the gate (see the module docstring)."""
    prior = prior or shipped_prior()
    rows = history_rows(records, repomap.subject, code, repo)
    tasks = len({r.task for r in rows})
    positives = sum(r.label for r in rows)
    repomap.model = fit_around(rows, prior)
    sizes = {i: len(task_files(rec)) for i, rec in enumerate(records)}
    chances = later_half(out_of_sample_chances(rows, prior))
    repomap.thresholds, figures, how = thresholds_for_repo(prior.thresholds, chances, sizes)
    fitted = repomap.model != prior.model
    info: dict[str, Any] = {"rows": len(rows), "tasks": tasks, "positives": positives,
                            "model": "fitted around the prior" if fitted else "prior",
                            "thresholds": how, "prior": dict(prior.source)}
    if not fitted:
        info["reason"] = (f"{tasks} replayable past tasks with {positives} right files "
                          f"(need {MIN_TASKS} and {MIN_POSITIVES} to move away from the prior)")
    if figures is not None:
        info["out_of_sample"] = figures
    repomap.calibration = info


def later_half(chances: list[Scored]) -> list[Scored]:
    """The chances of the later half of the history's tasks: there the map had grown to at least half the size it
    has when recall uses it, so its figures judge it in the state it is used in (the first tasks meet an almost
    empty map: on a 43-task history their misses turned where-to-look off although the later half met the
    targets, docs/bench-replay.md). Histories of fewer than 2 × `MIN_JUDGED` tasks are judged whole."""
    tasks = sorted({c.task for c in chances})
    if len(tasks) < 2 * MIN_JUDGED:
        return chances
    cut = tasks[len(tasks) // 2]
    return [c for c in chances if c.task >= cut]


def meets_targets(figures: dict[str, float]) -> bool:
    """Hand-overs were made, their files right at least PRECISION_TARGET of the time and all wrong at most
    FALSE_HANDOVER_TARGET of the time."""
    return bool(figures["handovers"]) and figures["precision"] >= PRECISION_TARGET and \
        figures["false_rate"] <= FALSE_HANDOVER_TARGET


def thresholds_for_repo(prior: dict[str, float], chances: list[Scored], sizes: dict[int, int]
                        ) -> tuple[dict[str, float], dict[str, float] | None, str]:
    """The prior's thresholds, unless on this repo's own history (out of sample) they miss the targets: then the
    least strict raise of both to one grid value that meets them ("tightened on this repo's history"). When none
    does, the prior's stay and the map's gate judges them. Returns (thresholds, their figures, how chosen)."""
    if not chances:
        return dict(prior), None, "the prior's (chosen across repositories)"
    figures = evaluate_thresholds(chances, prior["min_chance"], prior["handover_chance"], sizes=sizes)
    if meets_targets(figures):
        return dict(prior), figures, "the prior's (chosen across repositories)"
    for level in GRID:
        pair = {"min_chance": max(prior["min_chance"], level), "handover_chance": max(prior["handover_chance"], level)}
        if pair == prior:
            continue
        tried = evaluate_thresholds(chances, pair["min_chance"], pair["handover_chance"], sizes=sizes)
        if meets_targets(tried):
            return pair, tried, "the prior's, raised on this repo's own history to meet the targets"
    return dict(prior), figures, "the prior's (no raise met the targets on this repo's history)"


def explain(repomap: RepoMap) -> str:
    """One line on how the map's model and thresholds were chosen."""
    info = repomap.calibration
    if not info:
        return "where-to-look: not calibrated"
    head = (f"where-to-look model {info.get('model')} on {info.get('tasks')} past tasks "
            f"({info.get('rows')} candidate files, {info.get('positives')} right)")
    return (f"{head}; a hand-over when the best file's chance ≥ {repomap.thresholds.get('handover_chance')}, "
            f"holding files at chance ≥ {repomap.thresholds.get('min_chance')}")


__all__ = ["FALSE_HANDOVER_LIMIT", "FALSE_HANDOVER_TARGET", "PRECISION_FLOOR", "PRECISION_TARGET", "Row", "Scored",
           "calibrate", "choose_thresholds", "evaluate_thresholds", "explain", "fit_around", "fit_logistic",
           "history_rows", "later_half", "meets_targets", "out_of_sample_chances", "score_rows", "thresholds_for_repo"]
