"""Vectors: embedders (`embeddings/`), the Chroma index and the writer that keeps it in step
with the store. Rebuildable from SQLite at any time."""
