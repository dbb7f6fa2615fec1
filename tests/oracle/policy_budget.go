package main

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/google/cel-go/cel"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// A ValidatingAdmissionPolicy's variables and one set of expressions (its validations, or its
// matchConditions with match_conditions), evaluated on one Pod as the API server's validator
// evaluates them (k8s.io/apiserver pkg/admission/plugin/cel: the composited compiler, variables
// evaluated lazily on first read, one runtime cost budget for the set). The answer is the budget
// spent, each expression's value or error, and the set's own error (out of budget).
type policyBudgetCase struct {
	Variables       [][2]string `json:"variables"`
	Expressions     []string    `json:"expressions"`
	MatchConditions bool        `json:"match_conditions"`
	// messageExpressions, evaluated after the expressions on what they leave, in a new composition context
	Messages []string        `json:"messages,omitempty"`
	Object   json.RawMessage `json:"object"`
}

type policyBudgetResult struct {
	Value any    `json:"value,omitempty"`
	Error string `json:"error,omitempty"`
}

type policyBudgetAnswer struct {
	Spent       int64                `json:"spent"`
	OutOfBudget bool                 `json:"out_of_budget,omitempty"`
	Error       string               `json:"error,omitempty"`
	Results     []policyBudgetResult `json:"results,omitempty"`
	// the messageExpressions ran out of what the expressions left (validator.go: every decision fails)
	MessagesOutOfBudget bool `json:"messages_out_of_budget,omitempty"`
}

type messageExpression string

func (e messageExpression) GetExpression() string    { return string(e) }
func (e messageExpression) ReturnTypes() []*cel.Type { return []*cel.Type{cel.StringType} }

type namedExpression struct{ name, expression string }

func (e namedExpression) GetExpression() string { return e.expression }
func (e namedExpression) ReturnTypes() []*cel.Type {
	return []*cel.Type{cel.AnyType, cel.DynType}
}
func (e namedExpression) GetName() string { return e.name }

func answerPolicyBudget(_ map[string]bool, body json.RawMessage) (any, error) {
	var c policyBudgetCase
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, err
	}
	var object map[string]any
	if err := utiljson.Unmarshal(c.Object, &object); err != nil {
		return nil, err
	}
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return nil, err
	}
	var variables []plugincel.NamedExpressionAccessor
	for _, v := range c.Variables {
		variables = append(variables, namedExpression{v[0], v[1]})
	}
	declarations := plugincel.OptionalVariableDeclarations{}
	compiler.CompileAndStoreVariables(variables, declarations, environment.StoredExpressions)
	var expressions []plugincel.ExpressionAccessor
	for _, e := range c.Expressions {
		expressions = append(expressions, validationExpression(e))
	}
	evaluator := compiler.CompileCondition(expressions, declarations, environment.StoredExpressions)
	budget := int64(celconfig.RuntimeCELCostBudget)
	if c.MatchConditions {
		budget = celconfig.RuntimeCELCostBudgetMatchConditions
	}
	pod := &unstructured.Unstructured{Object: object}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	attributes := admission.NewAttributesRecord(pod, nil, gvk, "default", "p", gvr, "", admission.Create, nil, false, nil)
	versioned := &admission.VersionedAttributes{Attributes: attributes, VersionedKind: gvk}
	versioned.VersionedObject.Set(pod)
	request := plugincel.CreateAdmissionRequest(attributes, metav1.GroupVersionResource(gvr), metav1.GroupVersionKind(gvk))
	results, remaining, err := evaluator.ForInput(context.Background(), versioned, request, plugincel.OptionalVariableBindings{}, nil, budget)
	var answer policyBudgetAnswer
	if err != nil {
		answer.Error = err.Error()
		answer.OutOfBudget = errors.Is(err, apiservercel.ErrOutOfBudget)
		return answer, nil
	}
	answer.Spent = budget - remaining
	if len(c.Messages) > 0 {
		var messages []plugincel.ExpressionAccessor
		for _, m := range c.Messages {
			messages = append(messages, messageExpression(m))
		}
		evaluator := compiler.CompileCondition(messages, declarations, environment.StoredExpressions)
		_, _, err := evaluator.ForInput(context.Background(), versioned, request, plugincel.OptionalVariableBindings{}, nil, remaining)
		answer.MessagesOutOfBudget = errors.Is(err, apiservercel.ErrOutOfBudget)
	}
	for _, result := range results {
		var r policyBudgetResult
		if result.Error != nil {
			r.Error = result.Error.Error()
		} else if result.EvalResult != nil {
			r.Value = result.EvalResult.Value()
		}
		answer.Results = append(answer.Results, r)
	}
	return answer, nil
}
