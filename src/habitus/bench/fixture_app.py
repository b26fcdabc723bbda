"""The small app the fixture repo starts from, and the task kinds agents perform on it.

"sketchpad": a TypeScript UI (`class App` with `getMenuItems`, a keyboard shortcut registry), a
Python backend (routes on `class Api`, a `Config` dataclass), docs, tests and a check script. Each
task kind knows its task phrasings, the values that vary per task, and the edits that really apply
to the files (anchored on current file text, so they apply after any earlier session's edits).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

INITIAL_FILES: dict[str, str] = {
    "package.json": """{
  "name": "sketchpad",
  "version": "0.3.0",
  "private": true,
  "scripts": {
    "test": "vitest",
    "build": "tsc -p web"
  },
  "devDependencies": {
    "typescript": "^5.4.0",
    "vitest": "^1.6.0"
  }
}
""",
    "web/src/app.ts": """import { SHORTCUTS, Shortcut } from "./shortcuts";

export interface MenuItem {
  id: string;
  label: string;
  shortcut?: string;
}

export class App {
  viewMode = "edit";
  private handlers = new Map<string, () => void>();

  constructor(private readonly root: HTMLElement) {
    this.handlers.set("open", () => this.open());
  }

  getMenuItems(viewMode: string): MenuItem[] {
    const items: MenuItem[] = [
      { id: "open", label: "Open", shortcut: "Ctrl+O" },
      { id: "save", label: "Save", shortcut: "Ctrl+S" },
    ];
    if (viewMode === "view") {
      items.push({ id: "zoomIn", label: "Zoom in", shortcut: "Ctrl+=" });
    }
    return items;
  }

  handleCommand(id: string): boolean {
    switch (id) {
      case "open":
        this.open();
        return true;
      case "zoomIn":
        return this.dispatch("zoomIn");
    }
    return false;
  }

  shortcutFor(id: string): Shortcut | undefined {
    return SHORTCUTS.find((s) => s.command === id);
  }

  private dispatch(command: string): boolean {
    this.root.dispatchEvent(new CustomEvent("sketch:command", { detail: command }));
    return true;
  }

  private open(): void {
    this.root.classList.add("is-opening");
  }
}
""",
    "web/src/shortcuts.ts": """export interface Shortcut {
  key: string;
  command: string;
}

export const SHORTCUTS: Shortcut[] = [
  { key: "Ctrl+O", command: "open" },
  { key: "Ctrl+S", command: "save" },
  { key: "Ctrl+=", command: "zoomIn" },
];

export function registerShortcuts(target: HTMLElement, run: (command: string) => boolean): void {
  target.addEventListener("keydown", (event) => {
    const combo = comboOf(event);
    const hit = SHORTCUTS.find((s) => s.key === combo);
    if (hit && run(hit.command)) {
      event.preventDefault();
    }
  });
}

function comboOf(event: KeyboardEvent): string {
  const parts: string[] = [];
  if (event.ctrlKey) parts.push("Ctrl");
  if (event.altKey) parts.push("Alt");
  if (event.shiftKey) parts.push("Shift");
  parts.push(event.key.length === 1 ? event.key.toUpperCase() : event.key);
  return parts.join("+");
}
""",
    "web/test/shortcuts.test.ts": """import { describe, expect, it } from "vitest";
import { SHORTCUTS } from "../src/shortcuts";

