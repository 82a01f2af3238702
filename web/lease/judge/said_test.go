package judge

import (
	"testing"

	"github.com/leaselab/leaselab/web/lease/internal/saidtest"
)

// TestSentencesInCatalog: the judge's sentences are in the screens' catalog, in both languages.
func TestSentencesInCatalog(t *testing.T) {
	saidtest.InCatalog(t, "judge", english)
	saidtest.InCatalog(t, "judge's causes", causeSentences)
}
