"""The PostgreSQL + pgvector store: one pool, a role object per room on it (psycopg 3)."""
