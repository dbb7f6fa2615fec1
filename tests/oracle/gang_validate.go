package main

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	serializerjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	"k8s.io/kubernetes/pkg/registry/scheduling/compositepodgroup"
	"k8s.io/kubernetes/pkg/registry/scheduling/podgroup"
	"k8s.io/kubernetes/pkg/registry/scheduling/workload"
)

type gangValidateCase struct {
	Object json.RawMessage `json:"object"`
}

// gangKinds: the scheduling.k8s.io kinds the family creates, their resource and create strategy
// (pkg/registry/scheduling/*/strategy.go; the storage serves them when GenericWorkload is on).
var gangKinds = map[string]struct {
	resource string
	strategy rest.RESTCreateStrategy
}{
	"Workload":          {"workloads", workload.Strategy},
	"PodGroup":          {"podgroups", podgroup.NewStrategy()},
	"CompositePodGroup": {"compositepodgroups", compositepodgroup.NewStrategy()},
}

// the API server's JSON decoding of a request body (case-sensitive; unknown fields are the field
// validation's business: dropped here, as with fieldValidation=Warn)
var gangDecoder = serializerjson.NewSerializerWithOptions(
	serializerjson.DefaultMetaFactory, legacyscheme.Scheme, legacyscheme.Scheme, serializerjson.SerializerOptions{},
)

// answerGangValidate creates a scheduling.k8s.io Workload, PodGroup or CompositePodGroup as the API
// server does: decode the body into its version's type (a type error is a 400), default it, convert
// it to the internal type, then the strategy's PrepareForCreate (status reset, fields of disabled gates
// dropped) and rest.ValidateCreate (handwritten validation, object meta, declarative validation of
// the request's version).
func answerGangValidate(_ map[string]bool, body json.RawMessage) (any, error) {
	var c gangValidateCase
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, err
	}
	obj, gvk, err := gangDecoder.Decode(c.Object, nil, nil)
	if err != nil {
		return map[string]any{"decode_error": err.Error(), "errors": []fieldError{}}, nil
	}
	kind, ok := gangKinds[gvk.Kind]
	if !ok || gvk.Group != "scheduling.k8s.io" {
		return nil, fmt.Errorf("not a gang kind: %s", gvk)
	}
	legacyscheme.Scheme.Default(obj)
	internal, err := legacyscheme.Scheme.ConvertToVersion(obj, schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal})
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	var meta struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(c.Object, &meta)
	namespace := meta.Metadata.Namespace
	ctx := genericapirequest.WithNamespace(context.Background(), namespace)
	ctx = genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true, Verb: "create", APIPrefix: "apis", APIGroup: gvk.Group, APIVersion: gvk.Version,
		Namespace: namespace, Resource: kind.resource, Name: meta.Metadata.Name,
	})
	kind.strategy.PrepareForCreate(ctx, internal)
	errs := rest.ValidateCreate(ctx, internal, kind.strategy)
	out := []fieldError{}
	for _, e := range errs {
		out = append(out, fieldError{Type: e.Type.String(), Field: e.Field, Detail: e.Detail, BadValue: fmt.Sprint(e.BadValue)})
	}
	return map[string]any{"errors": out}, nil
}
