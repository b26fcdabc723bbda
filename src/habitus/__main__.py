"""`python -m habitus` runs the CLI."""

from habitus.cli.main import main

main()
