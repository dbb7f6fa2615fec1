package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install" // the API server's defaulting of v1 objects
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeaffinity"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodename"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeunschedulable"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/tainttoleration"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"
)

// the framework records plugin metrics, as the scheduler registers them at start
func init() { metrics.Register() }

type scheduleCase struct {
	Pod   v1.Pod    `json:"pod"`
	Nodes []v1.Node `json:"nodes"`
}

type scheduleAnswer struct {
	// node name -> the reasons the scheduler records for it (empty: it passes every filter)
	Nodes map[string][]string `json:"nodes"`
	// FitError.Error() when no node passes, else ""
	Summary string `json:"summary"`
}

// The default profile's filters that gpulint models, in the default profile's order
// (pkg/scheduler/apis/config/v1/default_plugins.go).
func filterPlugins(fts plfeature.Features) []tf.RegisterPluginFunc {
	adapt := func(args runtime.Object, New func(context.Context, runtime.Object, fwk.Handle, plfeature.Features) (fwk.Plugin, error)) frameworkruntime.PluginFactory {
		return func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			return New(ctx, args, h, fts)
		}
	}
	fitArgs := &config.NodeResourcesFitArgs{ScoringStrategy: &config.ScoringStrategy{
		Type:      config.LeastAllocated,
		Resources: []config.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}},
	}}
	both := []string{"PreFilter", "Filter"}
	return []tf.RegisterPluginFunc{
		tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
		tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
		tf.RegisterPluginAsExtensions(nodename.Name, adapt(nil, nodename.New), both...),
		tf.RegisterPluginAsExtensions(nodeunschedulable.Name, adapt(nil, nodeunschedulable.New), both...),
		tf.RegisterPluginAsExtensions(tainttoleration.Name, adapt(nil, tainttoleration.New), both...),
		tf.RegisterPluginAsExtensions(nodeaffinity.Name, adapt(&config.NodeAffinityArgs{}, nodeaffinity.New), both...),
		tf.RegisterPluginAsExtensions(noderesources.Name, adapt(fitArgs, noderesources.NewFit), both...),
	}
}

func answerSchedule(_ map[string]bool, body json.RawMessage) (any, error) {
	var c scheduleCase
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, err
	}
	// what the API server stores: defaulted objects (limits become requests, allocatable from capacity)
	pod := c.Pod.DeepCopy()
	legacyscheme.Scheme.Default(pod)
	nodes := make([]*v1.Node, len(c.Nodes))
	for i := range c.Nodes {
		nodes[i] = c.Nodes[i].DeepCopy()
		legacyscheme.Scheme.Default(nodes[i])
	}
	ctx := context.Background()
	fts := plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
	snapshot := cache.NewSnapshot(nil, nodes)
	schedFramework, err := tf.NewFramework(ctx, filterPlugins(fts), "default-scheduler",
		frameworkruntime.WithSnapshotSharedLister(snapshot))
	if err != nil {
		return nil, fmt.Errorf("framework: %w", err)
	}
	return findNodesThatFit(ctx, schedFramework, snapshot, pod)
}

// findNodesThatFit follows Scheduler.findNodesThatFitPod and findNodesThatPassFilters
// (pkg/scheduler/schedule_one.go), which are methods of the whole Scheduler: PreFilter, then the
// Filter plugins on each node (the framework stops at a node's first rejection), then FitError.
func findNodesThatFit(ctx context.Context, f framework.Framework, snapshot *cache.Snapshot, pod *v1.Pod) (*scheduleAnswer, error) {
	answer, _, err := findNodesThatFitState(ctx, f, snapshot, pod)
	return answer, err
}

// findNodesThatFitState is findNodesThatFit with the cycle state the plugins wrote (Reserve reads it).
func findNodesThatFitState(ctx context.Context, f framework.Framework, snapshot *cache.Snapshot, pod *v1.Pod) (*scheduleAnswer, fwk.CycleState, error) {
	allNodes, err := snapshot.NodeInfos().List()
	if err != nil {
		return nil, nil, err
	}
	answer := &scheduleAnswer{Nodes: map[string][]string{}}
	diagnosis := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}
	state := framework.NewCycleState()
	preRes, s, unscheduledPlugins := f.RunPreFilterPlugins(ctx, state, pod)
	diagnosis.UnschedulablePlugins = unscheduledPlugins
	if !s.IsSuccess() {
		if !s.IsRejected() {
			return nil, nil, s.AsError()
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(s)
		diagnosis.PreFilterMsg = s.Message()
		for _, node := range allNodes {
			answer.Nodes[node.Node().Name] = s.Reasons()
		}
		answer.Summary = (&framework.FitError{Pod: pod, NumAllNodes: len(allNodes), Diagnosis: diagnosis}).Error()
		return answer, state, nil
	}
	nodes := allNodes
	if !preRes.AllNodes() {
		nodes = nil
		for _, node := range allNodes {
			if preRes.NodeNames.Has(node.Node().Name) {
				nodes = append(nodes, node)
			} else {
				answer.Nodes[node.Node().Name] = []string{fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unscheduledPlugins))}
			}
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unscheduledPlugins))))
	}
	feasible := 0
	for _, node := range nodes {
		status := f.RunFilterPlugins(ctx, state, pod, node)
		if status.Code() == fwk.Error {
			return nil, nil, status.AsError()
		}
		if status.IsSuccess() {
			feasible++
			answer.Nodes[node.Node().Name] = []string{}
			continue
		}
		diagnosis.NodeToStatus.Set(node.Node().Name, status)
		diagnosis.AddPluginStatus(status)
		reasons := append([]string{}, status.Reasons()...)
		sort.Strings(reasons)
		answer.Nodes[node.Node().Name] = reasons
	}
	if feasible == 0 {
		answer.Summary = (&framework.FitError{Pod: pod, NumAllNodes: len(allNodes), Diagnosis: diagnosis}).Error()
	}
	return answer, state, nil
}
