// Command oracle answers gpulint's differential tests with Kubernetes' own code (see docs/oracle.md).
//
// It reads one case per line on stdin, as JSON: {"family": "...", ...}, and writes one answer per
// line on stdout, as JSON, in the same order. A case the oracle cannot read is answered with
// {"oracle_error": "..."}; the process keeps going. One process serves a whole test session.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
)

type request struct {
	Family string          `json:"family"`
	Gates  map[string]bool `json:"gates,omitempty"`
	Body   json.RawMessage `json:"case"`
}

type handler func(gates map[string]bool, body json.RawMessage) (any, error)

var families = map[string]handler{
	"quantity":      answerQuantity,
	"schedule":      answerSchedule,
	"cel":           answerCEL,
	"policy_cost":   answerPolicyCost,
	"policy_budget": answerPolicyBudget,
	"validate":      answerValidate,
	"gate_defaults": answerGateDefaults,
	"gang_validate": answerGangValidate,
	"go_text":       answerGoText,
	"dra_validate":  answerDRAValidate,
	"dra_allocate":  answerDRAAllocate,
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	encoder := json.NewEncoder(out)
	encoder.SetEscapeHTML(false)
	for in.Scan() {
		answer := answerLine(in.Bytes())
		if err := encoder.Encode(answer); err != nil {
			_ = encoder.Encode(map[string]string{"oracle_error": err.Error()})
		}
		// the test side waits for each batch's answers: flush when the input has no more buffered
		if err := out.Flush(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func answerLine(line []byte) (answer any) {
	defer func() {
		if r := recover(); r != nil {
			answer = map[string]string{"oracle_error": fmt.Sprintf("panic: %v\n%s", r, debug.Stack())}
		}
	}()
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return map[string]string{"oracle_error": "request: " + err.Error()}
	}
	handle, ok := families[req.Family]
	if !ok {
		return map[string]string{"oracle_error": "unknown family " + req.Family}
	}
	if err := setGates(req.Gates); err != nil {
		return map[string]string{"oracle_error": "gates: " + err.Error()}
	}
	result, err := handle(req.Gates, req.Body)
	if err != nil {
		return map[string]string{"oracle_error": err.Error()}
	}
	return result
}
