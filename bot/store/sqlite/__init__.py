"""The SQLite store: one file, one connection, a role object per room on it (aiosqlite)."""
