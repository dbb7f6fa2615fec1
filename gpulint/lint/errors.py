"""Usage errors the entry points catch, defined apart from the machinery that raises them.

Catching one must not import that machinery: ``gpulint check pod.yaml`` names PolicyError and
ToolError (and BaselineError) in its ``except`` clauses, but loads no policy (and its CEL engine) and runs no renderer
unless the run asks for them. Each is re-exported where it is raised.
"""


class PolicyError(Exception):
    """Policies that cannot be loaded: a usage error (exit 2) listing file:line:col problems."""


class ToolError(Exception):
    """An explicit --helm/--kustomize/--kubectl that is no executable: a usage error."""


class BaselineError(Exception):
    """A baseline that cannot be read or is not a gpulint baseline: a usage error (exit 2)."""


class InventoryError(Exception):
    """The inventory cannot be read: a usage error (exit 2) with file:line:col."""
