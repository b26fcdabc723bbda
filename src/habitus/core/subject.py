"""The subject (repo identity) format: `<root commit>[@<remote url>]`, and its root-commit part.

Every clone of a repo shares its root commit while remotes may differ, so memory is matched on
the root part. Computing a subject needs git (`habitus.capture.subject.repo_subject`); reading one
is pure and lives here so that every area splits it the same way.
"""

from __future__ import annotations

from typing import overload


@overload
def subject_root_commit(subject: str) -> str: ...
@overload
def subject_root_commit(subject: None) -> None: ...
def subject_root_commit(subject: str | None) -> str | None:
    """The root-commit part of a subject (None stays None)."""
    return subject.split("@", 1)[0] if subject else None


def same_repo(a: str | None, b: str | None) -> bool:
    """Whether two subjects name clones of the same repo."""
    return bool(a and b) and subject_root_commit(a) == subject_root_commit(b)
