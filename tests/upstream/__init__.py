"""Cases translated from Kubernetes' own table-driven tests, and the judges that ask gpulint for its verdict."""
