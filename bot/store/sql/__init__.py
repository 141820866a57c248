"""What both dialects share: statements written once, rows read by name, the rules of the registry."""
