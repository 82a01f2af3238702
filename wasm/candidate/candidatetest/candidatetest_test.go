//go:build !js

package candidatetest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/wasm/candidate/candidatetest"
)

var epoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func TestManualClock(t *testing.T) {
	c := candidatetest.NewManualClock(epoch)
	var fired []string
	c.AfterFunc(2*time.Second, func() { fired = append(fired, "2s@"+c.Now().Sub(epoch).String()) })
	t1 := c.AfterFunc(time.Second, func() { fired = append(fired, "1s") })
	c.AfterFunc(time.Second, func() {
		fired = append(fired, "1s-b")
		c.AfterFunc(500*time.Millisecond, func() { fired = append(fired, "1.5s") })
	})
	if !t1.Stop() || t1.Stop() {
		t.Error("Stop should report a pending timer once")
	}
	c.Advance(3 * time.Second)
	if got := strings.Join(fired, ","); got != "1s-b,1.5s,2s@2s" {
		t.Errorf("fired %s", got)
	}
	if c.Now() != epoch.Add(3*time.Second) || c.Pending() != 0 {
		t.Errorf("now %s pending %d", c.Now(), c.Pending())
	}
}
