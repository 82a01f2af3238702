package said_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/wasm/said"
)

var (
	sentences = said.Register(map[string]said.Text{
		"saidtest.took":  {En: "%s took %s (transitions %d)", Zh: "%s 接管了 %s（转换次数 %d）"},
		"saidtest.alone": {En: "nothing happened", Zh: "什么也没发生"},
		"saidtest.why":   {En: ": %s.", Zh: "：%s。"},
	})
	list = said.RegisterList("saidtest.list", func(l said.Lang, items []string) string {
		return strings.Join(items, said.Text{En: " & ", Zh: "和"}.In(l))
	})
)

// msg is a sentence of another package's shape (as the tab protocol's Msg is).
type msg string

func (m msg) In(lang string) string { return string(m) + "@" + lang }

// TestIn: formats with their arguments in each language, sentences within sentences (of every
// shape), lists, joins, the Chinese spaced where parts meet, and an unknown key as itself.
func TestIn(t *testing.T) {
	names := said.Said{Key: list, Args: []any{"a", "b"}}
	for _, tc := range []struct {
		s      said.Said
		en, zh string
	}{
		{said.Say("saidtest.took", "b", "demo", 2), "b took demo (transitions 2)", "b 接管了 demo（转换次数 2）"},
		{said.Say("saidtest.alone"), "nothing happened", "什么也没发生"},
		{said.Say("saidtest.took", names, said.Same("x"), 1), "a & b took x (transitions 1)", "a 和 b 接管了 x（转换次数 1）"},
		{said.Concat(said.Same("split brain"), said.Say("saidtest.why", said.Say("saidtest.alone"))), "split brain: nothing happened.", "split brain：什么也没发生。"},
		{said.Say("saidtest.took", msg("m"), said.Text{En: "one", Zh: "一个"}, 3), "m@en took one (transitions 3)", "m@zh 接管了一个（转换次数 3）"},
		{said.Say("saidtest.unknown", 1), "saidtest.unknown", "saidtest.unknown"},
		{said.Said{}, "", ""},
	} {
		if got := tc.s.English(); got != tc.en {
			t.Errorf("%+v in English: %q, want %q", tc.s, got, tc.en)
		}
		if got := tc.s.In(said.ZH); got != tc.zh {
			t.Errorf("%+v in Chinese: %q, want %q", tc.s, got, tc.zh)
		}
		if both := tc.s.Both(); both.En != tc.en || both.Zh != tc.zh {
			t.Errorf("%+v in both: %+v", tc.s, both)
		}
	}
	if !(said.Said{}).IsZero() || said.Same("").IsZero() {
		t.Error("IsZero")
	}
	if len(sentences) != 3 || said.ZH.T("saidtest.alone") != "什么也没发生" || said.EN.T("no.such") != "no.such" {
		t.Errorf("Register returned %v; T does not look it up", sentences)
	}
	if got := said.Keys("saidtest."); !slices.Equal(got, []string{"saidtest.alone", "saidtest.took", "saidtest.why"}) {
		t.Errorf("Keys = %q", got)
	}
}

// TestRegisterTwicePanics: two packages cannot give one key two meanings.
func TestRegisterTwicePanics(t *testing.T) {
	for name, register := range map[string]func(){
		"format":         func() { said.Register(map[string]said.Text{"saidtest.took": {En: "again"}}) },
		"list":           func() { said.RegisterList(list, func(said.Lang, []string) string { return "" }) },
		"list as format": func() { said.Register(map[string]said.Text{list: {En: "again"}}) },
		"format as list": func() { said.RegisterList("saidtest.alone", func(said.Lang, []string) string { return "" }) },
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

// TestSpace: Chinese put together from parts is spaced as Chinese text is.
func TestSpace(t *testing.T) {
	for in, want := range map[string]string{
		"alice持有租约":  "alice 持有租约",
		"持有 了":       "持有了",
		"持续了 12 s":   "持续了 12 s",
		"租约demo过期":   "租约 demo 过期",
		"alice, bob": "alice, bob",
	} {
		if got := said.Space(in); got != want {
			t.Errorf("Space(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestStandardLibraryOnly: the browser candidate links the catalog too.
func TestStandardLibraryOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if deps := strings.Fields(string(out)); !slices.Equal(deps, []string{"github.com/leaselab/leaselab/wasm/said"}) {
		t.Errorf("wasm/said reaches %q beyond the standard library", deps)
	}
}
