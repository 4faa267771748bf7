"""Engram's domain layer: pure Python, no Qt. Store, indexes, embeddings, retrieval."""
