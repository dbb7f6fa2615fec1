"""CEL as Kubernetes compiles, costs and evaluates it (DRA selectors, admission policies)."""
