"""`engram recall`: answers to questions about when things happened, from the dates
resolved in memories."""

from __future__ import annotations
