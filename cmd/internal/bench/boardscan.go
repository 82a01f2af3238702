package bench

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// boardCard is what a simulated dashboard needs of one lease card of a board message.
type boardCard struct {
	Namespace, Name            string
	ExpiresMs, DurationSeconds int64
}

// scanBoardCards reads the lease cards of a board message (web/play/ui's board stream, compact JSON
// as encoding/json writes it) without decoding the rest: 201 dashboards in one process decode
// what 201 browsers would, and a full decode of every message made the load generator, not
// the server, the slowest part of a workshop run. A key can be matched by its quoted bytes
// because the encoder escapes every quote inside a string.
func scanBoardCards(msg []byte, f func(boardCard)) error {
	i := bytes.Index(msg, []byte(`"cards":`))
	if i < 0 {
		return fmt.Errorf("board message without cards: %.200s", msg)
	}
	i += len(`"cards":`)
	if bytes.HasPrefix(msg[i:], []byte("null")) {
		return nil
	}
	if i >= len(msg) || msg[i] != '[' {
		return fmt.Errorf("board message: cards are not a list: %.200s", msg[i:])
	}
	for i++; i < len(msg); {
		switch msg[i] {
		case ']':
			return nil
		case ',', ' ', '\n', '\t', '\r':
			i++
		case '{':
			end, err := objectEnd(msg, i)
			if err != nil {
				return err
			}
			var c boardCard
			obj := msg[i:end]
			var ok1, ok2 bool
			c.Namespace, ok1 = jsonString(obj, "namespace")
			c.Name, ok2 = jsonString(obj, "name")
			if !ok1 || !ok2 {
				return fmt.Errorf("board card without a namespace and name: %.200s", obj)
			}
			c.ExpiresMs, _ = jsonInt(obj, "expiresMs")
			c.DurationSeconds, _ = jsonInt(obj, "durationSeconds")
			f(c)
			i = end
		default:
			return fmt.Errorf("board message: unexpected %q in the cards", msg[i])
		}
	}
	return errors.New("board message: the cards do not end")
}

// objectEnd returns the index just past the JSON object that begins at msg[start], skipping
// strings with their escapes.
func objectEnd(msg []byte, start int) (int, error) {
	depth := 0
	for i := start; i < len(msg); i++ {
		switch msg[i] {
		case '"':
			for i++; i < len(msg) && msg[i] != '"'; i++ {
				if msg[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		}
	}
	return 0, errors.New("board message: a card does not end")
}

// jsonInt returns the integer value of the first "key":N pair in compact JSON.
func jsonInt(msg []byte, key string) (int64, bool) {
	pat := `"` + key + `":`
	i := bytes.Index(msg, []byte(pat))
	if i < 0 {
		return 0, false
	}
	v := msg[i+len(pat):]
	end := 0
	for end < len(v) && (v[end] == '-' || v[end] >= '0' && v[end] <= '9') {
		end++
	}
	n, err := strconv.ParseInt(string(v[:end]), 10, 64)
	return n, err == nil
}
