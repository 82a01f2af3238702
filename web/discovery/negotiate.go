package discovery

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// mediaRange is one clause of an Accept header.
type mediaRange struct {
	typ, subtype string
	params       map[string]string // lower-case keys, q removed
	q            float64
}

// parseAccept splits an Accept header into its clauses, most preferred first: by quality,
// then by order of appearance (the order clients such as client-go rely on). Clauses with
// q=0 (explicitly not acceptable) and malformed clauses are dropped. An empty header
// accepts anything.
func parseAccept(header string) []mediaRange {
	if strings.TrimSpace(header) == "" {
		return []mediaRange{{typ: "*", subtype: "*", q: 1}}
	}
	var out []mediaRange
	for _, clause := range splitUnquoted(header, ',') {
		m, ok := parseMediaRange(clause)
		if ok && m.q > 0 {
			out = append(out, m)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].q > out[j].q })
	return out
}

// parseMediaRange parses one Accept clause: type/subtype followed by ;name=value
// parameters, values possibly quoted. It is deliberately more lenient than
// mime.ParseMediaType, which rejects the "@" in the OpenAPI protobuf media type client-go
// sends.
func parseMediaRange(clause string) (mediaRange, bool) {
	parts := splitUnquoted(clause, ';')
	typ, subtype, ok := strings.Cut(strings.ToLower(strings.TrimSpace(parts[0])), "/")
	if !ok || typ == "" || subtype == "" || strings.ContainsAny(typ+subtype, "/ \t\"") || (typ == "*" && subtype != "*") {
		return mediaRange{}, false
	}
	m := mediaRange{typ: typ, subtype: subtype, params: map[string]string{}, q: 1}
	for _, p := range parts[1:] {
		name, value, ok := strings.Cut(p, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if !ok || name == "" {
			return mediaRange{}, false
		}
		value = strings.TrimSpace(value)
		if unquoted, err := strconv.Unquote(value); err == nil && strings.HasPrefix(value, `"`) {
			value = unquoted
		}
		if name == "q" {
			q, err := strconv.ParseFloat(value, 64)
			if err != nil || q < 0 || q > 1 {
				return mediaRange{}, false
			}
			m.q = q
			continue
		}
		m.params[name] = value
	}
	return m, true
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

// matches reports whether the clause accepts the concrete media type typ/subtype.
func (m mediaRange) matches(typ, subtype string) bool {
	return (m.typ == "*" || m.typ == typ) && (m.subtype == "*" || m.subtype == subtype)
}

// etagMatches reports whether an If-None-Match header matches the quoted entity tag etag,
// using the weak comparison RFC 9110 prescribes for If-None-Match.
func etagMatches(ifNoneMatch, etag string) bool {
	for _, tag := range splitUnquoted(ifNoneMatch, ',') {
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
			return true
		}
	}
	return false
}

// setNoCache marks a response the way the real API server marks everything it does not
// explicitly allow caches to keep.
func setNoCache(h http.Header) {
	h.Set("Cache-Control", "no-cache, private")
}
