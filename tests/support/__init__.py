"""Shared test fixtures: manifests, fakes and helpers that more than one test module uses (a test module never
imports another; tests/unit/test_import_cycles.py checks it)."""
