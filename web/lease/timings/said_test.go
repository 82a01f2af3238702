package timings

import (
	"testing"

	"github.com/leaselab/leaselab/web/lease/internal/saidtest"
)

// TestSentencesInCatalog: the calculator's sentences are in the screens' catalog, in both
// languages.
func TestSentencesInCatalog(t *testing.T) { saidtest.InCatalog(t, "timings", english) }
