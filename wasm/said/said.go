// Package said is leaselab's one catalog of sentences, in English and Chinese: the pages', the
// judge's, the election controller's, the timing calculator's, the candidate's narration and the
// lessons'. Each package registers its own sentences where it declares them, both languages side
// by side (Register), and a sentence travels as a key and its arguments (Said) until a screen puts
// it in its reader's language (In). Standard library only: the browser candidate links it too.
package said

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// Lang is a language leaselab speaks.
type Lang string

// The languages.
const (
	EN Lang = "en"
	ZH Lang = "zh"
)

// T returns the sentence registered under key in l, formatted with args. An unknown key is
// returned as it is, so that a missing sentence shows rather than vanishes.
func (l Lang) T(key string, args ...any) string {
	t, ok := texts[key]
	if !ok {
		return key
	}
	return t.In(l, args...)
}

// Other is the language a switch offers from l.
func (l Lang) Other() Lang {
	if l == ZH {
		return EN
	}
	return ZH
}

// HTMLLang is the value of a page's <html lang> in l.
func (l Lang) HTMLLang() string {
	if l == ZH {
		return "zh-CN"
	}
	return "en"
}

// Text is one sentence in both languages: a fmt format of its arguments in each.
type Text struct {
	En string
	Zh string
}

// In returns t in l (anything but ZH reads as English), formatted with args when there are any.
// An argument that is itself a sentence (a Text, a Said, or anything with an In(lang string)
// method, such as a candidate's message) is put in l first, so sentences compose.
func (t Text) In(l Lang, args ...any) string {
	s := t.En
	if l == ZH {
		s = t.Zh
	}
	if len(args) == 0 {
		return s
	}
	return fmt.Sprintf(s, localize(l, args)...)
}

// IsZero reports whether t says nothing in either language.
func (t Text) IsZero() bool { return t.En == "" && t.Zh == "" }

// inLang is a sentence of another package's own shape that puts itself in a language.
type inLang interface{ In(lang string) string }

// localize returns args with every sentence among them put in l.
func localize(l Lang, args []any) []any {
	var out []any
	for i, a := range args {
		var s string
		switch a := a.(type) {
		case Text:
			s = a.In(l)
		case Said:
			s = a.in(l)
		case inLang:
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

// Said is a sentence not yet put in a language: a key and its arguments. An argument is a
// string, a number, or a sentence of its own. The empty key joins its arguments; a list key
// (RegisterList) lists them.
type Said struct {
	Key  string
	Args []any
}

// Say is the sentence key with args.
func Say(key string, args ...any) Said { return Said{Key: key, Args: args} }

// Same is s, which reads the same in every language (an identity, a number, a server's error).
func Same(s string) Said { return Said{Args: []any{s}} }

// Concat joins sentences.
func Concat(parts ...Said) Said {
	args := make([]any, len(parts))
	for i, p := range parts {
		args[i] = p
	}
	return Said{Args: args}
}

// IsZero reports whether s says nothing at all.
func (s Said) IsZero() bool { return s.Key == "" && len(s.Args) == 0 }

// In is s in l. The Chinese is spaced once the sentence is whole (Space): the gaps come where
// one part meets the next.
func (s Said) In(l Lang) string {
	out := s.in(l)
	if l == ZH {
		out = Space(out)
	}
	return out
}

// English is s in English, as logs, Message fields and the test kit carry it.
func (s Said) English() string { return s.In(EN) }

// Both is s in both languages; the zero sentence is the zero Text.
func (s Said) Both() Text {
	if s.IsZero() {
		return Text{}
	}
	return Text{En: s.In(EN), Zh: s.In(ZH)}
}

// in is s in l before the Chinese is spaced. An unknown key reads as itself, so that a missing
// sentence shows rather than vanishes.
func (s Said) in(l Lang) string {
	args := make([]any, len(s.Args))
	for i, a := range s.Args {
		if n, ok := a.(Said); ok {
			args[i] = n.in(l)
		} else {
			args[i] = a
		}
	}
	if s.Key == "" {
		var b strings.Builder
		for _, a := range args {
			fmt.Fprint(&b, a)
		}
		return b.String()
	}
	if list, ok := lists[s.Key]; ok {
		items := make([]string, len(args))
		for i, a := range args {
			items[i] = fmt.Sprint(a)
		}
		return list(l, items)
	}
	t, ok := texts[s.Key]
	if !ok {
		return s.Key
	}
	return t.In(l, args...)
}

// texts and lists hold what the packages registered: both are written only while the program
// initializes.
var (
	texts = map[string]Text{}
	lists = map[string]func(l Lang, items []string) string{}
)

// Register adds a package's sentences by key. It returns its argument, so that a package's table
// registers itself where it is declared. Keys begin with their package's or page's name
// ("judge.…", "dash.…"): registering one twice panics.
func Register(sentences map[string]Text) map[string]Text {
	for k, v := range sentences {
		claim(k)
		texts[k] = v
	}
	return sentences
}

// RegisterList makes key a list, written in each language by list from its items as they read
// in that language.
func RegisterList(key string, list func(l Lang, items []string) string) string {
	claim(key)
	lists[key] = list
	return key
}

// claim panics if key is registered already, as a sentence or a list.
func claim(key string) {
	_, text := texts[key]
	_, list := lists[key]
	if text || list {
		panic("said: key " + key + " registered twice")
	}
}

// Lookup returns the sentence registered under key.
func Lookup(key string) (Text, bool) {
	t, ok := texts[key]
	return t, ok
}

// Keys returns the registered keys that begin with prefix, sorted.
func Keys(prefix string) []string {
	var out []string
	for k := range texts {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Space spaces a Chinese sentence put together from parts as Chinese text is spaced: no space
// between two Han characters, one between a Han character and a Latin letter or digit (an
// identity, a figure).
func Space(s string) string {
	rs := []rune(s)
	han := func(i int) bool { return i >= 0 && i < len(rs) && unicode.Is(unicode.Han, rs[i]) }
	latin := func(i int) bool {
		return i >= 0 && i < len(rs) && rs[i] < unicode.MaxASCII && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i]))
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i, r := range rs {
		if r == ' ' && han(i-1) && han(i+1) {
			continue
		}
		if han(i-1) && latin(i) || latin(i-1) && han(i) {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}
