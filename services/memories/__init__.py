"""The memory service: writes with their hooks, lifecycle (decay and tiers) and
import/export."""
