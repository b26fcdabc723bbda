"""`[mcp_servers.habitus]` in Codex's config.toml, added and removed by the file's structure, never by lines.

Install appends the table at the end (a new `[mcp_servers.habitus]` section, with a comment on its
header line saying who added it), or, when `mcp_servers` is an inline table or dotted keys, adds the
entry inside it (tomlkit keeps the formatting). Either way the result is parsed back and must be the
original plus our server, else nothing is written. Uninstall parses the file with tomlkit and deletes
the `habitus` table when its command is habitus' (a table written by hand is never touched), plus the
marker comments older versions put around it; a marker line inside a multi-line string is text and
stays. Only a file an older version made invalid (a section appended after an inline `mcp_servers`)
is repaired by lines, and only when what is cut out is exactly our table.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from habitus.deliver.files import ConfigFileError, newline_of
from habitus.deliver.runner import is_habitus_mcp, mcp_command

SERVER_NAME = "habitus"
TOML_BEGIN = "# habitus:mcp:begin"  # older versions: "# habitus:mcp:begin sep=N …" … "# habitus:mcp:end"
TOML_END = "# habitus:mcp:end"
TOML_COMMENT = "# added by `habitus mcp install`; `habitus mcp uninstall` removes it"

# Codex starts MCP servers with a short allow-list of environment variables; without this, a
# HABITUS_HOME set for the agent would not reach the server, which would read another store.
CODEX_ENV_VARS = ["HABITUS_HOME"]


def ours(python: str | None, runner: str = "python") -> dict[str, Any]:
    """The Codex entry: the runner's command, and HABITUS_HOME forwarded (Codex passes few variables on)."""
    command, args = mcp_command(runner, python)
    return {"command": command, "args": args, "env_vars": list(CODEX_ENV_VARS)}


def parse(path: Path, text: str) -> dict[str, Any]:
    """The parsed config; ConfigFileError when it is not valid TOML."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(f"{path} is not valid TOML ({exc}); it was not changed") from exc
    except RecursionError as exc:
        raise ConfigFileError(f"{path} is nested too deeply to be a config file; it was not changed") from exc


def toml_valid(data: bytes) -> bool:
    """Whether `data` is a complete TOML file (what a backup of config.toml must be)."""
    try:
        tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return False
    return True


def servers_of(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    servers = data.get("mcp_servers", {})
    if not isinstance(servers, dict):
        raise ConfigFileError(f"{path}: mcp_servers is not a table; it was not changed")
    return servers


def _without_server(data: dict[str, Any]) -> dict[str, Any]:
    """The parsed config without mcp_servers.habitus and without an `mcp_servers` that holds nothing."""
    out = dict(data)
    servers = dict(out.get("mcp_servers") or {})
    servers.pop(SERVER_NAME, None)
    if servers:
        out["mcp_servers"] = servers
    else:
        out.pop("mcp_servers", None)
    return out


def _appended(text: str, entry: dict[str, Any]) -> str:
    """The config with a `[mcp_servers.habitus]` section appended, in the file's line endings."""
    nl = newline_of(text)
    sep = "" if not text or text.endswith(nl * 2) else (nl if text.endswith(nl) else nl * 2)
    lines = [f"[mcp_servers.{SERVER_NAME}]  {TOML_COMMENT}"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in entry.items()]
    return text + sep + nl.join(lines) + nl


def _inserted(text: str, entry: dict[str, Any]) -> str:
    """The config with our server inside an existing `mcp_servers` (inline table or dotted keys)."""
    import tomlkit

    doc = tomlkit.parse(text)
    table = tomlkit.inline_table()
    table.update(entry)
    doc["mcp_servers"][SERVER_NAME] = table  # type: ignore[index]
    return tomlkit.dumps(doc)


def with_server(path: Path, text: str, entry: dict[str, Any]) -> str:
    """`text` (valid, without our server) plus `entry`; ConfigFileError when that cannot be done cleanly."""
    before = _without_server(parse(path, text))
    for build in (_appended, _inserted):  # a new section where TOML allows one, else inside the existing table
        try:
            candidate = build(text, entry)
            parsed = tomllib.loads(candidate)
        except Exception:  # noqa: BLE001 - any failure here means: try the next way, or refuse below
            continue
        if parsed.get("mcp_servers", {}).get(SERVER_NAME) == entry and _without_server(parsed) == before:
            return candidate
    raise ConfigFileError(f"{path}: could not add [mcp_servers.{SERVER_NAME}] without changing the rest of the "
                          "file; it was not changed — add it by hand")


