package main

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/resource"
)

type quantityCase struct {
	Text  string `json:"text"`
	Other string `json:"other"`
}

type quantityAnswer struct {
	OK        bool   `json:"ok"`
	Error     string `json:"error,omitempty"`
	Canonical string `json:"canonical,omitempty"`
	Decimal   string `json:"decimal,omitempty"` // the exact value, inf.Dec's decimal text
	Milli     int64  `json:"milli"`             // MilliValue(): what the API server's integer test reads
	Sign      int    `json:"sign"`
	// Cmp with Other, when both parse: -1, 0 or 1
	Cmp *int `json:"cmp,omitempty"`
}

func answerQuantity(_ map[string]bool, body json.RawMessage) (any, error) {
	var c quantityCase
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, err
	}
	q, err := resource.ParseQuantity(c.Text)
	if err != nil {
		return quantityAnswer{Error: err.Error()}, nil
	}
	answer := quantityAnswer{
		OK:        true,
		Canonical: q.String(),
		Decimal:   q.AsDec().String(),
		Milli:     q.MilliValue(),
		Sign:      q.Sign(),
	}
	if c.Other != "" {
		if other, err := resource.ParseQuantity(c.Other); err == nil {
			cmp := q.Cmp(other)
			answer.Cmp = &cmp
		}
	}
	return answer, nil
}
