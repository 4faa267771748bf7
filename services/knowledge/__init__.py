"""What holds now: contradictions and supersession, facts, lessons, temporal recall,
project context and the consented profile. Never imports `rem`."""
