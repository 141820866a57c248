"""The two runners of the core's `Jobs`: in-process threads, and Celery over Redis."""
