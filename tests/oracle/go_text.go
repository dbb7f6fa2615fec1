package main

import (
	"encoding/json"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

type goTextCase struct {
	Text string `json:"text"`
}

// answerGoText quotes a text as Kubernetes' messages do: strconv.Quote, and the field errors whose
// value is a string (field.Error.Error(): "%q" of the value; NotSupported quotes each supported value).
func answerGoText(_ map[string]bool, body json.RawMessage) (any, error) {
	var c goTextCase
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, err
	}
	path := field.NewPath("metadata", "labels")
	return map[string]string{
		"quote":         strconv.Quote(c.Text),
		"invalid":       field.Invalid(path, c.Text, "must be valid").Error(),
		"not_supported": field.NotSupported(path, c.Text, []string{c.Text, "a"}).Error(),
	}, nil
}
