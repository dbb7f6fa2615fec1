"""The command line: check, explain, inventory, rules, serve."""
