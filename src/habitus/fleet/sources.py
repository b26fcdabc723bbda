"""Where sharded trace input lives: a plain file or folder, or a URL resolved through pyarrow's filesystems.

`local_path("file:///data/spans")` and `local_path("/data/spans")` give the same local `Path`
(percent-escapes decoded). Any other scheme (`s3://`, `gs://`, `hdfs://`) is checked against
pyarrow's filesystem registry (it comes with the `fleet` extra) and refused with one line: the
readers keep incremental state (offsets, content hashes) per local file, so remote shards are
mounted or copied first (a shared filesystem is what a Ray cluster reads from anyway).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse


class SourceError(ValueError):
    """An input location habitus cannot read from: one line saying why."""


def is_url(text: str) -> bool:
    """True for `scheme://…` (not a Windows drive letter like `C:\\`)."""
    scheme = urlparse(text).scheme
    return len(scheme) > 1 and "://" in text


def local_path(location: str | Path) -> Path:
    """The local path of a folder, file or `file://` URL; SourceError for a scheme not readable here."""
    if isinstance(location, Path) or not is_url(location):
        return Path(location).expanduser()
    parsed = urlparse(location)
    if parsed.scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            raise SourceError(f"{location}: a file:// URL on another host ({parsed.netloc}) is not readable here")
        return Path(unquote(parsed.path))
    known = _pyarrow_knows(location)
    why = "pyarrow can open it, but" if known else "unknown scheme, and"
    raise SourceError(f"{location}: {why} habitus reads local files only; mount or copy the shards and give the "
                      "folder (or a file:// URL)")


def _pyarrow_knows(location: str) -> bool:
    """Whether pyarrow recognises the URL's filesystem (without touching the network where it can avoid it)."""
    try:
        from pyarrow import fs
    except ImportError:
        return False
    try:
        fs.FileSystem.from_uri(location)
    except Exception:  # noqa: BLE001 - unknown scheme, missing credentials, no network: all mean "not here"
        return urlparse(location).scheme in ("s3", "gs", "gcs", "hdfs", "abfs", "az")
    return True


def local_paths(locations: list[str] | list[Path]) -> list[Path]:
    return [local_path(x) for x in locations]


__all__ = ["SourceError", "local_path", "local_paths"]
