"""The Kubernetes model: quantities, workloads, the scheduler's filters, DRA with CEL, gangs.

Imports nothing from the lint pipeline, the reports or the entry points."""
