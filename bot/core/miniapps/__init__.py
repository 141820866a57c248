"""Mini-apps ([apps]): what a person asks for with /app, built, checked, stored and shown."""
