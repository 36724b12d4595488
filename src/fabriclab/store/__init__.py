"""The results store: every run's figures kept in SQLite or PostgreSQL, and read back as series."""
