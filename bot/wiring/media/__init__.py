"""The media room's wiring: which speech, vision and voice backends the settings choose
(`backends.py`, `spoken.py`), documents and long recordings kept here or by a job
(`documents.py`, `document_jobs.py`, `voice_jobs.py`), and a job followed in the chat
(`job_progress.py`)."""
