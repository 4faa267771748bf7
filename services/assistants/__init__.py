"""What Engram gives an assistant's session through its hooks, independent of any
assistant's JSON: the context block at session start, the memories a prompt needs, a
file's critical memories when it is read, and the per-session ledger that keeps any
memory from being given twice."""
