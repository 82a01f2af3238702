// Package saidtest checks, for the tests of the packages that speak (web/lease/said), that the screens'
// catalog knows their sentences.
package saidtest

import (
	"testing"

	"github.com/leaselab/leaselab/templates/i18n"
)

// InCatalog fails tb unless every sentence of english (a package's sentences in English, by key)
// is in the catalog of templates/i18n with the same English and a Chinese of its own: the package
// says them in English itself (for the test kit, the command and the controller's log), the
// screens in their reader's language. name names the package in failures.
func InCatalog(tb testing.TB, name string, english map[string]string) {
	tb.Helper()
	if len(english) < 20 {
		tb.Errorf("%s has only %d sentences", name, len(english))
	}
	msgs := i18n.Messages()
	for k, en := range english {
		m, ok := msgs[k]
		switch {
		case !ok:
			tb.Errorf("%s says %q, which the catalog lacks", name, k)
		case m.En != en:
			tb.Errorf("%s: %q is %q in the catalog, %q in %s", name, k, m.En, en, name)
		case m.Zh == "" || m.Zh == m.En && en != "%s":
			tb.Errorf("%s: %q has no Chinese of its own: %q", name, k, m.Zh)
		}
	}
}
