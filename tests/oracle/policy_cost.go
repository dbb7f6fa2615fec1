package main

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/cel/environment"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// A ValidatingAdmissionPolicy validation expression, evaluated as the API server evaluates it
// (k8s.io/apiserver pkg/admission/plugin/cel: the stored-expressions environment with its per-call
// cost limit), on one object: its actual cost, or the error.
type policyCostCase struct {
	Expression string          `json:"expression"`
	Object     json.RawMessage `json:"object"`
}

type policyCostAnswer struct {
	CompileError string  `json:"compile_error,omitempty"`
	Cost         *uint64 `json:"cost,omitempty"`
	EvalError    string  `json:"eval_error,omitempty"`
	Value        any     `json:"value,omitempty"`
}

var policyCompiler = sync.OnceValue(func() plugincel.Compiler {
	return plugincel.NewCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
})

type validationExpression string

func (e validationExpression) GetExpression() string    { return string(e) }
func (e validationExpression) ReturnTypes() []*cel.Type { return []*cel.Type{cel.BoolType} }

func answerPolicyCost(_ map[string]bool, body json.RawMessage) (any, error) {
	var c policyCostCase
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, err
	}
	var object map[string]any // as unstructured holds it: whole numbers are int64
	if err := utiljson.Unmarshal(c.Object, &object); err != nil {
		return nil, err
	}
	compiled := policyCompiler().CompileCELExpression(validationExpression(c.Expression), plugincel.OptionalVariableDeclarations{}, environment.StoredExpressions)
	var answer policyCostAnswer
	if compiled.Error != nil {
		answer.CompileError = compiled.Error.Detail
		return answer, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	value, details, err := compiled.Program.ContextEval(ctx, map[string]any{"object": object})
	if details != nil && details.ActualCost() != nil {
		cost := *details.ActualCost()
		answer.Cost = &cost
	}
	if err != nil {
		answer.EvalError = err.Error()
	} else {
		answer.Value = value.Value()
	}
	return answer, nil
}
