package ui

import (
	"fmt"
	"strings"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/election"
	"github.com/leaselab/leaselab/web/judge"
	"github.com/leaselab/leaselab/web/said"
)

// says is one of the rules' sentences (the judge's, the election controller's, the timing
// calculator's: web/said) in both languages: its key is the catalog's (the catalog has each
// package's English for it, TestJudgeSentencesInCatalog and its kin check it), its sentences
// within are put in each language too. The judge's lists of identities read "a, b and c" and
// "a、b 和 c"; the controller's lists "a, b" and "a、b". The zero sentence is the zero Text (a
// decision made without its sentence: the screens show its Message).
func says(s said.Said) i18n.Text {
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
			parts[i] = says(n)
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