describe("shortcuts", () => {
  it("has unique keys", () => {
    const keys = SHORTCUTS.map((s) => s.key);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
""",
    "server/__init__.py": "",
    "server/api.py": '''"""HTTP API of the sketchpad backend: a route table and the handlers on `Api`."""

from __future__ import annotations

from typing import Any

ROUTES: dict[str, str] = {
    "/api/documents": "list_documents",
    "/api/documents/open": "open_document",
}


class Api:
    """Request handlers; each takes the parsed request and returns a JSON-able dict."""

    def __init__(self, db: Any) -> None:
        self.db = db

    def dispatch(self, path: str, request: dict[str, Any]) -> dict[str, Any]:
        name = ROUTES.get(path)
        if name is None:
            return {"error": "not found", "status": 404}
        return getattr(self, name)(request)

    def list_documents(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"items": self.db.all("documents")}

    def open_document(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"item": self.db.get("documents", request["id"])}
''',
    "server/config.py": '''"""Backend settings: defaults on `Config`, overridden from SKETCH_* environment variables."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass
class Config:
    port: int = 8080
    data_dir: str = "data"


def load_config(env: Mapping[str, str] | None = None) -> Config:
    env = os.environ if env is None else env
    config = Config()
    if "SKETCH_PORT" in env:
        config.port = int(env["SKETCH_PORT"])
    if "SKETCH_DATA_DIR" in env:
        config.data_dir = env["SKETCH_DATA_DIR"]
    return config
''',
    "tests/__init__.py": "",
    "tests/test_api.py": '''from server.api import ROUTES, Api


class FakeDb:
    def all(self, table):
        return [table]

    def get(self, table, key):
        return {"table": table, "id": key}


def test_routes_point_at_handlers():
    api = Api(FakeDb())
    for name in ROUTES.values():
        assert callable(getattr(api, name))
''',
    "tests/test_config.py": '''from server.config import load_config


def test_defaults():
    assert load_config({}).port == 8080


def test_port_from_env():
    assert load_config({"SKETCH_PORT": "9000"}).port == 9000
''',
    "docs/shortcuts.md": """# Keyboard shortcuts

Shortcuts are registered in `web/src/shortcuts.ts` and shown in the menus.

## Shortcuts

| Key | Action |
|-----|--------|
| Ctrl+O | Open |
| Ctrl+S | Save |
| Ctrl+= | Zoom in |
""",
    "docs/api.md": """# API

All endpoints return JSON.

## Endpoints

- `GET /api/documents` — list documents
- `GET /api/documents/open` — open one document
""",
    "docs/config.md": """# Configuration

Settings come from environment variables.

## Options

| Variable | Default | Meaning |
|----------|---------|---------|
| SKETCH_PORT | 8080 | port to listen on |
| SKETCH_DATA_DIR | data | where documents live |
""",
    "scripts/check.sh": """#!/bin/sh
set -e
python -m pytest -q tests
ruff check server tests
""",
    "README.md": """# sketchpad

A tiny drawing app: TypeScript UI in `web/`, Python backend in `server/`.

Run `bash scripts/check.sh` before committing.
""",
}


@dataclass
class Edit:
    """One change to one file: replace `old` (unique in the current text) with `new`."""

    file: str
    old: str
    new: str


@dataclass
class TaskKind:
    """A kind of task agents perform on the app, with the places its edits go (as learn computes them)."""

    name: str
    phrasings: list[str]
    values: list[dict[str, str]]
    steps: list[tuple[str, list[str]]]  # (file, chain) of the edits every run makes, in order
    optional_steps: list[tuple[str, list[str]]]
    checks: list[str]
    detour: tuple[str, str, str]  # failing command, its error output, fixing command
    reads: list[str]
    build_edits: Callable[[dict[str, str], dict[str, str], bool], list[Edit]] = field(repr=False)
    commit_message: str = ""

    def task_text(self, values: dict[str, str], n: int) -> str:
        return self.phrasings[n % len(self.phrasings)].format(**values)


def _before(text: str, anchor: str, line: str) -> tuple[str, str]:
    """(old, new) inserting `line` right before `anchor`, with enough context to be unique."""
    i = text.index(anchor)
    start = text.rfind("\n", 0, i - 1) + 1  # include the line before the anchor for uniqueness
    old = text[start:i + len(anchor)]
    return old, text[start:i] + line + anchor


def _shortcut_edits(files: dict[str, str], v: dict[str, str], optional: bool) -> list[Edit]:
    edits = []
    sc = files["web/src/shortcuts.ts"]
    entry = f'  {{ key: "{v["key"]}", command: "{v["id"]}" }},\n'
    old, new = _before(sc, "];\n\nexport function registerShortcuts", entry)
    edits.append(Edit("web/src/shortcuts.ts", old, new))
    app = files["web/src/app.ts"]
    old, new = _before(app, "    }\n    return items;", f'      items.push({{ id: "{v["id"]}", label: "{v["label"]}", '
                                                          f'shortcut: "{v["key"]}" }});\n')
    edits.append(Edit("web/src/app.ts", old, new))
    old, new = _before(app, "    }\n    return false;",
                       f'      case "{v["id"]}":\n        return this.dispatch("{v["id"]}");\n')
    edits.append(Edit("web/src/app.ts", old, new))
    doc = files["docs/shortcuts.md"]
    edits.append(Edit("docs/shortcuts.md", doc.rstrip("\n").splitlines()[-1] + "\n",
                      doc.rstrip("\n").splitlines()[-1] + f'\n| {v["key"]} | {v["label"]} |\n'))
    if optional:
        t = files["web/test/shortcuts.test.ts"]
        i = t.rindex("\n});\n") + 1  # the closing line of describe(...)
        start = t.rfind("\n", 0, i - 1) + 1
        block = (f'  it("binds {v["key"]} to {v["id"]}", () => {{\n'
                 f'    expect(SHORTCUTS.some((s) => s.command === "{v["id"]}")).toBe(true);\n  }});\n')
        old, new = t[start:], t[start:i] + block + t[i:]
        edits.append(Edit("web/test/shortcuts.test.ts", old, new))
    return edits


def _endpoint_edits(files: dict[str, str], v: dict[str, str], optional: bool) -> list[Edit]:
    edits = []
    api = files["server/api.py"]
    old, new = _before(api, "}\n\n\nclass Api", f'    "{v["path"]}": "{v["handler"]}",\n')
    edits.append(Edit("server/api.py", old, new))
    tail = api.rstrip("\n").splitlines()[-1] + "\n"
    method = (f'\n    def {v["handler"]}(self, request: dict[str, Any]) -> dict[str, Any]:\n'
              f'        return {{"items": self.db.all("{v["table"]}")}}\n')
    edits.append(Edit("server/api.py", tail, tail + method))
    doc = files["docs/api.md"]
    last = doc.rstrip("\n").splitlines()[-1] + "\n"
    edits.append(Edit("docs/api.md", last, last + f'- `GET {v["path"]}` — {v["what"]}\n'))
    if optional:
        t = files["tests/test_api.py"]
        tail = t.rstrip("\n").splitlines()[-1] + "\n"
        edits.append(Edit("tests/test_api.py", tail, tail + f'\n\ndef test_{v["handler"]}():\n'
                                                  f'    assert Api(FakeDb()).dispatch("{v["path"]}", {{}})["items"]\n'))
    return edits


def _config_edits(files: dict[str, str], v: dict[str, str], optional: bool) -> list[Edit]:
    edits = []
    cfg = files["server/config.py"]
    # insert after the last field: anchor is the blank lines before load_config
    i = cfg.index("\n\n\ndef load_config")
    start = cfg.rfind("\n", 0, i) + 1
    old = cfg[start:i + 1]
    new = cfg[start:i + 1] + f'    {v["name"]}: {v["type"]} = {v["default_py"]}\n'
    edits.append(Edit("server/config.py", old, new))
    conv = {"int": 'int(env["{k}"])', "float": 'float(env["{k}"])', "str": 'env["{k}"]',
            "bool": 'env["{k}"] == "1"'}[v["type"]].format(k=v["env"])
    override = f'    if "{v["env"]}" in env:\n        config.{v["name"]} = {conv}\n'
    old, new = _before(cfg, "    return config\n", override)
    edits.append(Edit("server/config.py", old, new))
    doc = files["docs/config.md"]
    last = doc.rstrip("\n").splitlines()[-1] + "\n"
    edits.append(Edit("docs/config.md", last, last + f'| {v["env"]} | {v["default"]} | {v["meaning"]} |\n'))
    if optional:
        t = files["tests/test_config.py"]
        tail = t.rstrip("\n").splitlines()[-1] + "\n"
        test = f'\n\ndef test_{v["name"]}_default():\n    assert load_config({{}}).{v["name"]} == {v["default_py"]}\n'
        edits.append(Edit("tests/test_config.py", tail, tail + test))
    return edits


SHORTCUT = TaskKind(
    name="shortcut",
    phrasings=[
        'Add a keyboard shortcut {key} for `{id}`, shown as "{label}" in the view menu.',
        'Please add a keyboard shortcut {key} that runs the `{id}` command; menu label "{label}".',
        'We need a new keyboard shortcut: {key} should trigger `{id}` ("{label}").',
    ],
    values=[
        {"id": "toggleGrid", "label": "Toggle grid", "key": "Alt+G"},
        {"id": "exportImage", "label": "Export image", "key": "Ctrl+Shift+E"},
        {"id": "zoomReset", "label": "Reset zoom", "key": "Ctrl+0"},
        {"id": "toggleRuler", "label": "Toggle ruler", "key": "Alt+R"},
        {"id": "duplicateLayer", "label": "Duplicate layer", "key": "Ctrl+J"},
        {"id": "toggleSidebar", "label": "Toggle sidebar", "key": "Ctrl+B"},
        {"id": "lockLayer", "label": "Lock layer", "key": "Alt+L"},
        {"id": "flipHorizontal", "label": "Flip horizontal", "key": "Alt+H"},
        {"id": "showHelp", "label": "Show help", "key": "Shift+F1"},
        {"id": "toggleSnap", "label": "Toggle snapping", "key": "Alt+S"},
    ],
    steps=[("web/src/shortcuts.ts", ["SHORTCUTS"]),
           ("web/src/app.ts", ["class App", "getMenuItems", 'if (viewMode === "view") {']),
           ("web/src/app.ts", ["class App", "handleCommand", "switch (id) {"]),
           ("docs/shortcuts.md", ["# Keyboard shortcuts", "## Shortcuts"])],
    optional_steps=[("web/test/shortcuts.test.ts", ['describe("shortcuts", () => {'])],
    checks=["npm test -- --run"],
    detour=("npm test", "Error: Vitest watch mode needs an interactive terminal. Pass --run to run the tests once.",
            "npm test -- --run"),
    reads=["web/src/shortcuts.ts", "web/src/app.ts", "docs/shortcuts.md"],
    build_edits=_shortcut_edits,
    commit_message="Add {key} shortcut for {id}",
)

ENDPOINT = TaskKind(
    name="endpoint",
    phrasings=[
        "Add an API endpoint `{path}` handled by `{handler}` that {what}.",
        "Please add a new API endpoint `{path}` (handler `{handler}`) which {what}.",
        "Expose `{path}` as an API endpoint; call the handler `{handler}`. It {what}.",
    ],
    values=[
        {"path": "/api/tags", "handler": "list_tags", "table": "tags", "what": "lists all tags"},
        {"path": "/api/layers", "handler": "list_layers", "table": "layers", "what": "lists the layers"},
        {"path": "/api/stats", "handler": "get_stats", "table": "stats", "what": "returns usage statistics"},
        {"path": "/api/users", "handler": "list_users", "table": "users", "what": "lists users"},
        {"path": "/api/exports", "handler": "list_exports", "table": "exports", "what": "lists past exports"},
        {"path": "/api/palettes", "handler": "list_palettes", "table": "palettes", "what": "lists colour palettes"},
        {"path": "/api/brushes", "handler": "list_brushes", "table": "brushes", "what": "lists brushes"},
        {"path": "/api/comments", "handler": "list_comments", "table": "comments", "what": "lists comments"},
        {"path": "/api/templates", "handler": "list_templates", "table": "templates", "what": "lists templates"},
        {"path": "/api/fonts", "handler": "list_fonts", "table": "fonts", "what": "lists fonts"},
    ],
    steps=[("server/api.py", ["ROUTES"]), ("server/api.py", ["class Api"]),
           ("docs/api.md", ["# API", "## Endpoints"])],
    optional_steps=[("tests/test_api.py", [])],
    checks=["python -m pytest tests/test_api.py -q"],
    detour=("pytest tests/test_api.py -q",
            "ImportError while importing test module 'tests/test_api.py'.\n"
            "E   ModuleNotFoundError: No module named 'server'",
            "python -m pytest tests/test_api.py -q"),
    reads=["server/api.py", "tests/test_api.py", "docs/api.md"],
    build_edits=_endpoint_edits,
    commit_message="Add {path} endpoint",
)

CONFIG = TaskKind(
    name="config",
    phrasings=[
        "Add a config option `{name}` (default {default}) read from the `{env}` environment variable.",
        "Please add a new setting `{name}` to the backend config, default {default}, overridable via `{env}`.",
        "Make `{name}` configurable: config option with default {default}, env var `{env}`.",
    ],
    values=[
        {"name": "max_upload_mb", "type": "int", "default": "10", "default_py": "10", "env": "SKETCH_MAX_UPLOAD_MB",
         "meaning": "largest upload in MB"},
        {"name": "autosave_seconds", "type": "int", "default": "30", "default_py": "30",
         "env": "SKETCH_AUTOSAVE_SECONDS", "meaning": "autosave interval"},
        {"name": "theme", "type": "str", "default": "light", "default_py": '"light"', "env": "SKETCH_THEME",
         "meaning": "UI theme"},
        {"name": "telemetry", "type": "bool", "default": "off", "default_py": "False", "env": "SKETCH_TELEMETRY",
         "meaning": "send usage telemetry"},
        {"name": "request_timeout", "type": "float", "default": "5.0", "default_py": "5.0",
         "env": "SKETCH_REQUEST_TIMEOUT", "meaning": "request timeout in seconds"},
        {"name": "cache_dir", "type": "str", "default": ".cache", "default_py": '".cache"', "env": "SKETCH_CACHE_DIR",
         "meaning": "where thumbnails are cached"},
        {"name": "max_layers", "type": "int", "default": "64", "default_py": "64", "env": "SKETCH_MAX_LAYERS",
         "meaning": "layer limit per document"},
        {"name": "log_level", "type": "str", "default": "info", "default_py": '"info"', "env": "SKETCH_LOG_LEVEL",
         "meaning": "log verbosity"},
        {"name": "workers", "type": "int", "default": "2", "default_py": "2", "env": "SKETCH_WORKERS",
         "meaning": "worker processes"},
        {"name": "history_depth", "type": "int", "default": "100", "default_py": "100",
         "env": "SKETCH_HISTORY_DEPTH", "meaning": "undo steps kept"},
    ],
    steps=[("server/config.py", ["class Config"]), ("server/config.py", ["load_config"]),
           ("docs/config.md", ["# Configuration", "## Options"])],
    optional_steps=[("tests/test_config.py", [])],
    checks=["python -m pytest tests/test_config.py -q", "bash scripts/check.sh"],
    detour=("./scripts/check.sh", "/bin/sh: 1: ./scripts/check.sh: Permission denied", "bash scripts/check.sh"),
    reads=["server/config.py", "docs/config.md", "tests/test_config.py"],
    build_edits=_config_edits,
    commit_message="Add {name} config option",
)

TASK_KINDS: dict[str, TaskKind] = {k.name: k for k in (SHORTCUT, ENDPOINT, CONFIG)}

# Tasks that match no learned workflow (for "recall picks nothing" checks).
UNRELATED_TASKS = [
    "Fix the database connection timeout when the server starts under load.",
    "Upgrade vitest to the latest major version and fix the breaking changes.",
    "Write a README section about the release process.",
    "Investigate why the CI cache misses on every run.",
]
