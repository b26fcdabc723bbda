"""habitus.fleet: fleet scale on an existing engine (see docs/store.md "Fleet scale").

`engine.get_engine("local" | "ray", address)` gives an engine whose `map(fn, items)` runs a pure
function over items in input order, in this process or on Ray workers; capture's ingest and
refine's summarise/embed stages take one. `sources.local_path` turns a folder or `file://` URL
into the local path the readers read. Ray is imported only when the `ray` engine is asked for.
"""
