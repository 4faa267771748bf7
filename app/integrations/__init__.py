"""Engram inside coding assistants: the hook entries and MCP registrations written into
Claude Code's, Codex's, Gemini CLI's and Cursor's configuration (`engram hooks`).

`formats` holds every assistant's file locations and shapes (the one place to correct
when an assistant changes them); `install` reads, merges, backs up and writes them."""
