package main

import (
	"context"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
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

// draKind: the resource.k8s.io kinds the family creates, their resource and create strategy
// (pkg/registry/resource/*/strategy.go).
func draKind(kind string, admin bool) (createKind, bool) {
	ns := namespaces{admin: admin}
	switch kind {
	case "ResourceClaim":
		return createKind{"resourceclaims", resourceclaim.NewStrategy(ns, nil)}, true
	case "ResourceClaimTemplate":
		return createKind{"resourceclaimtemplates", resourceclaimtemplate.NewStrategy(ns)}, true
	case "DeviceClass":
		return createKind{"deviceclasses", deviceclass.Strategy}, true
	case "ResourceSlice":
		return createKind{"resourceslices", resourceslice.Strategy}, true
	}
	return createKind{}, false
}

// answerDRAValidate creates a ResourceClaim, ResourceClaimTemplate, DeviceClass or ResourceSlice as the
// API server does (answerCreate: the strategy's Validate is AuthorizedForAdmin, against the namespace the
// case labels for admin access or not, and the handwritten validation).
func answerDRAValidate(_ map[string]bool, body json.RawMessage) (any, error) {
	var c draValidateCase
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, err
	}
	return answerCreate(c.Object, "resource.k8s.io", "DRA", func(kind string) (createKind, bool) {
		return draKind(kind, c.AdminNamespace)
	})
}
