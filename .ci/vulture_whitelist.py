# Names vulture (.ci/run) takes as unused that are used: called by a framework by name, read by a library as
# an option, or data a record keeps for its readers. Anything else it reports is dead code to delete.
# Syntax: vulture's own (`_.name` for an attribute, a bare name for a function or variable).
# ruff: noqa
from gpulint.cli import main
from gpulint.webhook import server

# click commands, registered by decorator
main.list_rules, main.show_rule, main.inventory_command, main.explain_command, main.serve_command

# http.server / socketserver callbacks and class options, called or read by the stdlib by name
_.log_message, _.handle_one_request, _.handle_expect_100, _.readinto
_.do_GET  # tests/support/fake_apiserver.py
_.get_request, _.verify_request, _.handle_error
server_version, daemon_threads, block_on_close, request_queue_size
_.api_key, _.api_key_prefix  # the kubernetes client's Configuration (tests/support/fake_apiserver.py)

# PyYAML's resolver hooks, overridden to do nothing (gpulint/lint/inputs/loader.py)
_.descend_resolver, _.ascend_resolver, current_node, current_index

# google-re2 options, read by the library
_.log_errors, _.never_capture

# pytest: module marks, autouse fixtures and hooks, found by name
pytestmark, _fresh_policy_worker, pytest_xdist_make_scheduler

# called by name: scripts/fuzz_atheris.py's targets (getattr f"_{target}"), bench.py in a child interpreter
_._admission, _._http, _._fix, peak_memory

# records whose fields are the source's data, kept for explain and for the readers to come
hot_cost  # kube/cel/cost.py Estimate: the cost of the hottest part, beside its offset
extended_resource  # kube/dra/gates.py: one switch a DRA feature gate
gpu_model, gpu_memory, startup_taints, filtered_out  # kube/pools/model.py: what a catalog row or pool says
NOT_FOUND  # kube/validation/errors.py: Kubernetes' field.ErrorType table, whole
