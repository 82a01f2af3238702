package mediatype

import (
	"mime"
	"reflect"
	"strings"
	"testing"
)

// clientGoDiscoveryAccept is what client-go's discovery client sends.
const clientGoDiscoveryAccept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"

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
		{"", []clause{{"*/*", 1, map[string]string{}}}},
		{"application/json", []clause{{"application/json", 1, map[string]string{}}}},
		{clientGoDiscoveryAccept, []clause{
			{"application/json", 1, map[string]string{"g": "apidiscovery.k8s.io", "v": "v2", "as": "APIGroupDiscoveryList"}},
			{"application/json", 1, map[string]string{"g": "apidiscovery.k8s.io", "v": "v2beta1", "as": "APIGroupDiscoveryList"}},
			{"application/json", 1, map[string]string{}},
		}},
		// kubectl get asks for a Table first.
		{"application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", []clause{
			{"application/json", 1, map[string]string{"as": "Table", "v": "v1", "g": "meta.k8s.io"}},
			{"application/json", 1, map[string]string{"as": "Table", "v": "v1beta1", "g": "meta.k8s.io"}},
			{"application/json", 1, map[string]string{}},
		}},
		{"text/html;q=0.2, Application/JSON ; Q=0.9, */*;q=0.1", []clause{
			{"application/json", 0.9, map[string]string{}},
			{"text/html", 0.2, map[string]string{}},
			{"*/*", 0.1, map[string]string{}},
		}},
		{"application/com.github.proto-openapi.spec.v2@v1.0+protobuf", []clause{{"application/com.github.proto-openapi.spec.v2@v1.0+protobuf", 1, map[string]string{}}}},
		{`application/json;profile="a,b";q=0, application/yaml;x="a\"b"`, []clause{{"application/yaml", 1, map[string]string{"x": `a"b`}}}},
		{"garbage, application, */json, a/b;q=2, a/b;q=x, a/b;novalue, a/b;x=, a/b;x=a b, a/b;x=1;x=2, a/b;;x=1, application/yaml", []clause{{"application/yaml", 1, map[string]string{}}}},
		// One trailing ";" is allowed, as the real server's parsers allow it.
		{"application/yaml;, application/json", []clause{{"application/yaml", 1, map[string]string{}}, {"application/json", 1, map[string]string{}}}},
	} {
		var got []clause
		for _, m := range ParseAccept(tc.header) {
			got = append(got, clause{m.String(), m.Q, m.Params})
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseAccept(%q):\n got %+v\nwant %+v", tc.header, got, tc.want)
		}
	}
}

// TestParseContentType: what Content-Type values read as is what mime.ParseMediaType, which
// the real server reads them with, makes of them, but for the "@" client-go sends.
func TestParseContentType(t *testing.T) {
	for _, ct := range []string{
		"application/json", "application/json;", "application/json; ", "application/json;;", "Application/JSON; Charset=UTF-8",
		"application/json;charset", "application/json;=x", `application/json;a="x"`, `application/json;a="x`, "application/json, text/plain",
		"*/*", "application/", "/json", " application/json ", "application/json;a=b;a=c", "application/merge-patch+json; charset=utf-8",
		"application/json;a=b c", "application/json (x)", "text/plain;;a=b", "a b/c", "",
	} {
		want, _, werr := mime.ParseMediaType(ct)
		got, err := Parse(ct)
		if strings.Contains(want, "/") && got.String() != want || (err == nil) != (werr == nil) {
			t.Errorf("Parse(%q) = %q, %v; mime.ParseMediaType: %q, %v", ct, got, err, want, werr)
		}
	}
	if got, err := Parse("application/com.github.proto-openapi.spec.v3@v1.0+protobuf"); err != nil || got.Subtype != "com.github.proto-openapi.spec.v3@v1.0+protobuf" {
		t.Errorf("the OpenAPI protobuf type: %q, %v", got, err)
	}
}

func TestMatches(t *testing.T) {
	for _, tc := range []struct {
		accept string
		want   bool
	}{
		{"*/*", true}, {"application/*", true}, {"application/json", true}, {"application/yaml", false}, {"text/*", false},
	} {
		m, err := Parse(tc.accept)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Matches("application", "json"); got != tc.want {
			t.Errorf("%s matches application/json: %v", tc.accept, got)
		}
	}
}

// FuzzParseAccept: any header parses without panicking into clauses with a type and a
// subtype, a quality in (0, 1], best first.
func FuzzParseAccept(f *testing.F) {
	for _, s := range []string{"", clientGoDiscoveryAccept, `a/b;x="y\"z";q=0.5, */*;q=0.1`, "a/b;;", `a/b;x="`, "\"", ",;=/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		clauses := ParseAccept(header)
		for i, m := range clauses {
			if m.Type == "" || m.Subtype == "" || m.Q <= 0 || m.Q > 1 {
				t.Errorf("clause %+v", m)
			}
			if i > 0 && clauses[i-1].Q < m.Q {
				t.Errorf("clauses out of order: %+v", clauses)
			}
		}
	})
}
