package ui

import (
	"fmt"
	"strings"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/election"
	"github.com/leaselab/leaselab/web/judge"
)

// says is one of the judge's sentences in both languages: its key is the catalog's (the
// catalog has the judge's English for each, TestJudgeSentencesInCatalog checks it), its
// sentences within are put in each language too.
func says(s judge.Said) i18n.Text {
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
	for i, a := range s.Args {
		if n, ok := a.(judge.Said); ok {
			args[i] = says(n)
		} else {
			args[i] = a
		}
	}
	if s.Key == "" {
		parts := make([]i18n.Text, len(args))
		for i, a := range args {
			if t, ok := a.(i18n.Text); ok {
				parts[i] = t
			} else {
				parts[i] = i18n.Same(fmt.Sprint(a))
			}
		}
		return i18n.Concat(parts...)
	}
	return i18n.Say(s.Key, args...)
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

// electionSays is one of the election controller's sentences in both languages, as says is
// the judge's: its key is the catalog's, its sentences within are put in each language, and
// its lists are "a, b" in English and "a、b" in Chinese. A decision made without its sentence
// (zero) is the zero Text, and the screens show its Message.
func electionSays(s election.Said) i18n.Text {
	if s.IsZero() {
		return i18n.Text{}
	}
	args := make([]any, len(s.Args))
	parts := make([]i18n.Text, len(s.Args))
	for i, a := range s.Args {
		if n, ok := a.(election.Said); ok {
			parts[i] = electionSays(n)
		} else {
			parts[i] = i18n.Same(fmt.Sprint(a))
		}
		args[i] = parts[i]
	}
	switch s.Key {
	case "":
		return i18n.Concat(parts...)
	case election.KeyList:
		return i18n.Join(parts, i18n.Text{En: ", ", Zh: "、"})
	}
	return i18n.Say(s.Key, args...)
}
