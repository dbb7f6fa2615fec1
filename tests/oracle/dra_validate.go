package main

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	"k8s.io/kubernetes/pkg/registry/resource/deviceclass"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaim"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaimtemplate"
	"k8s.io/kubernetes/pkg/registry/resource/resourceslice"
)

type draValidateCase struct {
	Object json.RawMessage `json:"object"`
	// AdminNamespace: the claim's namespace carries resource.kubernetes.io/admin-access: "true"
	AdminNamespace bool `json:"admin_namespace"`
}

// namespaces answers the one Get the claim strategies make (AuthorizedForAdmin reads the namespace's
// labels); any other call panics, which the oracle reports as an oracle_error.
type namespaces struct {
	corev1client.NamespaceInterface
	admin bool
}

func (n namespaces) Get(_ context.Context, name string, _ metav1.GetOptions) (*corev1.Namespace, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if n.admin {
		ns.Labels = map[string]string{"resource.kubernetes.io/admin-access": "true"}
	}
	return ns, nil
}

// draStrategy: the resource.k8s.io kinds the family creates, their resource and create strategy
// (pkg/registry/resource/*/strategy.go).
func draStrategy(kind string, admin bool) (string, rest.RESTCreateStrategy, bool) {
	ns := namespaces{admin: admin}
	switch kind {
	case "ResourceClaim":
		return "resourceclaims", resourceclaim.NewStrategy(ns, nil), true
	case "ResourceClaimTemplate":
		return "resourceclaimtemplates", resourceclaimtemplate.NewStrategy(ns), true
	case "DeviceClass":
		return "deviceclasses", deviceclass.Strategy, true
	case "ResourceSlice":
		return "resourceslices", resourceslice.Strategy, true
	}
	return "", nil, false
}

// answerDRAValidate creates a ResourceClaim, ResourceClaimTemplate, DeviceClass or ResourceSlice as the
// API server does: decode the body into its version's type (a type error is a 400), default it, convert
// it to the internal type, then the strategy's PrepareForCreate (status reset, fields of disabled gates
// dropped) and rest.ValidateCreate (AuthorizedForAdmin and the handwritten validation, object meta, then
// the declarative validation of the request's version).
func answerDRAValidate(_ map[string]bool, body json.RawMessage) (any, error) {
	var c draValidateCase
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, err
	}
	obj, gvk, err := gangDecoder.Decode(c.Object, nil, nil)
	if err != nil {
		return map[string]any{"decode_error": err.Error(), "errors": []fieldError{}}, nil
	}
	resource, strategy, ok := draStrategy(gvk.Kind, c.AdminNamespace)
	if !ok || gvk.Group != "resource.k8s.io" {
		return nil, fmt.Errorf("not a DRA kind: %s", gvk)
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
	namespace := ""
	if strategy.NamespaceScoped() {
		namespace = meta.Metadata.Namespace
	}
	ctx := genericapirequest.WithNamespace(context.Background(), namespace)
	ctx = genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true, Verb: "create", APIPrefix: "apis", APIGroup: gvk.Group, APIVersion: gvk.Version,
		Namespace: namespace, Resource: resource, Name: meta.Metadata.Name,
	})
	strategy.PrepareForCreate(ctx, internal)
	errs := rest.ValidateCreate(ctx, internal, strategy)
	out := []fieldError{}
	for _, e := range errs {
		out = append(out, fieldError{Type: e.Type.String(), Field: e.Field, Detail: e.Detail, BadValue: fmt.Sprint(e.BadValue)})
	}
	return map[string]any{"errors": out}, nil
}
