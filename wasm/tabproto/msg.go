package tabproto

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/leaselab/leaselab/wasm/said"
)

// Msg is a sentence of a candidate (a line of its decision log, an active fault) as a message
// key and its arguments, so that every page shows it in its own language: the tab's page, the
// dashboard and the lease page of a reader who speaks another. The messages, in English and
// Chinese, are narration's; the English one is also the sentence's plain text.
type Msg struct {
	Key  string `json:"key"`
	Args []Arg  `json:"args,omitempty"`
}

// Arg is one argument of a Msg: a plain string (an identity, a duration, an error from the
// server, which stays as the server wrote it) or a message of its own.
type Arg struct {
	S string
	M *Msg
}

// Say is the message key with args; each arg is a string, a Msg, or formatted with %v.
func Say(key string, args ...any) Msg {
	m := Msg{Key: key}
	for _, a := range args {
		switch a := a.(type) {
		case string:
			m.Args = append(m.Args, Arg{S: a})
		case Msg:
			m.Args = append(m.Args, Arg{M: &a})
		default:
			m.Args = append(m.Args, Arg{S: fmt.Sprint(a)})
		}
	}
	return m
}

// IsZero reports whether m is no message (the empty message, which reads as "").
func (m Msg) IsZero() bool { return m.Key == "" }

// In is m in lang ("en" or "zh"; anything else reads as English). An unknown key reads as the
// key itself.
func (m Msg) In(lang string) string {
	if m.Key == "" {
		return "" // the empty message: a note that says nothing here
	}
	t, ok := said.Lookup(m.Key)
	if !ok {
		return m.Key
	}
	args := make([]any, len(m.Args))
	for i, a := range m.Args {
		if a.M != nil {
			args[i] = a.M.In(lang)
		} else {
			args[i] = a.S
		}
	}
	return t.In(said.Lang(lang), args...)
}

// String is m in English.
func (m Msg) String() string { return m.In("en") }

// MarshalJSON writes a plain argument as a JSON string and a message as an object.
func (a Arg) MarshalJSON() ([]byte, error) {
	if a.M != nil {
		return json.Marshal(a.M)
	}
	return json.Marshal(a.S)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (a *Arg) UnmarshalJSON(b []byte) error {
	*a = Arg{}
	if len(b) > 0 && b[0] == '{' {
		a.M = new(Msg)
		return json.Unmarshal(b, a.M)
	}
	return json.Unmarshal(b, &a.S)
}

// Limits on a message from a tab.
const (
	MaxMsgArgs  = 8 // arguments of one message
	MaxMsgDepth = 3 // messages within messages
)

var errBadMsg = errors.New("not a known message")

// clean makes a message from a tab safe: a known key, at most MaxMsgArgs arguments nested at
// most MaxMsgDepth deep, each string cut to MaxTextLen. It returns errBadMsg for anything
// else, and the report then keeps only the sentence's text.
func (m *Msg) clean(depth int) error {
	if m.Key == "" && depth > 1 && len(m.Args) == 0 {
		return nil // the empty message, as an argument
	}
	if !known(m.Key) || depth > MaxMsgDepth || len(m.Args) > MaxMsgArgs {
		return errBadMsg
	}
	for i := range m.Args {
		a := &m.Args[i]
		if a.M != nil {
			if err := a.M.clean(depth + 1); err != nil {
				return err
			}
			continue
		}
		a.S = Cut(a.S, MaxTextLen)
	}
	return nil
}

// known reports whether key is one of the candidate's sentences.
func known(key string) bool {
	_, log := narration[key]
	_, fault := faultWords[key]
	return log || fault
}

// Secs is a duration as the candidate says it: "1.5 s".
func Secs(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// Words returns the messages in lang.
func Words(ms []Msg, lang string) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.In(lang)
	}
	return out
}

// JoinWords lists messages in lang, separated as the language separates a list.
func JoinWords(ms []Msg, lang string) string {
	sep := ", "
	if lang == "zh" {
		sep = "、"
	}
	return strings.Join(Words(ms, lang), sep)
}
