"""Helm charts and kustomize overlays rendered where they live, and the files that are not manifests.

The sources layer asks this package three things: is a directory a chart or an overlay (and which
files does it consume), what do they render to (with each document's way back to the file and
line that produced it), and is a file no Kubernetes manifest at all (Chart.yaml, values files, CI
workflows). Only binaries the user chose are run (``--helm``, ``--kustomize``, ``--kubectl`` or
PATH), never anything a repository configures.
"""
