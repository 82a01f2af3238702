package discovery

import (
	"reflect"
	"testing"
)

func TestParseAccept(t *testing.T) {
	type clause struct {
		media  string
		q      float64
		params map[string]string
	}
	for _, tc := range []struct {
		header string
		want   []clause
	}{
		{"", []clause{{"*/*", 1, nil}}},
		{"application/json", []clause{{"application/json", 1, map[string]string{}}}},
		{clientGoAccept, []clause{
			{"application/json", 1, map[string]string{"g": "apidiscovery.k8s.io", "v": "v2", "as": "APIGroupDiscoveryList"}},
			{"application/json", 1, map[string]string{"g": "apidiscovery.k8s.io", "v": "v2beta1", "as": "APIGroupDiscoveryList"}},
			{"application/json", 1, map[string]string{}},
		}},
		{"text/html;q=0.2, Application/JSON ; Q=0.9, */*;q=0.1", []clause{
			{"application/json", 0.9, map[string]string{}},
			{"text/html", 0.2, map[string]string{}},
			{"*/*", 0.1, map[string]string{}},
		}},
		{"application/com.github.proto-openapi.spec.v2@v1.0+protobuf", []clause{{"application/com.github.proto-openapi.spec.v2@v1.0+protobuf", 1, map[string]string{}}}},
		{`application/json;profile="a,b";q=0, application/yaml;x="a\"b"`, []clause{{"application/yaml", 1, map[string]string{"x": `a"b`}}}},
		{"garbage, application, */json, a/b;q=2, a/b;novalue, application/yaml", []clause{{"application/yaml", 1, map[string]string{}}}},
	} {
		var got []clause
		for _, m := range parseAccept(tc.header) {
			got = append(got, clause{m.typ + "/" + m.subtype, m.q, m.params})
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseAccept(%q):\n got %+v\nwant %+v", tc.header, got, tc.want)
		}
	}
}

func TestETagMatches(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{`"abc"`, true},
		{`W/"abc"`, true},
		{`"x", "abc"`, true},
		{`*`, true},
		{`"abcd"`, false},
		{`abc`, false},
		{``, false},
	} {
		if got := etagMatches(tc.header, `"abc"`); got != tc.want {
			t.Errorf("etagMatches(%q) = %v", tc.header, got)
		}
	}
}
