"""Causes of false findings met on set S of held-out public repositories (docs/precision.md, "Set S"), each
with a failing, a clean and a trap case written the way those repositories write them (no file of theirs
is copied)."""

from __future__ import annotations

import pytest
from conftest import check_serious
from support.trees import write_tree

# ------------------------------------ e2e flavours a script builds unrestricted, named through $1 and xargs' {}

# A Cluster API provider's e2e data: each flavour folder takes a file of a shared folder beside it (outside its own
# root), and hack/gen-test-flavors.sh, run by the Makefile with the sub-folder as its argument, builds each with
# kustomize's load restrictor off through xargs.
FLAVOURS = {
    "test/e2e/data/infra/classic/kustomize_sources/addons/cni.yaml": """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: cni
        """,
    "test/e2e/data/infra/classic/kustomize_sources/base/cm.yaml": """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: settings
        """,
    "test/e2e/data/infra/classic/kustomize_sources/base/kustomization.yaml": "resources:\n- cm.yaml\n",
    "test/e2e/data/infra/classic/kustomize_sources/gpu/kustomization.yaml": """
        resources:
        - ../base
        - ../addons/cni.yaml
        """,
}
GEN_TEST_FLAVOURS = """
    #!/usr/bin/env bash
    set -o errexit
    root=$(dirname "${BASH_SOURCE[0]}")/..
    kustomize="${root}/hack/tools/bin/kustomize"
    test_dir_path="test/e2e/data/infra"
    sub_dir_path=$1
    test_dir="${root}/${test_dir_path}/${sub_dir_path}"
    src_dir="${test_dir}/kustomize_sources/"
    generated_dir="${test_dir}/generated"

    find "${src_dir}"* -maxdepth 1 -type d \\
      -print0 | xargs -0 -I {} basename {} | grep -vx -E '(addons|base)' | xargs -t -I {} ${kustomize} build --load-restrictor LoadRestrictionsNone --reorder none ${src_dir}{} -o ${generated_dir}/cluster-template-{}.yaml
    """
GPU_FLAVOUR = "test/e2e/data/infra/classic/kustomize_sources/gpu/kustomization.yaml"


def _overlays(found: list[tuple]) -> list[tuple[str, str]]:
    return [(path, severity) for path, _, rule, severity in found if rule == "not-rendered"]


def test_flavours_a_script_builds_through_its_argument_and_xargs_are_not_checked(repo, render_tools):
    write_tree(repo, {**FLAVOURS, "hack/gen-test-flavors.sh": GEN_TEST_FLAVOURS})
    found = check_serious(
        ".", "--kubectl", render_tools["kubectl"], fields=("path", "line", "rule", "severity", "said")
    )
    assert [(path, severity) for path, _, rule, severity, _ in found if rule == "not-rendered"] == [
        (GPU_FLAVOUR, "warning")
    ], found
    assert "hack/gen-test-flavors.sh builds it with --load-restrictor=LoadRestrictionsNone" in found[0][4]


@pytest.mark.parametrize(
    "script",
    [
        # the restrictor left on
        GEN_TEST_FLAVOURS.replace("--load-restrictor LoadRestrictionsNone ", ""),
        # the script's folders are others: its argument cannot make them this one
        GEN_TEST_FLAVOURS.replace('test_dir_path="test/e2e/data/infra"', 'test_dir_path="templates/flavors"'),
        # xargs builds what it is given, but the build names a folder of its own, not the input
        GEN_TEST_FLAVOURS.replace("${src_dir}{} -o", "${src_dir}default -o"),
    ],
)
def test_a_script_that_does_not_build_the_flavour_unrestricted_leaves_it_an_error(repo, render_tools, script):
    write_tree(repo, {**FLAVOURS, "hack/gen-test-flavors.sh": script})
    found = check_serious(".", "--kubectl", render_tools["kubectl"], fields=("path", "line", "rule", "severity"))
    assert _overlays(found) == [(GPU_FLAVOUR, "error")], found


# ------------------------------------------------------- an overlay's resource a Go test helper writes into it

