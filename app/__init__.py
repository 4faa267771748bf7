"""Engram's application layer: entry points (the CLI; the tray in `ui/` runs on it), the
settings schema, the composition root that builds the services, and background work."""
