"""Proactive check-ins ([proactive]): triggers, manners and what they pass around (models.py)."""
