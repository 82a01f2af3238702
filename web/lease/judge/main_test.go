package judge

import (
	"os"
	"testing"
	"time"
)

// TestMain runs the tests in UTC, whatever the machine's zone: the sentences say their times in
// the server's local time, and the tests' expected sentences are written for UTC.
func TestMain(m *testing.M) {
	time.Local = time.UTC
	os.Exit(m.Run())
}
