package election

import (
	"strings"
	"testing"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/lease/internal/saidtest"
)

// TestSentencesInCatalog: the controller's sentences are in the screens' catalog, in both
// languages, and the catalog has no controller sentence the controller does not know.
func TestSentencesInCatalog(t *testing.T) {
	saidtest.InCatalog(t, "election", english)
	for k := range i18n.Messages() {
		if _, ok := english[k]; strings.HasPrefix(k, "election.") && !ok {
			t.Errorf("the catalog has %q, which the election controller does not say", k)
		}
	}
}
