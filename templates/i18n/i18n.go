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

// Text is one message in both languages.
type Text struct {
	En string
	Zh string
}

// In returns t in l, formatted with args when there are any.
func (t Text) In(l Lang, args ...any) string {
	s := t.En
	if l == ZH {
		s = t.Zh
	}
	if len(args) > 0 {
		return fmt.Sprintf(s, args...)
	}
	return s
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

// Messages returns the catalog's keys and texts, for tests and for the browser's copy.
func Messages() map[string]Text {
	out := make(map[string]Text, len(catalog))
	for k, v := range catalog {
		out[k] = v
	}
	return out
}
