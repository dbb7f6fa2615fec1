package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
	"k8s.io/utils/ptr"
)

// A pod with ResourceClaims on a snapshot of nodes, ResourceSlices, DeviceClasses and claims (claims
// made from templates arrive made, named and owned as the resourceclaim controller makes them).
type draAllocateCase struct {
	Pod     v1.Pod                        `json:"pod"`
	Nodes   []v1.Node                     `json:"nodes"`
	Slices  []resourceapi.ResourceSlice   `json:"slices"`
	Classes []resourceapi.DeviceClass     `json:"classes"`
	Claims  []resourceapi.ResourceClaim   `json:"claims"`
	Rules   []resourceapi.DeviceTaintRule `json:"taintRules"`
}

type draAllocateAnswer struct {
	scheduleAnswer
	// the first feasible node (in the snapshot's order) and, per pod claim, the devices the
	// DynamicResources plugin's Reserve allocates there ("driver/pool/device")
	Node    string              `json:"node"`
	Devices map[string][]string `json:"devices"`
	// per pod claim, the number of devices each request got ("req-0", or "req-0/sub-1" for a subrequest)
	Requests map[string]map[string]int `json:"requests"`
	// a filter's error status, which fails the whole scheduling attempt
	Error string `json:"error,omitempty"`
}

