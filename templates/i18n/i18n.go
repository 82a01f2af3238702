// Package i18n holds leaselab's two languages, English and Chinese: which one a request gets
// (the lang query parameter, then the cookie the switch sets, then Accept-Language), the
// language carried in a request's context, and the messages every page and narration uses.
//
// Messages are keyed by short names and kept side by side (catalog.go), so a test can prove
// that both languages have every message. Text that lives beside its code (a scenario's
// narration) is a Text, both languages in one value.
package i18n

import (
	"context"
	"strconv"
	"strings"

	"github.com/leaselab/leaselab/wasm/said"
)

// Lang is a language leaselab speaks (the one catalog's, wasm/said).
type Lang = said.Lang

// The languages.
const (
	EN = said.EN
	ZH = said.ZH
)

// Langs lists the languages in the order the switch shows them.
var Langs = []Lang{EN, ZH}

// CookieName is the cookie the language switch keeps the choice in.
const CookieName = "leaselab-lang"

// Parse returns the language s names ("en", "zh", "zh-CN", "en-US", ...; any case), and
// whether it names one.
func Parse(s string) (Lang, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	base, _, _ := strings.Cut(s, "-")
	base, _, _ = strings.Cut(base, "_")
	switch base {
	case "en":
		return EN, true
	case "zh":
		return ZH, true
	}
	return "", false
}

// Negotiate picks a request's language: a lang query parameter forces it, then the cookie the
// switch set, then the first language of Accept-Language (by q) that leaselab speaks, then
// English.
func Negotiate(query, cookie, acceptLanguage string) Lang {
	if l, ok := Parse(query); ok {
		return l
	}
	if l, ok := Parse(cookie); ok {
		return l
	}
	best, bestQ := EN, -1.0
	for _, part := range strings.Split(acceptLanguage, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			q = f
		}
		if l, ok := Parse(tag); ok && q > 0 && q > bestQ {
			best, bestQ = l, q
		}
	}
	return best
}

type ctxKey struct{}

// WithLang returns ctx carrying l.
func WithLang(ctx context.Context, l Lang) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// FromContext returns the language ctx carries; English when none.
func FromContext(ctx context.Context) Lang {
	if l, ok := ctx.Value(ctxKey{}).(Lang); ok {
		return l
	}
	return EN
}

type switchKey struct{}

// WithSwitch returns ctx carrying href, the link to the same page in the other language, which
// the language switch of the page's header shows.
func WithSwitch(ctx context.Context, href string) context.Context {
	return context.WithValue(ctx, switchKey{}, href)
}

// SwitchURL is the link of the language switch ctx carries; "" when none.
func SwitchURL(ctx context.Context) string {
	s, _ := ctx.Value(switchKey{}).(string)
	return s
}

// Text is one message in both languages (the one catalog's, wasm/said).
type Text = said.Text

// Same is s in both languages: an identity, a number, a name.
func Same(s string) Text { return Text{En: s, Zh: s} }

// Say returns the catalog's message key formatted with args, in both languages; arguments
// that are Texts are put in each language. An unknown key says itself.
func Say(key string, args ...any) Text {
	t, ok := said.Lookup(key)
	if !ok {
		return Same(key)
	}
	return Text{En: t.In(EN, args...), Zh: t.In(ZH, args...)}
}

// Concat joins texts, language by language.
func Concat(parts ...Text) Text {
	var en, zh strings.Builder
	for _, p := range parts {
		en.WriteString(p.En)
		zh.WriteString(p.Zh)
	}
	return Text{En: en.String(), Zh: zh.String()}
}

// Join joins texts with sep between them, language by language.
func Join(parts []Text, sep Text) Text {
	out := make([]Text, 0, 2*len(parts))
	for i, p := range parts {
		if i > 0 {
			out = append(out, sep)
		}
		out = append(out, p)
	}
	return Concat(out...)
}

// T returns the catalog's message key in ctx's language, formatted with args. An unknown key
// is returned as it is, so a missing message shows rather than vanishes; the catalog test
// keeps every key used in code present.
func T(ctx context.Context, key string, args ...any) string {
	return FromContext(ctx).T(key, args...)
}

// Browser returns the messages whose keys begin with one of prefixes, in l: what a page's
// scripts need, embedded in the page.
func Browser(l Lang, prefixes ...string) map[string]string {
	out := map[string]string{}
	for _, p := range prefixes {
		for _, k := range said.Keys(p) {
			t, _ := said.Lookup(k)
			out[k] = t.In(l)
		}
	}
	return out
}

// Messages returns the catalog's keys and texts, for tests.
func Messages() map[string]Text {
	out := map[string]Text{}
	for _, k := range said.Keys("") {
		out[k], _ = said.Lookup(k)
	}
	return out
}
