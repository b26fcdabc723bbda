"""`habitus bench replay`: the repo's own history as the benchmark (see docs/bench-replay.md)."""
