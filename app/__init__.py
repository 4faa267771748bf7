"""Engram's application layer: entry points (CLI, later the tray), the settings schema,
the composition root that builds the services, and background work."""