# A Go test helper fills in the overlay's resource, then builds it (os.WriteFile into the overlay's folder).
HELPER_OVERLAY = {
    "test/helpers/versions/data/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources:
        - ci-artifacts-source-template.yaml
        """,
}
TEMPLATE_GO = """
    package versions

    func GenerateTemplate(overlayDir string, input Input) (string, error) {
    \tif err := os.WriteFile(path.Join(overlayDir, "ci-artifacts-source-template.yaml"), input.SourceTemplate, 0o600); err != nil {
    \t\treturn "", err
    \t}
    \treturn build(overlayDir)
    }
    """
HELPER = "test/helpers/versions/data/kustomization.yaml"


def test_an_overlay_whose_resource_a_go_helper_writes_is_not_checked(repo, render_tools):
    write_tree(repo, {**HELPER_OVERLAY, "test/helpers/versions/template.go": TEMPLATE_GO})
    found = check_serious(".", "--kubectl", render_tools["kubectl"], fields=("path", "rule", "severity", "said"))
    assert [(path, rule, severity) for path, rule, severity, _ in found] == [(HELPER, "not-rendered", "warning")]
    assert "test/helpers/versions/template.go writes it" in found[0][3]


@pytest.mark.parametrize(
    "go",
    [
        # the helper reads the file, it does not write it
        TEMPLATE_GO.replace("os.WriteFile(path.Join(overlayDir, ", "os.ReadFile(path.Join(overlayDir, ").replace(
            ", input.SourceTemplate, 0o600)", ")"
        ),
        # it writes another file whose name ends the same way
        TEMPLATE_GO.replace('"ci-artifacts-source-template.yaml"', '"my-ci-artifacts-source-template.yaml"'),
    ],
)
def test_a_go_file_that_does_not_write_the_resource_leaves_the_overlay_an_error(repo, render_tools, go):
    write_tree(repo, {**HELPER_OVERLAY, "test/helpers/versions/template.go": go})
    found = check_serious(".", "--kubectl", render_tools["kubectl"], fields=("path", "rule", "severity"))
    assert found == [(HELPER, "not-rendered", "error")]


# --------------------------------------------------- an annotation key that is an envsubst expression to expand

# A provider's RBAC, expanded by clusterctl's envsubst (drone/envsubst): a prefix substitution writes the IRSA
# annotation when the role is set, nothing when it is not. YAML reads the expression's `}` into the value.
SERVICE_ACCOUNT = """
apiVersion: v1
kind: ServiceAccount
metadata:
  name: controller-manager
  namespace: system
  annotations:
    # prefix substitution of drone/envsubst, as clusterctl expands it
    ${CONTROLLER_IAM_ROLE/#arn/eks.amazonaws.com/role-arn: arn}
"""


def _with_key(key: str) -> str:
    return SERVICE_ACCOUNT.replace("${CONTROLLER_IAM_ROLE/#arn/eks.amazonaws.com/role-arn: arn}", key)


@pytest.mark.parametrize(
    "key",
    [
        "${CONTROLLER_IAM_ROLE/#arn/eks.amazonaws.com/role-arn: arn}",
        "${ANNOTATION_PREFIX}/role-arn: arn",
        "${ROLE_KEY:=eks.amazonaws.com/role-arn}: arn",
    ],
)
def test_an_annotation_key_to_be_expanded_is_not_refused(repo, key):
    write_tree(repo, {"config/rbac/service_account.yaml": _with_key(key)})
    assert check_serious("config") == []


# a key with a space, and a brace no envsubst expands (a space in the name)
@pytest.mark.parametrize("key", ["eks.amazonaws.com/role arn: x", "${role arn}/x: y"])
def test_an_annotation_key_the_api_server_refuses_stays_an_error(repo, key):
    write_tree(repo, {"config/rbac/service_account.yaml": _with_key(key)})
    found = check_serious("config", fields=("path", "rule", "severity"))
    assert found == [("config/rbac/service_account.yaml", "api-rejected", "error")], found


def test_of_a_line_that_builds_twice_the_unrestricted_build_names_the_flavour(repo, render_tools):
    script = """
        #!/usr/bin/env bash
        src_dir="test/e2e/data/infra/$1/kustomize_sources/"
        docker build -t e2e:dev . && ${KUSTOMIZE} build --load-restrictor LoadRestrictionsNone "${src_dir}gpu" > out.yaml
        """
    write_tree(repo, {**FLAVOURS, "hack/gen-test-flavors.sh": script})
    found = check_serious(".", "--kubectl", render_tools["kubectl"], fields=("path", "line", "rule", "severity"))
    assert _overlays(found) == [(GPU_FLAVOUR, "warning")], found
