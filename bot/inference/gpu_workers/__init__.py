"""Inference on Celery GPU workers: the bot's client and the worker's side, joined by a Redis stream."""
