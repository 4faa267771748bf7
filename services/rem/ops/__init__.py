"""The consolidation operations, one module each; `services.rem.registry` declares them."""
