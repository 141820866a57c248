"""The learning room's statistics: the canary's sequential test, its power, and the reward model."""
