"""`python -m app.cli`: the same CLI (used to start the background embedder)."""

from app.cli import main

main()
