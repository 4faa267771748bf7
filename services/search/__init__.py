"""Hybrid retrieval: dense, BM25 and identifier stages fused into ranked results, with the
query readers (intent, key error lines) they need."""
