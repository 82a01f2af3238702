package judge

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestTimeScale: a lease whose writers' clocks run at another rate (a guided scenario at 2x
// annotates its writes so) holds for leaseDurationSeconds of their clock, on the server's
// clock leaseDurationSeconds divided by the scale; the record's own expiry stays on the
// holder's clock; a missing or senseless annotation is no scale; and a change of scale alone
// does not restart the hold.
func TestTimeScale(t *testing.T) {
	lease := func(scale string) *coordinationv1.Lease {
		l := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To("alice"),
			LeaseDurationSeconds: ptr.To[int32](10),
			RenewTime:            &metav1.MicroTime{Time: at(0)},
		}}
		if scale != "" {
			l.Annotations = map[string]string{TimeScaleAnnotation: scale}
		}
		return l
	}
	for _, c := range []struct {
		scale string
		hold  time.Duration
	}{
		{"", 10 * time.Second},
		{"1", 10 * time.Second},
		{"2", 5 * time.Second},
		{"4", 2500 * time.Millisecond},
		{"0.25", 40 * time.Second},
		{"0", 10 * time.Second},
		{"-2", 10 * time.Second},
		{"NaN", 10 * time.Second},
		{"1e9", 10 * time.Second},
		{"fast", 10 * time.Second},
	} {
		ch := ChangeOf(lease(c.scale), 1, at(0), nil)
		if got := ch.Expiry().Sub(at(0)); got != c.hold {
			t.Errorf("scale %q: holds %v, want %v", c.scale, got, c.hold)
		}
		if got := ch.RecordExpiry(); !got.Equal(at(10)) {
			t.Errorf("scale %q: record expiry %v, want renewTime + 10 s", c.scale, got)
		}
		if Status(ch, ch.Expiry().Add(-time.Millisecond)) != StatusHeld || Status(ch, ch.Expiry()) != StatusExpired {
			t.Errorf("scale %q: not held until %v and expired from then", c.scale, ch.Expiry())
		}
	}
	first := ChangeOf(lease("1"), 1, at(0), nil)
	faster := ChangeOf(lease("2"), 2, at(1), &first)
	if !faster.Since().Equal(at(0)) || !faster.Expiry().Equal(at(5)) {
		t.Errorf("a change of scale alone: hold since %v until %v, want since 0 s until 5 s", faster.Since(), faster.Expiry())
	}
}
