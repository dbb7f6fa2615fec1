"""Node pools: the nodes an autoscaled cluster can add (Karpenter, Cluster Autoscaler, managed pools)."""
