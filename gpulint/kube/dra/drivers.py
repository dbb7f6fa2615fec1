"""DeviceClasses that DRA drivers install with their Helm charts (a claim may name them before the
cluster inventory lists them). Each entry was read in the driver's chart at the commit given."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DriverClasses:
    driver: str  # the project, as users know it
    source: str  # repository, chart path and commit the names were read at
    classes: tuple[str, ...]


DRIVER_CLASSES = (
    DriverClasses(
        "NVIDIA DRA driver for GPUs",
        "NVIDIA/k8s-dra-driver-gpu deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-*.yaml @22407113",
        (
            "gpu.nvidia.com",
            "mig.nvidia.com",
            "vfio.gpu.nvidia.com",
            "compute-domain-daemon.nvidia.com",
            "compute-domain-default-channel.nvidia.com",
        ),
    ),
    DriverClasses(
        "Intel resource drivers",
        "intel/intel-resource-drivers-for-kubernetes charts/intel-{gpu,gaudi,qat}-resource-driver/templates/"
        "device-class.yaml @1da939fa",
        ("gpu.intel.com", "gpu-vfio.intel.com", "gaudi.intel.com", "qat.intel.com"),
    ),
    DriverClasses(
        "AMD GPU DRA driver",
        "ROCm/k8s-gpu-dra-driver helm-charts-k8s/templates/deviceclass.yaml @26224272",
        ("gpu.amd.com",),
    ),
    DriverClasses(
        "dra-example-driver",
        "kubernetes-sigs/dra-example-driver deployments/helm/dra-example-driver/templates/deviceclass.yaml "
        "(<deviceProfile>.example.com; profiles gpu, cpu, net in internal/profiles/) @31914cea",
        ("gpu.example.com", "cpu.example.com", "net.example.com"),
    ),
)

WELL_KNOWN_CLASSES: dict[str, str] = {name: entry.driver for entry in DRIVER_CLASSES for name in entry.classes}
