"""Embedding providers behind one `Embedder` protocol (see `base`)."""
