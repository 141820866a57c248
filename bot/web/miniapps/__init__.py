"""The miniapps a person asks for, as the web serves them: rendered from templates (render.py,
templates/) or adopted from a model's page (freeform.py), checked (check.py), themed by one
design-token sheet (tokens.py) and hosted at /a/<token> (hosting.py)."""
