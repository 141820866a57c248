"""Fixtures shared by every test folder. The PostgreSQL server starts once, on first use."""

import os

# Set before anything imports transformers: the tests never reach for the Hub.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

from tests.support.pg import pg_dsn, pg_server  # noqa: F401
