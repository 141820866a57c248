"""Kindred's Celery workers: the app (`workers.app`), the task policy (`workers.tasks`) and beat's
schedule (`workers.schedule`). Run with `kindred worker` or `celery -A workers.app worker`."""
