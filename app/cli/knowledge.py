"""`engram lesson` and `engram context-history`: versioned lessons and the saved
project context with its history."""

from __future__ import annotations
