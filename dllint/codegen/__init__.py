"""Source code that fixes add to a user's module (kept as text; tests execute it directly)."""
