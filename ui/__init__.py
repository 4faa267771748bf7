"""Engram's Qt widgets (the tray app). Talks to `app` only."""