// The scheduler's DynamicResources plugin, set up as the scheduler sets it up (pkg/scheduler/scheduler.go:
// the resource slice tracker, the claims' assume cache, the DRA manager and, with DRAExtendedResource, its
// extended resource cache fed by the DeviceClass informer), placed in the default profile after the other
// filters (pkg/scheduler/apis/config/v1/default_plugins.go inserts it before DefaultPreemption).
func answerDRAAllocate(_ map[string]bool, body json.RawMessage) (any, error) {
	var c draAllocateCase
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // the early returns too: the tracker's goroutines end with the context
	pod := c.Pod.DeepCopy()
	legacyscheme.Scheme.Default(pod)
	if pod.UID == "" {
		pod.UID = types.UID("pod-" + pod.Name)
	}
	nodes := make([]*v1.Node, len(c.Nodes))
	for i := range c.Nodes {
		nodes[i] = c.Nodes[i].DeepCopy()
		legacyscheme.Scheme.Default(nodes[i])
	}
	var objects []runtime.Object
	claimUIDs := map[string]types.UID{}
	for i := range c.Claims {
		claim := c.Claims[i].DeepCopy()
		legacyscheme.Scheme.Default(claim)
		if claim.UID == "" {
			claim.UID = types.UID(fmt.Sprintf("claim-%d-%s", i, claim.Name))
		}
		claimUIDs[claim.Namespace+"/"+claim.Name] = claim.UID
		objects = append(objects, claim)
	}
	for i := range c.Classes {
		class := c.Classes[i].DeepCopy()
		legacyscheme.Scheme.Default(class)
		objects = append(objects, class)
	}
	for i := range c.Slices {
		slice := c.Slices[i].DeepCopy()
		legacyscheme.Scheme.Default(slice)
		objects = append(objects, slice)
	}
	for i := range c.Rules {
		objects = append(objects, c.Rules[i].DeepCopy())
	}
	client := fake.NewSimpleClientset(objects...)
	informerFactory := informers.NewSharedInformerFactory(client, 0)
	tracker, err := resourceslicetracker.StartTracker(ctx, resourceslicetracker.Options{
		EnableDeviceTaintRules: utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules),
		SliceInformer:          informerFactory.Resource().V1().ResourceSlices(),
		TaintInformer:          informerFactory.Resource().V1().DeviceTaintRules(),
		KubeClient:             client,
	})
	if err != nil {
		return nil, fmt.Errorf("resource slice tracker: %w", err)
	}
	doneCheckers := []cache.DoneChecker{tracker.HasSyncedChecker()}
	claimsCache := assumecache.NewAssumeCache(klog.FromContext(ctx), informerFactory.Resource().V1().ResourceClaims().Informer(), "resource claim", "", nil)
	doneCheckers = append(doneCheckers, claimsCache.AddEventHandler(cache.ResourceEventHandlerFuncs{}).HasSyncedChecker())
	draManager := dynamicresources.NewDRAManager(ctx, claimsCache, tracker, informerFactory)
	fts := plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
	if fts.EnableDRAExtendedResource {
		resolver := draManager.DeviceClassResolver().(*extendedresourcecache.ExtendedResourceCache)
		registration, err := informerFactory.Resource().V1().DeviceClasses().Informer().AddEventHandler(resolver)
		if err != nil {
			return nil, err
		}
		doneCheckers = append(doneCheckers, registration.HasSyncedChecker())
	}
	snapshot := schedcache.NewSnapshot(nil, nodes)
	// no filter timeout (the default is 10s): a loaded test machine must not turn a verdict into a timeout
	draArgs := &config.DynamicResourcesArgs{FilterTimeout: &metav1.Duration{}}
	// the scheduler's defaulting sets a binding timeout only with the binding conditions' gates on, and the
	// plugin refuses one without them (pkg/scheduler/apis/config/v1/defaults.go, validation_pluginargs.go)
	if fts.EnableDRADeviceBindingConditions && fts.EnableDRAResourceClaimDeviceStatus {
		draArgs.BindingTimeout = &metav1.Duration{Duration: config.DynamicResourcesBindingTimeoutDefault}
	}
	newDRA := func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return dynamicresources.New(ctx, draArgs, h, fts)
	}
	plugins := append(filterPlugins(fts), tf.RegisterPluginAsExtensions(dynamicresources.Name, newDRA, "PreFilter", "Filter", "Reserve"))
	schedFramework, err := tf.NewFramework(ctx, plugins, "default-scheduler",
		frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(informerFactory),
		frameworkruntime.WithEventRecorder(&events.FakeRecorder{}),
		frameworkruntime.WithSharedDRAManager(draManager))
	if err != nil {
		return nil, fmt.Errorf("framework: %w", err)
	}
	informerFactory.Start(ctx.Done())
	// the informers stop when the context ends: cancel first, then wait for them
	defer func() { cancel(); informerFactory.Shutdown() }()
	informerFactory.WaitForCacheSync(ctx.Done())
	syncCtx, syncCancel := context.WithTimeout(ctx, 30*time.Second)
	defer syncCancel()
	if !cache.WaitFor(syncCtx, "event handlers", doneCheckers...) {
		return nil, fmt.Errorf("informers did not sync")
	}
	answer, state, err := findNodesThatFitState(ctx, schedFramework, snapshot, pod)
	if err != nil {
		// a plugin's Error (a CEL runtime error in a selector): the scheduling attempt fails, the pod stays
		// Pending and is retried (schedule_one.go handleSchedulingFailure)
		return &draAllocateAnswer{Error: err.Error()}, nil
	}
	result := &draAllocateAnswer{scheduleAnswer: *answer, Devices: map[string][]string{}, Requests: map[string]map[string]int{}}
	if answer.Summary != "" {
		return result, nil
	}
	for _, node := range nodes {
		if reasons := answer.Nodes[node.Name]; reasons != nil && len(reasons) == 0 {
			result.Node = node.Name
			break
		}
	}
	if status := schedFramework.RunReservePluginsReserve(ctx, state, pod, result.Node); !status.IsSuccess() {
		return nil, fmt.Errorf("reserve on %s: %w", result.Node, status.AsError())
	}
	for _, podClaim := range pod.Spec.ResourceClaims {
		name := ptr.Deref(podClaim.ResourceClaimName, "")
		for _, status := range pod.Status.ResourceClaimStatuses {
			if status.Name == podClaim.Name {
				name = ptr.Deref(status.ResourceClaimName, "")
			}
		}
		devices := []string{}
		counts := map[string]int{}
		if allocation := draManager.ResourceClaims().GetPendingAllocation(claimUIDs[pod.Namespace+"/"+name]); allocation != nil {
			for _, r := range allocation.Devices.Results {
				devices = append(devices, r.Driver+"/"+r.Pool+"/"+r.Device)
				counts[r.Request]++
			}
		}
		result.Requests[podClaim.Name] = counts
		sort.Strings(devices)
		result.Devices[podClaim.Name] = devices
	}
	return result, nil
}
