package main

import (
	"encoding/json"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
)

type gateDefaultsCase struct {
	Names []string `json:"names"`
}

type gateDefault struct {
	Known      bool   `json:"known"`
	Default    bool   `json:"default"`
	PreRelease string `json:"prerelease"`
}

// answerGateDefaults tells each gate's default and stage in this release (the process' gates: the
// API server's, the scheduler's and the kubelet's are registered in one table).
func answerGateDefaults(_ map[string]bool, body json.RawMessage) (any, error) {
	var c gateDefaultsCase
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, err
	}
	known := utilfeature.DefaultMutableFeatureGate.GetAll()
	out := map[string]gateDefault{}
	for _, name := range c.Names {
		spec, ok := known[featuregate.Feature(name)]
		out[name] = gateDefault{Known: ok, Default: spec.Default, PreRelease: string(spec.PreRelease)}
	}
	return out, nil
}
