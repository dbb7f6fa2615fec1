"""The lint pipeline: sources -> parsed once -> linted set + inventory -> rules -> findings -> suppressions."""
