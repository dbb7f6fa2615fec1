package main

import (
	"context"
	"encoding/json"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apiserver/pkg/cel/environment"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	dracel "k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/kubernetes/pkg/features"
)

type celCase struct {
	Expression               string                                                    `json:"expression"`
	Driver                   string                                                    `json:"driver"`
	AllowMultipleAllocations *bool                                                     `json:"allowMultipleAllocations,omitempty"`
	Attributes               map[resourceapi.QualifiedName]resourceapi.DeviceAttribute `json:"attributes"`
	Capacity                 map[resourceapi.QualifiedName]resourceapi.DeviceCapacity  `json:"capacity"`
}

type celAnswer struct {
	// the API server's verdict on a new selector (validateCELExpression): its error's detail, or ""
	CreateError string `json:"create_error"`
	CreateType  string `json:"create_type,omitempty"`
	// stored expressions (what the scheduler compiles): compile error, cost estimate, evaluation
	CompileError string  `json:"compile_error"`
	Cost         *uint64 `json:"cost,omitempty"`
	Match        *bool   `json:"match,omitempty"`
	EvalError    string  `json:"eval_error,omitempty"`
	// cel-go's actual cost of the evaluation (the allocator's CostLimit is CELSelectorExpressionMaxCost)
	ActualCost *uint64 `json:"actual_cost,omitempty"`
}

func answerCEL(_ map[string]bool, body json.RawMessage) (any, error) {
	var c celCase
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, err
	}
	compiler := dracel.GetCompiler(dracel.Features{
		EnableConsumableCapacity: utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
		EnableListTypeAttributes: utilfeature.DefaultFeatureGate.Enabled(features.DRAListTypeAttributes),
	})
	var answer celAnswer
	newExpressions := environment.NewExpressions
	created := compiler.CompileCELExpression(c.Expression, dracel.Options{EnvType: &newExpressions})
	if created.Error != nil {
		answer.CreateError = created.Error.Detail
		answer.CreateType = string(created.Error.Type)
	} else if created.MaxCost > resourceapi.CELSelectorExpressionMaxCost {
		answer.CreateError = "too complex, exceeds cost limit"
		answer.CreateType = "forbidden"
	}
	stored := compiler.CompileCELExpression(c.Expression, dracel.Options{})
	if stored.Error != nil {
		answer.CompileError = stored.Error.Detail
		return answer, nil
	}
	cost := stored.MaxCost
	answer.Cost = &cost
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	matched, details, err := stored.DeviceMatches(ctx, dracel.Device{
		Driver:                   c.Driver,
		AllowMultipleAllocations: c.AllowMultipleAllocations,
		Attributes:               c.Attributes,
		Capacity:                 c.Capacity,
	})
	if details != nil {
		answer.ActualCost = details.ActualCost()
	}
	if err != nil {
		answer.EvalError = err.Error()
	} else {
		answer.Match = &matched
	}
	return answer, nil
}
