"""`python -m habitus` runs the CLI."""

from habitus.cli.launcher import main

main()
