"""Found programs: inline, validate, store, select attempts."""
