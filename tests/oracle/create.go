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
)

// createKind: a kind a create family creates, its resource and its registry's create strategy.
type createKind struct {
	resource string
	strategy rest.RESTCreateStrategy
}

// the API server's JSON decoding of a request body (case-sensitive; unknown fields are the field
// validation's business: dropped here, as with fieldValidation=Warn)
var requestDecoder = serializerjson.NewSerializerWithOptions(
	serializerjson.DefaultMetaFactory, legacyscheme.Scheme, legacyscheme.Scheme, serializerjson.SerializerOptions{},
)

// answerCreate creates an object of group as the API server does: decode the body into its version's
// type (a type error is a 400), default it, convert it to the internal type, then the strategy's
// PrepareForCreate (status reset, fields of disabled gates dropped) and rest.ValidateCreate (the strategy's
// Validate, object meta, then the declarative validation of the request's version). kindOf names the
// family's kinds; what words a kind it does not create.
func answerCreate(object json.RawMessage, group, what string, kindOf func(kind string) (createKind, bool)) (any, error) {
	obj, gvk, err := requestDecoder.Decode(object, nil, nil)
	if err != nil {
		return map[string]any{"decode_error": err.Error(), "errors": []fieldError{}}, nil
	}
	kind, ok := kindOf(gvk.Kind)
	if !ok || gvk.Group != group {
		return nil, fmt.Errorf("not a %s kind: %s", what, gvk)
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
	_ = json.Unmarshal(object, &meta)
	namespace := ""
	if kind.strategy.NamespaceScoped() {
		namespace = meta.Metadata.Namespace
	}
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
