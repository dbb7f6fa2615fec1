"""Secondary networks (issue #29 sections 4 and 5): a Multus network resolves in the namespace Multus reads, and a
NetworkAttachmentDefinition that names a device-plugin resource needs that resource requested. Shaped like the
NVIDIA Network Operator's SR-IOV examples (an SriovNetwork's NetworkAttachmentDefinition with resourceName) and an
NCCL test pod."""

from __future__ import annotations

from conftest import by_rule, lint_text

from gpulint.kube.networks import NetworkSelection, pod_networks
from gpulint.lint.config import Config
from gpulint.lint.findings import Severity

RULE = "network-reference-invalid"

NAD = """\
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: NAME
  namespace: NADNS
  annotations:
    k8s.v1.cni.cncf.io/resourceName: nvidia.com/rdma_vf_a
spec:
  config: '{"cniVersion":"0.3.1","name":"NAME","type":"sriov","vlan":0,"ipam":{"type":"whereabouts","range":"192.168.2.0/24"}}'
"""

WORKERS = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: nccl-workers
  namespace: training
spec:
  serviceName: nccl-workers
  replicas: 2
  selector:
    matchLabels: {app: nccl-workers}
  template:
    metadata:
      labels: {app: nccl-workers}
      annotations:
        k8s.v1.cni.cncf.io/networks: NETWORKS
    spec:
      containers:
      - name: worker
        image: nvcr.io/nvidia/pytorch:24.05-py3
        securityContext:
          capabilities: {add: [IPC_LOCK]}
        resources:
          limits:
            nvidia.com/gpu: 8
VFS"""


def _found(networks: str, vfs: int | None, nads: tuple[tuple[str, str], ...] = (("rdma-net-a", "training"),), **config):
    docs = [NAD.replace("NAME", name).replace("NADNS", ns) for name, ns in nads]
    vf_line = f"            nvidia.com/rdma_vf_a: {vfs}\n" if vfs is not None else ""
    docs.append(WORKERS.replace("NETWORKS", networks).replace("VFS", vf_line))
    return by_rule(lint_text("---\n".join(docs), "nccl.yaml", Config(**config)), RULE)


def test_a_network_whose_resource_the_pod_does_not_request():
    (finding,) = _found("rdma-net-a", None)
    assert finding.severity == Severity.WARNING
    assert finding.message == (
        "the pod joins 'rdma-net-a', whose NetworkAttachmentDefinition names the device-plugin resource "
        "nvidia.com/rdma_vf_a, but its containers request 0 of it"
    )
    (two,) = _found("rdma-net-a@net1, rdma-net-a@net2", 1)  # one VF per interface
    assert "request 1 of it" in two.message and "2 needed" in two.notes[0]
    assert _found("rdma-net-a", 1) == []
    assert _found('[{"name": "rdma-net-a", "interface": "net1"}]', 1) == []


def test_a_network_of_another_namespace_is_no_match():
    nads = (("rdma-net-a", "network-operator"),)
    (finding,) = _found("rdma-net-a", 1, nads, complete={"NetworkAttachmentDefinition": ("*",)})
    assert finding.severity == Severity.ERROR
    assert finding.message == (
        "NetworkAttachmentDefinition 'rdma-net-a' is only in namespace network-operator, not in the pod's namespace "
        "training"
    )
    assert (
        "Multus: cannot find a network-attachment-definition (rdma-net-a) in namespace (training)" in (finding.notes[0])
    )
    (info,) = _found("rdma-net-a", 1, nads)
    assert info.severity == Severity.INFO
    # written with its namespace, it is found
    assert _found("network-operator/rdma-net-a", 1, nads, complete={"NetworkAttachmentDefinition": ("*",)}) == []


def test_a_network_found_nowhere_is_said_only_from_a_complete_catalog():
    assert _found("rdma-net-b", 1) == []
    (finding,) = _found("rdma-net-b", 1, complete={"NetworkAttachmentDefinition": ("*",)})
    assert finding.message.startswith(
        "Multus cannot find a network-attachment-definition (rdma-net-b) in namespace (training)"
    )


def test_trap_the_network_resources_injector_adds_the_requests():
    injector = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: network-resources-injector, namespace: kube-system}\n"
        "spec:\n  selector: {matchLabels: {app: nri}}\n  template:\n    metadata: {labels: {app: nri}}\n    spec:\n"
        "      containers:\n      - name: webhook\n"
        "        image: ghcr.io/k8snetworkplumbingwg/network-resources-injector:v1.6.0\n---\n"
    )
    docs = NAD.replace("NAME", "rdma-net-a").replace("NADNS", "training") + "---\n"
    docs += WORKERS.replace("NETWORKS", "rdma-net-a").replace("VFS", "")
    assert by_rule(lint_text(injector + docs, "nccl.yaml", Config()), RULE) == []


def test_the_annotation_is_parsed_as_multus_parses_it():
    assert pod_networks("ns1/net-a@eth1, net-b") == [NetworkSelection("net-a", "ns1"), NetworkSelection("net-b", "")]
    assert pod_networks('[{"name": "net-a", "namespace": "ns1"}]') == [NetworkSelection("net-a", "ns1")]
    assert pod_networks("a/b/c") is None  # Multus: Invalid network object (failed at '/')
    assert pod_networks("Net_A") is None  # not a DNS-1123 label
    assert pod_networks('[{"name": "net-a"') is None
