"""What a run reads of its sources' repositories beside the manifests: their setup files (scripts, Makefiles,
workflows, install guides, Terraform), read never run, which say how the cluster they deploy to is set up.

Each reader walks at most once per run, on its first use (never, when no check asks): the Knative flags the
setup turns on (knative_setup: only when neither the linted files nor the inventory hold config-features) and
the GKE clusters it creates (autopilot_setup: only for a GPU pod on a cluster the inventory does not show), and
the folders that create a cluster (terraform_clusters: when a source describes node pools, queues or quotas). A
run that forks its workers reads what a check may ask before they fork (lint.run), so every worker reads the
same. Both walk as setup_walk walks (file_walk.Walk: .gitignore and ``exclude`` honoured, bounded).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from gpulint.lint.inputs.autopilot_setup import GPU_WORDS, ClusterWords, cluster_words
from gpulint.lint.inputs.knative_setup import GATED, KnativeSetup, knative_setup
from gpulint.lint.inputs.setup_walk import mentions
from gpulint.lint.inputs.sources import Source
from gpulint.lint.inputs.terraform_clusters import ClusterRoots, cluster_roots


@dataclass
class RunSetup:
    """The setup files of a run's sources' repositories, each reader walked on its first read."""

    sources: Sequence[Source] = ()
    exclude: Sequence[str] = ()

    @cached_property
    def knative_flags(self) -> KnativeSetup:
        """The Knative flags the setup turns on (lint/inputs/knative_setup.py)."""
        return knative_setup(self.sources, self.exclude)

    @cached_property
    def clusters(self) -> ClusterWords:
        """The GKE clusters the setup creates (lint/inputs/autopilot_setup.py)."""
        return cluster_words(self.sources, self.exclude)

    @cached_property
    def cluster_roots(self) -> ClusterRoots:
        """The folders whose Terraform or eksctl creates a cluster (lint/inputs/terraform_clusters.py)."""
        return cluster_roots(self.sources, self.exclude)

    def may_walk_knative(self) -> bool:
        """Some source may hold an object the flags gate: reading ``knative_flags`` may walk a work tree."""
        return any(mentions(source, GATED) for source in self.sources)

    def may_walk_clusters(self) -> bool:
        """Some source may hold a GPU pod: reading ``clusters`` may walk a work tree."""
        return any(mentions(source, GPU_WORDS) for source in self.sources)
