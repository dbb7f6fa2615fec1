package main

import (
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	podregistry "k8s.io/kubernetes/pkg/registry/core/pod"
)

type validateCase struct {
	Pod v1.Pod `json:"pod"`
}

type fieldError struct {
	Type     string `json:"type"`
	Field    string `json:"field"`
	Detail   string `json:"detail"`
	BadValue string `json:"bad_value"`
}

// answerValidate creates a Pod as the API server's pod registry does: defaulting of the v1 object,
// conversion to the internal type, the strategy's PrepareForCreate (it drops fields of disabled
// gates) and Validate (pkg/apis/core/validation.ValidatePodCreate).
func answerValidate(_ map[string]bool, body json.RawMessage) (any, error) {
	var c validateCase
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, err
	}
	external := c.Pod.DeepCopy()
	legacyscheme.Scheme.Default(external)
	var pod api.Pod
	if err := legacyscheme.Scheme.Convert(external, &pod, nil); err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	ctx := genericapirequest.WithNamespace(context.Background(), pod.Namespace)
	podregistry.Strategy.PrepareForCreate(ctx, &pod)
	errs := podregistry.Strategy.Validate(ctx, &pod)
	out := []fieldError{}
	for _, e := range errs {
		out = append(out, fieldError{Type: string(e.Type), Field: e.Field, Detail: e.Detail, BadValue: fmt.Sprint(e.BadValue)})
	}
	return map[string]any{"errors": out}, nil
}
