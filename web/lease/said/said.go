// Package said holds the sentences the server's rules say, the judge's, the election
// controller's and the timing calculator's, as a message key and its arguments: the screens put
// one in their reader's language (the catalog of templates/i18n has every key in English and
// Chinese), and English writes it in English from the formats each package registers, as Text
// and Message fields, logs and the test kit carry it. Std lib only.
package said

import (
	"fmt"
	"strings"
)

// Said is a sentence: a key and its arguments. An argument is a string, a number, or a Said of
// its own. The empty key joins its arguments; a list key (RegisterList) lists them.
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

// formats and lists hold what the packages registered: both are written only while the
// program initializes.
var (
	formats = map[string]string{}
	lists   = map[string]func(items []string) string{}
)

// Register adds a package's sentences in English, by key (a fmt format of the arguments). It
// returns its argument, so that a package's table can register itself where it is declared.
// Keys are the package's own ("judge.…"): registering one twice panics.
func Register(english map[string]string) map[string]string {
	for k, v := range english {
		if _, dup := formats[k]; dup {
			panic("said: key " + k + " registered twice")
		}
		formats[k] = v
	}
	return english
}

// RegisterList makes key a list, written in English by en from its arguments' English.
func RegisterList(key string, en func(items []string) string) string {
	if _, dup := lists[key]; dup {
		panic("said: list " + key + " registered twice")
	}
	lists[key] = en
	return key
}

// English is s in English: an unknown key is written as itself.
func (s Said) English() string {
	args := make([]any, len(s.Args))
	for i, a := range s.Args {
		if n, ok := a.(Said); ok {
			args[i] = n.English()
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
		return list(items)
	}
	format, ok := formats[s.Key]
	if !ok {
		return s.Key
	}
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}
