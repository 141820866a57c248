"""Fixtures shared by every test folder. The PostgreSQL server starts once, on first use."""

from tests.support.pg import pg_dsn, pg_server  # noqa: F401
