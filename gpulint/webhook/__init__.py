"""The validating admission webhook: AdmissionReviews through the same LintRun as the CLI."""
