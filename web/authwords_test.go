package web

import (
	"net/http/httptest"
	"testing"
)

// TestAuthWords: the workshop's own pages get the language the screens would choose, their
// catalog's words in it, the switch to the other and, for ?lang=, the cookie keeping it.
func TestAuthWords(t *testing.T) {
	r := httptest.NewRequest("GET", "/join?token=t&lang=zh", nil)
	w := AuthWords(r)
	if w.Lang != "zh" || w.HTMLLang != "zh-CN" || w.T("auth.join.title") != "加入" ||
		w.Switch != "/join?lang=en&token=t" || w.Keep == nil || w.Keep.Value != "zh" {
		t.Errorf("?lang=zh: %+v, title %q", w, w.T("auth.join.title"))
	}
	r = httptest.NewRequest("GET", "/workshop", nil)
	r.Header.Set("Accept-Language", "fr, en;q=0.5")
	if w := AuthWords(r); w.Lang != "en" || w.T("auth.ws.title") != "Workshop" || w.Keep != nil {
		t.Errorf("Accept-Language fr, en: %+v", w)
	}
}
