package ui

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/lease/election"
	"github.com/leaselab/leaselab/web/lease/judge"
	"github.com/leaselab/leaselab/web/lease/said"
)

// says is one of the rules' sentences (the judge's, the election controller's, the timing
// calculator's: web/lease/said) in both languages: its key is the catalog's (the catalog has each
// package's English for it, TestJudgeSentencesInCatalog and its kin check it), its sentences
// within are put in each language too. The judge's lists of identities read "a, b and c" and
// "a、b 和 c"; the controller's lists "a, b" and "a、b". The zero sentence is the zero Text (a
// decision made without its sentence: the screens show its Message). The Chinese is spaced once
// the sentence is whole (zhSpacing).
func says(s said.Said) i18n.Text {
	t := saysParts(s)
	t.Zh = zhSpacing(t.Zh)
	return t
}

// saysParts is says before the Chinese is spaced where its parts meet.
func saysParts(s said.Said) i18n.Text {
	if s.IsZero() {
		return i18n.Text{}
	}
	if s.Key == judge.KeyList {
		ids := make([]string, len(s.Args))
		for i, a := range s.Args {
			ids[i] = fmt.Sprint(a)
		}
		return i18n.Text{En: s.English(), Zh: namesZh(ids)}
	}
	args := make([]any, len(s.Args))
	parts := make([]i18n.Text, len(s.Args))
	for i, a := range s.Args {
		if n, ok := a.(said.Said); ok {
			parts[i] = saysParts(n)
			args[i] = parts[i]
		} else {
			parts[i] = i18n.Same(fmt.Sprint(a))
			args[i] = a
		}
	}
	switch s.Key {
	case "":
		return i18n.Concat(parts...)
	case election.KeyList:
		return i18n.Join(parts, i18n.Text{En: ", ", Zh: "、"})
	}
	return i18n.Say(s.Key, args...)
}

// zhSpacing spaces a Chinese sentence put together from parts as Chinese text is spaced: no
// space between two Han characters, one between a Han character and a Latin letter or digit
// (an identity, a figure). Each message of the catalog is spaced so; the gaps come where one
// part meets the next ("持续了 %s" before a length that begins in Chinese).
func zhSpacing(s string) string {
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

// namesZh lists identities in a Chinese sentence, as the judge's list does in English:
// "a、b 和 c"; past four, "a、b、c 等 8 个".
func namesZh(ids []string) string {
	const most = 4
	var shown []string
	for _, id := range ids[:min(len(ids), most-1)] {
		shown = append(shown, judge.Shown(id))
	}
	switch {
	case len(ids) > most:
		return fmt.Sprintf("%s 等 %d 个", strings.Join(shown, "、"), len(ids))
	case len(ids) == most:
		shown = append(shown, judge.Shown(ids[most-1]))
	}
	if len(shown) < 2 {
		return strings.Join(shown, "")
	}
	return strings.Join(shown[:len(shown)-1], "、") + " 和 " + shown[len(shown)-1]
}
