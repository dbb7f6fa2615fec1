"""What happens to findings: suppressions, the baseline, fixes."""
