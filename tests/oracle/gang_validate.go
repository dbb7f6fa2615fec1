package main

import (
	"encoding/json"

	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	"k8s.io/kubernetes/pkg/registry/scheduling/compositepodgroup"
	"k8s.io/kubernetes/pkg/registry/scheduling/podgroup"
	"k8s.io/kubernetes/pkg/registry/scheduling/workload"
)

type gangValidateCase struct {
	Object json.RawMessage `json:"object"`
}

// gangKinds: the scheduling.k8s.io kinds the family creates, their resource and create strategy
// (pkg/registry/scheduling/*/strategy.go; the storage serves them when GenericWorkload is on; all three
// are namespaced).
var gangKinds = map[string]createKind{
	"Workload":          {"workloads", workload.Strategy},
	"PodGroup":          {"podgroups", podgroup.NewStrategy()},
	"CompositePodGroup": {"compositepodgroups", compositepodgroup.NewStrategy()},
}

// answerGangValidate creates a scheduling.k8s.io Workload, PodGroup or CompositePodGroup as the API
// server does (answerCreate: the strategy's Validate is the handwritten validation).
func answerGangValidate(_ map[string]bool, body json.RawMessage) (any, error) {
	var c gangValidateCase
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, err
	}
	return answerCreate(c.Object, "scheduling.k8s.io", "gang", func(kind string) (createKind, bool) {
		found, ok := gangKinds[kind]
		return found, ok
	})
}
