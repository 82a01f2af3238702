// Package mediatype parses the media types of Accept and Content-Type headers, for the API
// handlers and the discovery documents alike.
//
// The parser is lenient where clients are: client-go asks for the OpenAPI protobuf document as
// application/com.github.proto-openapi.spec.v2@v1.0+protobuf, whose "@" mime.ParseMediaType
// refuses. It is strict where a header is broken: an Accept clause with a quality that is not a
// number from 0 to 1, a parameter without a value, or no subtype is dropped, not guessed at.
package mediatype

import (
	"errors"
	"sort"
	"strconv"
	"strings"
)

// MediaType is one media type with its parameters: a clause of an Accept header (a media
// range, which may have "*" for a type or subtype) or the value of a Content-Type header.
type MediaType struct {
	// Type and Subtype are in lower case.
	Type, Subtype string
	// Params holds the parameters by lower-case name, values unquoted; an Accept clause's
	// quality is Q, not a parameter.
	Params map[string]string
	// Q is the quality of an Accept clause, 1 unless it says otherwise.
	Q float64
}

// Errors of Parse.
var (
	ErrNoMediaType  = errors.New("mediatype: no type/subtype")
	ErrBadParameter = errors.New("mediatype: invalid parameter")
)

// String is the type and subtype, without parameters: "application/json".
func (m MediaType) String() string { return m.Type + "/" + m.Subtype }

// Matches reports whether m, as an Accept clause, accepts the concrete media type
// typ/subtype: exactly, as typ/*, or as */*.
func (m MediaType) Matches(typ, subtype string) bool {
	return (m.Type == "*" || m.Type == typ) && (m.Subtype == "*" || m.Subtype == subtype)
}

// Parse parses one media type: type/subtype followed by ;name=value parameters, each value a
// token or a quoted string. It returns ErrNoMediaType when there is no type/subtype, and
// ErrBadParameter for a parameter without a name or a value, a value that is neither a token
// nor a quoted string, or an empty parameter before the last (one trailing ";" is allowed).
// As mime.ParseMediaType, which the real server reads Content-Type with, it keeps the type and
// subtype with a bad parameter, but not with a parameter named twice.
func Parse(s string) (MediaType, error) {
	parts := splitUnquoted(s, ';')
	typ, subtype, ok := strings.Cut(strings.ToLower(strings.TrimSpace(parts[0])), "/")
	if !ok || typ == "" || subtype == "" || strings.ContainsAny(typ+subtype, "/ \t\"") || (typ == "*" && subtype != "*") {
		return MediaType{}, ErrNoMediaType
	}
	m := MediaType{Type: typ, Subtype: subtype, Params: map[string]string{}, Q: 1}
	for i, p := range parts[1:] {
		if strings.TrimSpace(p) == "" {
			if i == len(parts)-2 {
				break
			}
			return m, ErrBadParameter
		}
		name, value, ok := strings.Cut(p, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if !ok || !isToken(name) {
			return m, ErrBadParameter
		}
		value, ok = parameterValue(strings.TrimSpace(value))
		if !ok {
			return m, ErrBadParameter
		}
		if _, dup := m.Params[name]; dup {
			return MediaType{}, ErrBadParameter
		}
		m.Params[name] = value
	}
	return m, nil
}

// parameterValue reads a parameter's value: a token, or a quoted string whose backslashes
// escape the character that follows.
func parameterValue(v string) (string, bool) {
	if !strings.HasPrefix(v, `"`) {
		return v, isToken(v)
	}
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\':
			if i++; i == len(v) {
				return "", false
			}
			b.WriteByte(v[i])
		case '"':
			return b.String(), i == len(v)-1
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}

// isToken reports whether s is an RFC 9110 token: one or more visible ASCII characters other
// than the separators.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?={}`, c) >= 0 {
			return false
		}
	}
	return true
}

// ParseAccept splits an Accept header into its clauses, most preferred first: by quality, then
// in the order of the header (the order clients such as client-go rely on). Clauses with q=0
// (explicitly not acceptable) and malformed ones (Parse fails, or a quality that is not a
// number from 0 to 1) are dropped. An empty header accepts anything: */*.
func ParseAccept(header string) []MediaType {
	if strings.TrimSpace(header) == "" {
		return []MediaType{{Type: "*", Subtype: "*", Params: map[string]string{}, Q: 1}}
	}
	var out []MediaType
	for _, clause := range splitUnquoted(header, ',') {
		if strings.TrimSpace(clause) == "" {
			continue
		}
		m, err := Parse(clause)
		if err != nil {
			continue
		}
		if v, ok := m.Params["q"]; ok {
			q, err := strconv.ParseFloat(v, 64)
			if err != nil || q < 0 || q > 1 {
				continue
			}
			m.Q = q
			delete(m.Params, "q")
		}
		if m.Q > 0 {
			out = append(out, m)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Q > out[j].Q })
	return out
}

// splitUnquoted splits s at sep, ignoring separators inside double-quoted strings.
func splitUnquoted(s string, sep byte) []string {
	var parts []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && quoted:
			i++
		case c == '"':
			quoted = !quoted
		case c == sep && !quoted:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// SplitList splits a comma-separated header value (If-None-Match, a list of entity tags) at the
// commas outside double-quoted strings.
func SplitList(s string) []string { return splitUnquoted(s, ',') }
