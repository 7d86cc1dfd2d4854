"""The `r42` command line: the composition root that may import every service."""
