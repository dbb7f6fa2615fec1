"""Verdicts built once per pod template, gang and claim; the rules and `explain` only word them."""