def _is_ours(entry: Any) -> bool:
    return isinstance(entry, dict) and is_habitus_mcp(str(entry.get("command") or ""), list(entry.get("args") or []))


def _drop_marker_comments(container: Any) -> None:
    """Blank out the comment lines older versions wrote around our section, wherever tomlkit put them."""
    from tomlkit.items import Comment, Whitespace

    body = getattr(container, "body", None)
    if body is None:
        return
    for i, (key, item) in enumerate(body):
        if isinstance(item, Comment) and item.as_string().strip().startswith((TOML_BEGIN, TOML_END)):
            body[i] = (key, Whitespace(""))
        inner = getattr(item, "value", None)
        if inner is not None and hasattr(inner, "body"):
            _drop_marker_comments(inner)


def _trailing_lines(text: str, nl: str) -> int:
    """How many line endings `text` ends with (blank lines at the end, plus the last line's own)."""
    n = 0
    while text.endswith(nl * (n + 1)):
        n += 1
    return n


def without_server(path: Path, text: str) -> str | None:
    """`text` without our `mcp_servers.habitus` table (found by structure), or None when it holds none of ours."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return _repaired(path, text)
    except RecursionError as exc:
        raise ConfigFileError(f"{path} is nested too deeply to be a config file; it was not changed") from exc
    if not _is_ours(servers_of(path, data).get(SERVER_NAME)):
        return None  # none, or written by hand
    import tomlkit

    try:
        doc = tomlkit.parse(text)
        del doc["mcp_servers"][SERVER_NAME]  # type: ignore[union-attr]
        _drop_marker_comments(doc)
        new = tomlkit.dumps(doc)
    except Exception as exc:  # noqa: BLE001 - tomlkit's errors are many; any of them means: do not write
        raise ConfigFileError(f"{path}: could not remove [mcp_servers.{SERVER_NAME}] ({exc}); it was not changed") \
            from exc
    nl = newline_of(text)
    extra = _trailing_lines(new, nl) - max(_trailing_lines(text, nl), 1 if new.strip() else 0)
    if extra > 0:  # the blank line install put before our section, now at the end
        new = new[: len(new) - extra * len(nl)]
    try:
        after = tomllib.loads(new)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(f"{path}: removing [mcp_servers.{SERVER_NAME}] would leave invalid TOML ({exc}); it "
                              "was not changed") from exc
    if _without_server(after) != _without_server(data):
        raise ConfigFileError(f"{path}: removing [mcp_servers.{SERVER_NAME}] would change the rest of the file; it "
                              "was not changed — remove it by hand")
    return new


def _repaired(path: Path, text: str) -> str | None:
    """A file an older version made invalid (its marked section after an inline `mcp_servers`), repaired.

    The marked lines are cut out only when the rest is valid TOML and the cut is exactly our table.
    """
    begin = text.find(TOML_BEGIN)
    end = text.find(TOML_END, begin + 1) if begin >= 0 else -1
    if begin < 0 or end < 0 or (begin and text[begin - 1] != "\n"):
        parse(path, text)  # raises: the file is invalid, and not by our doing
        return None
    nl = newline_of(text)
    stop = end + len(TOML_END)
    stop += len(nl) if text.startswith(nl, stop) else 0
    header = text[begin:text.find("\n", begin)] if "\n" in text[begin:] else text[begin:]
    sep = int(header.split("sep=", 1)[1].split()[0]) if "sep=" in header else 0
    start = begin - sep * len(nl) if sep and text[max(0, begin - sep * len(nl)):begin] == nl * sep else begin
    new, cut = text[:start] + text[stop:], text[begin:stop]
    try:
        section = tomllib.loads(cut)
        tomllib.loads(new)
    except tomllib.TOMLDecodeError:
        parse(path, text)
        return None
    if list(section) != ["mcp_servers"] or list(section["mcp_servers"]) != [SERVER_NAME] \
            or not _is_ours(section["mcp_servers"][SERVER_NAME]):
        parse(path, text)
        return None
    return new


def same_but_blank_lines(a: str, b: str) -> bool:
    """Whether two TOML texts differ only in blank lines and line endings (uninstall then restores the bytes)."""
    def lines(text: str) -> list[str]:
        return [line.rstrip() for line in text.replace("\r\n", "\n").split("\n") if line.strip()]

    return lines(a) == lines(b)
