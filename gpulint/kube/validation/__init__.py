"""What the API server rejects beyond the OpenAPI schema, translated from kubernetes/kubernetes
pkg/apis/*/validation, as field errors worded as it words them."""
