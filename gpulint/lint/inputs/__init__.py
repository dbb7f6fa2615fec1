"""What a run reads: the sources, rendered charts and overlays, the YAML loaded, the repository index."""
