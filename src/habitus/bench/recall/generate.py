"""Seeded generator of recall-benchmark scenarios on the fixture repo, adversarial cases in every scenario.

Each scenario learns from the fixture's sessions (three task kinds), then commits a rename, a
move and a delete of files those kinds' workflows point at (the kinds rotate per scenario) and
removes the check script. Its tasks: new tasks of every kind (values no session used), and the
cases a memory system gets wrong — mentions without intent (docs-only, review-only, questions),
negations in several forms, look-alike tasks (another kind's words, or a kind's words for
something no workflow covers), multi-change lists, and tasks that need nothing.
"""

from __future__ import annotations

import itertools
import random

from habitus.bench.fixture_app import TASK_KINDS, UNRELATED_TASKS
from habitus.bench.recall.scenario import Change, Scenario, TaskSpec

KINDS = ("shortcut", "endpoint", "config")
KIND_FILES = {"shortcut": ["web/src/shortcuts.ts", "web/src/app.ts", "docs/shortcuts.md"],
              "endpoint": ["server/api.py", "docs/api.md", "tests/test_api.py"],
              "config": ["server/config.py", "docs/config.md", "tests/test_config.py"]}
CHECK_SCRIPT = "scripts/check.sh"  # the config kind's check runs it
RENAMES = {"shortcut": ("web/src/app.ts", "web/src/application.ts"), "endpoint": ("server/api.py", "server/routes.py"),
           "config": ("server/config.py", "server/settings.py")}
MOVES = {"shortcut": ("docs/shortcuts.md", "docs/guide/shortcuts.md"), "endpoint": ("docs/api.md", "reference/api.md"),
         "config": ("docs/config.md", "docs/reference/config.md")}
DELETES = {"shortcut": "docs/shortcuts.md", "endpoint": "docs/api.md", "config": "docs/config.md"}

DOCS_ONLY = {
    "shortcut": ["Fix the typo 'Opne' in the keyboard shortcut table in docs/shortcuts.md. Documentation only, "
                 "don't touch any code.",
                 "Reword the keyboard shortcuts documentation so it explains the Ctrl key on macOS; docs only."],
    "endpoint": ["Rewrite the intro of the API endpoint reference in docs/api.md so it reads better. Only the docs "
                 "change.",
                 "Document the existing /api/documents API endpoint more clearly — documentation only, no code."],
    "config": ["Proofread docs/config.md: the config option table has broken markdown. No code changes.",
               "Explain the SKETCH_PORT config option better in the docs; only the documentation changes."],
}
REVIEW_ONLY = {
    "shortcut": ["Please review how the keyboard shortcut for zoomIn is wired and leave comments only, no edits.",
                 "Review the last commit that added a keyboard shortcut; report problems, don't change anything."],
    "endpoint": ["Review the last commit that added an API endpoint and list any problems; do not change anything.",
                 "Code review only: is the list_documents API endpoint safe? Report findings without editing."],
    "config": ["Code review: check that the config option `port` is validated. Just report findings, don't modify "
               "files.",
               "Audit how each config option is read from the environment and write up risks; read-only."],
}
QUESTIONS = {
    "shortcut": ["How do keyboard shortcuts get registered in the UI?",
                 "Where is the keyboard shortcut Ctrl+S handled, and which command does it run?"],
    "endpoint": ["Which API endpoint handles /api/documents, and where is its handler?",
                 "What does the ROUTES table do when a new API endpoint is added?"],
    "config": ["What is the default of the config option SKETCH_PORT and where is it read?",
               "Why does every config option have an env var? Just explain."],
}
NEGATIONS = {
    "shortcut": ["Don't add a keyboard shortcut; instead make the Save menu item bold.",
                 "Rather than a new keyboard shortcut, add a toolbar button for zoomIn.",
                 "No keyboard shortcut is needed: just change the zoom step from 10% to 20%."],
    "endpoint": ["Without adding any new API endpoint, make list_documents sort its results by name.",
                 "We do not want another API endpoint here; make open_document return 404 for missing ids.",
                 "Instead of a new API endpoint, add paging to the existing list_documents handler."],
    "config": ["No new config option is needed — just make load_config ignore empty environment variables.",
               "Never add a config option for this: hard-code the thumbnail size to 256 in the renderer.",
               "Don't make it a config option; log the port at startup instead."],
}
# (text template, expected kinds): another kind's words in a task of a kind, or a kind's words for uncovered work
LOOK_ALIKES = [
    ("Add an API endpoint `{path}` handled by `{handler}` that returns the current config options.", ["endpoint"]),
    ("Add a config option `{name}` (default {default}) read from the `{env}` environment variable; when set it "
     "turns keyboard shortcuts off.", ["config"]),
    ('Add a keyboard shortcut {key} for `{id}`, shown as "{label}" in the view menu; it calls the export API.',
     ["shortcut"]),
    ("Add an option to the export dialog to include hidden layers.", []),
    ("Add a new API key to the CI secrets and rotate the old one.", []),
    ("Add a keyboard-accessible focus ring to the menu buttons.", []),
    ("Add an environment variable for the CI runner image in the pipeline file.", []),
]
MULTI = [
    ('Two changes: 1. Add a keyboard shortcut {key} for `{id}` ("{label}"). 2. Add a config option `{name}` '
     "(default {default}) read from `{env}`.", ["shortcut", "config"]),
    ("- Add an API endpoint `{path}` handled by `{handler}` that {what}.\n- Add a config option `{name}` "
     "(default {default}) read from the `{env}` environment variable.", ["endpoint", "config"]),
    ('Please do both: add a keyboard shortcut {key} for `{id}` ("{label}"), and add an API endpoint `{path}` '
     "handled by `{handler}`.", ["shortcut", "endpoint"]),
]
NOTHING = [*UNRELATED_TASKS,
           "Bump the version in package.json to 0.4.0 and tag the release.",
           "Speed up the thumbnail renderer; it redraws every layer on each frame.",
           "Translate the error messages of the upload form into German."]


