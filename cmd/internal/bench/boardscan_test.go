package bench

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestScanBoardCards: the scanner finds what decoding the message finds, for messages as
// encoding/json writes them (the shape of web/play/ui's board messages), with strings that hold
// quotes, braces, brackets and key-like text, and refuses what is not a board message.
func TestScanBoardCards(t *testing.T) {
	type card struct {
		Namespace       string `json:"namespace"`
		Name            string `json:"name"`
		Holder          string `json:"holder"`
		ExpiresMs       int64  `json:"expiresMs"`
		DurationSeconds int32  `json:"durationSeconds"`
		OverlapText     string `json:"overlapText"`
	}
	type feed struct {
		Text      string `json:"text"`
		Namespace string `json:"namespace"`
	}
	type message struct {
		Type  string `json:"type"`
		Cards []card `json:"cards"`
		Gone  []card `json:"gone,omitempty"`
		Feed  []feed `json:"feed"`
	}
	tricky := `a "quoted" {brace} [bracket] \ "expiresMs":1 "namespace":"x"},{`
	msgs := []message{
		{Type: "board"},
		{Type: "board", Cards: []card{}},
		{Type: "board", Cards: []card{
			{Namespace: "p1", Name: "tab-0", Holder: tricky, ExpiresMs: 1764000000123, DurationSeconds: 10, OverlapText: tricky},
			{Namespace: "p2", Name: "tab-1", Holder: "]", ExpiresMs: 0, DurationSeconds: 15},
			{Namespace: "p3", Name: "tab-2", ExpiresMs: -5, DurationSeconds: 0},
		}, Gone: []card{{Namespace: "gone", Name: "x", ExpiresMs: 9}}, Feed: []feed{{Text: tricky, Namespace: "feedonly"}}},
	}
	for _, m := range msgs {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var want []boardCard
		for _, c := range m.Cards {
			want = append(want, boardCard{Namespace: c.Namespace, Name: c.Name, ExpiresMs: c.ExpiresMs, DurationSeconds: int64(c.DurationSeconds)})
		}
		var got []boardCard
		if err := scanBoardCards(b, func(c boardCard) { got = append(got, c) }); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", b, got, want)
		}
	}
	for _, bad := range []string{
		`{"type":"board"}`,
		`{"type":"board","cards":{}}`,
		`{"type":"board","cards":[{"namespace":"a","name":"b"`,
		`{"type":"board","cards":[{"name":"b"}]}`,
		`{"type":"board","cards":[1]}`,
		`{"type":"board","cards":[`,
	} {
		if err := scanBoardCards([]byte(bad), func(boardCard) {}); err == nil {
			t.Errorf("%s: no error", bad)
		} else if !strings.Contains(err.Error(), "board") {
			t.Errorf("%s: %v does not say what it read", bad, err)
		}
	}
}
