package i18n

import (
	"context"
	"strings"
	"testing"
)

func TestNegotiate(t *testing.T) {
	for _, tc := range []struct {
		query, cookie, accept string
		want                  Lang
	}{
		{"", "", "", EN},
		{"", "", "zh-CN,zh;q=0.9,en;q=0.8", ZH},
		{"", "", "en-US,en;q=0.9,zh;q=0.8", EN},
		{"", "", "fr-FR, zh-TW;q=0.5", ZH},
		{"", "", "de, fr", EN},
		{"", "", "en;q=0.2, zh;q=0.7", ZH},
		{"", "", "zh;q=0, en;q=0.1", EN},
		{"", "zh", "en", ZH},
		{"en", "zh", "zh", EN},
		{"zh", "", "en", ZH},
		{"xx", "zh", "en", ZH},
		{"", "klingon", "zh-Hans", ZH},
		{"", "", "zh;q=oops, en", EN},
	} {
		if got := Negotiate(tc.query, tc.cookie, tc.accept); got != tc.want {
			t.Errorf("Negotiate(%q, %q, %q) = %q, want %q", tc.query, tc.cookie, tc.accept, got, tc.want)
		}
	}
}

func TestContextAndText(t *testing.T) {
	if FromContext(context.Background()) != EN {
		t.Fatal("no language in the context should read as English")
	}
	ctx := WithLang(context.Background(), ZH)
	if got := T(ctx, "lang.switch"); got != "English" {
		t.Fatalf("lang.switch in zh = %q", got)
	}
	txt := Text{En: "%d candidates", Zh: "%d 个候选者"}
	if got := txt.In(ZH, 3); got != "3 个候选者" {
		t.Fatalf("Text.In = %q", got)
	}
	if got := EN.T("no.such.key"); got != "no.such.key" {
		t.Fatalf("unknown key = %q", got)
	}
}

// TestCatalogComplete: both languages have every message, and the Chinese is not the English.
func TestCatalogComplete(t *testing.T) {
	for k, v := range Messages() {
		if v.En == "" || v.Zh == "" {
			t.Errorf("message %q lacks a language: %+v", k, v)
		}
	}
}

// TestChineseSaysTransitionsInChinese: the Chinese messages, the candidate's included, say
// leaseTransitions as the pages' headers do (转换次数), not "transitions" in English.
func TestChineseSaysTransitionsInChinese(t *testing.T) {
	for key, m := range Messages() {
		if strings.Contains(strings.ReplaceAll(m.Zh, "leaseTransitions", ""), "transitions") {
			t.Errorf("%s: %q", key, m.Zh)
		}
	}
}
