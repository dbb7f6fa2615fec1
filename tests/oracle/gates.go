package main

import (
	"sort"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
)

// changed holds the gates the previous case set: they go back to their defaults before the next case.
var changed []string

// setGates puts the process' feature gates (the ones the scheduler, validation and CEL read) at
// their release defaults, then sets the case's.
func setGates(gates map[string]bool) error {
	known := utilfeature.DefaultMutableFeatureGate.GetAll()
	reset := map[string]bool{}
	for _, name := range changed {
		reset[name] = known[featuregate.Feature(name)].Default
	}
	if len(reset) > 0 {
		if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(reset); err != nil {
			return err
		}
	}
	changed = changed[:0]
	if len(gates) == 0 {
		return nil
	}
	for name := range gates {
		changed = append(changed, name)
	}
	sort.Strings(changed)
	return utilfeature.DefaultMutableFeatureGate.SetFromMap(gates)
}
