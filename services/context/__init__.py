"""Context assembly: tiers within a token budget, compression levels, and the activity
replay that measures predictions."""
