"""The batched program search: problem, hashing, dedup, leaderboards, the level driver, shards."""
