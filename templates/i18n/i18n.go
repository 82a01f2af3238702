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
	"fmt"
	"strconv"
	"strings"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// Lang is a language leaselab speaks.
type Lang string

// The languages.
const (
	EN Lang = "en"
	ZH Lang = "zh"
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

// HTMLLang is the value of a page's <html lang> in l.
func (l Lang) HTMLLang() string {
	if l == ZH {
		return "zh-CN"
	}
	return "en"
}

// Text is one message in both languages.
type Text struct {
	En string
	Zh string
}

// In returns t in l, formatted with args when there are any. An argument that is itself a
// Text (or a Msg) is put in l first, so sentences compose.
func (t Text) In(l Lang, args ...any) string {
	s := t.En
	if l == ZH {
		s = t.Zh
	}
	if len(args) > 0 {
		return fmt.Sprintf(s, localize(l, args)...)
	}
	return s
}

// localize returns args with every Text and narration message put in l.
func localize(l Lang, args []any) []any {
	var out []any
	for i, a := range args {
		var s string
		switch a := a.(type) {
		case Text:
			s = a.In(l)
		case tabproto.Msg:
			s = a.In(string(l))
		default:
			continue
		}
		if out == nil {
			out = append([]any(nil), args...)
		}
		out[i] = s
	}
	if out == nil {
		return args
	}
	return out
}

// Same is s in both languages: an identity, a number, a name.
func Same(s string) Text { return Text{En: s, Zh: s} }

// IsZero reports whether t says nothing in either language.
func (t Text) IsZero() bool { return t.En == "" && t.Zh == "" }

// Say returns the catalog's message key formatted with args, in both languages; arguments
// that are Texts are put in each language. An unknown key says itself.
func Say(key string, args ...any) Text {
	t, ok := catalog[key]
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

// T returns the catalog's message key in l, formatted with args.
func (l Lang) T(key string, args ...any) string {
	t, ok := catalog[key]
	if !ok {
		return key
	}
	return t.In(l, args...)
}

// Browser returns the messages whose keys begin with one of prefixes, in l: what a page's
// scripts need, embedded in the page.
func Browser(l Lang, prefixes ...string) map[string]string {
	out := map[string]string{}
	for k, v := range catalog {
		for _, p := range prefixes {
			if strings.HasPrefix(k, p) {
				out[k] = v.In(l)
				break
			}
		}
	}
	return out
}

// Messages returns the catalog's keys and texts, for tests and for the browser's copy.
func Messages() map[string]Text {
	out := make(map[string]Text, len(catalog))
	for k, v := range catalog {
		out[k] = v
	}
	return out
}