def used_value_indexes(kind: str, sessions: int) -> set[int]:
    """Indexes into the kind's values that `make_fixture_repo(sessions=…)` plays (its round-robin)."""
    k = KINDS.index(kind)
    n = len(TASK_KINDS[kind].values)
    return {(i // len(KINDS)) % n for i in range(sessions) if i % len(KINDS) == k}


def fresh_values(kind: str, sessions: int) -> list[dict[str, str]]:
    used = used_value_indexes(kind, sessions)
    fresh = [v for i, v in enumerate(TASK_KINDS[kind].values) if i not in used]
    if not fresh:
        raise ValueError(f"{sessions} sessions use every value of task kind {kind!r}; use fewer sessions")
    return fresh


def _derived(expect: list[str], changes: list[Change]) -> tuple[list[str], dict[str, str]]:
    files = {f for k in expect for f in KIND_FILES[k]}
    stale = [c.path for c in changes if c.op == "delete" and (c.path in files or
                                                              (c.path == CHECK_SCRIPT and "config" in expect))]
    moved = {c.path: c.to for c in changes if c.op != "delete" and c.path in files and c.to}
    return stale, moved


def generate_scenario(index: int, *, seed: int = 0, sessions: int = 12) -> Scenario:
    """The `index`th scenario of a seeded set: fixture seed `seed + index`, ~26 tasks."""
    rng = random.Random(f"recall-bench:{seed}:{index}")
    renamed, moved, deleted = list(itertools.permutations(KINDS))[(seed + index) % 6]  # every scenario differs
    changes = [Change("rename", RENAMES[renamed][0], RENAMES[renamed][1]),
               Change("move", MOVES[moved][0], MOVES[moved][1]),
               Change("delete", DELETES[deleted]), Change("delete", CHECK_SCRIPT)]
    fresh = {k: fresh_values(k, sessions) for k in KINDS}
    rng_values = {k: rng.sample(v, len(v)) for k, v in fresh.items()}
    tasks: list[tuple[str, str, list[str]]] = []
    for kind in KINDS:
        spec = TASK_KINDS[kind]
        for n in range(2):
            tasks.append((spec.task_text(rng_values[kind][n % len(rng_values[kind])], rng.randrange(3)),
                          "new-task", [kind]))
    for category, table in (("docs-only", DOCS_ONLY), ("review-only", REVIEW_ONLY), ("question", QUESTIONS),
                            ("negation", NEGATIONS)):
        for kind in KINDS:
            tasks.append((rng.choice(table[kind]), category, []))
    merged = {**rng_values["shortcut"][-1], **rng_values["endpoint"][-1], **rng_values["config"][-1]}
    for template, expect in rng.sample(LOOK_ALIKES[:3], 2) + rng.sample(LOOK_ALIKES[3:], 1):
        tasks.append((template.format(**merged), "look-alike", list(expect)))
    for template, expect in rng.sample(MULTI, 2):
        tasks.append((template.format(**merged), "multi-change", list(expect)))
    for text in rng.sample(NOTHING, 3):
        tasks.append((text, "nothing", []))
    specs = []
    for i, (text, category, expect) in enumerate(tasks, 1):
        stale, moves = _derived(expect, changes)
        specs.append(TaskSpec(id=f"t{i:02d}", text=text, category=category, expect=expect, stale=stale, moved=moves))
    return Scenario(name=f"s{index}-seed{seed + index}", seed=seed + index, sessions=sessions,
                    after_learning=changes, tasks=specs)


def generate_scenarios(n: int = 3, *, seed: int = 0, sessions: int = 12) -> list[Scenario]:
    if n < 1:
        raise ValueError("the number of scenarios must be at least 1")
    return [generate_scenario(i, seed=seed, sessions=sessions) for i in range(n)]
