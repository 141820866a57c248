"""State that several bot replicas share through Redis: webhook intake (dedupe, per-chat order) and
token buckets (per-person limits, flood control). The in-process versions live in the core."""
