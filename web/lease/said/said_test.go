package said_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/web/lease/said"
)

var (
	english = said.Register(map[string]string{
		"saidtest.took":  "%s took %s (transitions %d)",
		"saidtest.alone": "nothing happened",
		"saidtest.why":   ": %s.",
	})
	list = said.RegisterList("saidtest.list", func(items []string) string { return strings.Join(items, " & ") })
)

// TestEnglish: formats with their arguments, sentences within sentences, lists, joins, and an
// unknown key written as itself.
func TestEnglish(t *testing.T) {
	names := said.Said{Key: list, Args: []any{"a", "b"}}
	for _, tc := range []struct {
		s    said.Said
		want string
	}{
		{said.Say("saidtest.took", "b", "demo", 2), "b took demo (transitions 2)"},
		{said.Say("saidtest.alone"), "nothing happened"},
		{said.Say("saidtest.took", names, said.Same("x"), 1), "a & b took x (transitions 1)"},
		{said.Concat(said.Same("split brain"), said.Say("saidtest.why", said.Say("saidtest.alone"))), "split brain: nothing happened."},
		{said.Say("saidtest.unknown", 1), "saidtest.unknown"},
		{said.Said{}, ""},
	} {
		if got := tc.s.English(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.s, got, tc.want)
		}
	}
	if !(said.Said{}).IsZero() || said.Same("").IsZero() {
		t.Error("IsZero")
	}
	if len(english) != 3 {
		t.Errorf("Register returned %v", english)
	}
}

// TestRegisterTwicePanics: two packages cannot give one key two Englishes.
func TestRegisterTwicePanics(t *testing.T) {
	for name, register := range map[string]func(){
		"format": func() { said.Register(map[string]string{"saidtest.took": "again"}) },
		"list":   func() { said.RegisterList(list, func(items []string) string { return "" }) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s registered twice without a panic", name)
				}
			}()
			register()
		}()
	}
}

// TestStandardLibraryOnly: the judge, the controller and the calculator share these sentences,
// and the calculator links into any screen: nothing beyond the standard library.
func TestStandardLibraryOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if deps := strings.Fields(string(out)); !slices.Equal(deps, []string{"github.com/leaselab/leaselab/web/lease/said"}) {
		t.Errorf("web/lease/said reaches %q beyond the standard library", deps)
	}
}
