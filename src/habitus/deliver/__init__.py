"""habitus.deliver: agent hooks, the MCP server, and the managed always-on rules block (docs/architecture.md §1).

The public calls are loaded on first use, so the hook entry point (`habitus.deliver.hook`), which
imports this package, stays light:

- `install_hooks(agent, path)`, `uninstall_hooks(agent, path)`, `hooks_status(agent, path)`, `settings_path(...)`
- `run_event(event, payload, agent=...)` / `prompt_submit(payload)`: the JSON a hook would print (or None)
- `propose(conn, target)` → `Proposal`; `apply(conn, proposal)`: promotion into the rules block
- `build_server(cwd)`: the MCP server; `install_mcp(agent, scope)`: its client configuration
"""

from __future__ import annotations

from habitus.core.lazy import lazy_exports

_WHERE = {
    "install_hooks": "habitus.deliver.install",
    "uninstall_hooks": "habitus.deliver.install",
    "hooks_status": "habitus.deliver.install",
    "settings_path": "habitus.deliver.install",
    "run_event": "habitus.deliver.events",
    "prompt_submit": "habitus.deliver.events",
    "after_tool": "habitus.deliver.events",
    "propose": "habitus.deliver.promote",
    "apply": "habitus.deliver.promote",
    "Proposal": "habitus.deliver.promote",
    "build_server": "habitus.deliver.mcp_server",
    "install_mcp": "habitus.deliver.mcp_install",
}

__all__ = sorted(_WHERE)


__getattr__ = lazy_exports(__name__, _WHERE)
