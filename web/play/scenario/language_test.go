package scenario

import (
	"regexp"
	"testing"
	"unicode"

	"github.com/leaselab/leaselab/templates/i18n"
)

// englishRun finds three or more Latin words in a row: a sentence left untranslated.
// Identifiers, names and figures (holderIdentity, alice, 10 s) come one or two at a time.
var englishRun = regexp.MustCompile(`[A-Za-z]{2,}[,.]?\s+[A-Za-z]{2,}[,.]?\s+[A-Za-z]{2,}`)

func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// TestEveryTextInBothLanguages: every title, summary, narration and wait of every scenario is
// in English and in Chinese, and the Chinese has no English sentence left in it.
func TestEveryTextInBothLanguages(t *testing.T) {
	for _, sc := range Library() {
		texts := map[string]i18n.Text{"title": sc.Title, "summary": sc.Summary}
		for i, st := range sc.Steps {
			texts["step "+string(rune('1'+i))] = st.Say
			if st.Until != nil {
				texts["wait "+string(rune('1'+i))] = st.Waiting
			}
		}
		for what, txt := range texts {
			if txt.En == "" || txt.Zh == "" {
				t.Errorf("%s %s: missing a language: %+v", sc.Name, what, txt)
				continue
			}
			if !hasHan(txt.Zh) {
				t.Errorf("%s %s: the Chinese is not Chinese: %q", sc.Name, what, txt.Zh)
			}
			if m := englishRun.FindString(txt.Zh); m != "" {
				t.Errorf("%s %s: English left in the Chinese: %q in %q", sc.Name, what, m, txt.Zh)
			}
		}
	}
}
