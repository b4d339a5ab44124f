"""Benchmarks of the service against the framework's own ceiling (not unit tests; see README.md)."""
