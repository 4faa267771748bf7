"""The REM cycle: consolidation operations that propose findings for the user to review."""
