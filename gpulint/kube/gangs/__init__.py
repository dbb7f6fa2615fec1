"""Gangs: which pods must start together, and whether they can be placed at once."""
