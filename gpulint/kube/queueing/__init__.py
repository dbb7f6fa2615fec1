"""The admission layer: what decides whether a workload may start before the scheduler sees it -
Kueue's queues, flavors and quota (kueue), the Workloads Kueue makes of each kind (workload) and
its flavor assignment (assign)."""
