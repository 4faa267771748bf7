"""Pure readers of text: words and code spans, identifiers, chunks, stack traces, source
symbols, relative dates, `MEMORY:` lines and lesson fields. No storage, no models."""
