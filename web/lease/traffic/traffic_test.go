package traffic

import (
	"context"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/wasm/tabproto"
)

var t0 = time.Date(2026, 11, 28, 14, 2, 0, 0, time.UTC)

// clock is a clock the test sets: the store dates its changes by it.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

func openStore(t *testing.T, c *clock) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "requests.db"), sqlite.Options{CompactInterval: -1, Now: c.Now}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newKeeper is a Keeper that writes only when the test flushes it.
func newKeeper(t *testing.T, db *sqlite.DB, c *clock) *Keeper {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no flushes of its own: the test flushes
	k := NewKeeper(ctx, db, slog.New(slog.DiscardHandler), c.Now)
	<-k.Done()
	return k
}

func ms(d time.Duration) int64 { return t0.Add(d).UnixMilli() }

// TestKeptAndReadAtAMoment: a candidate's requests (reported in flight, then ended) and a
// client's seen at the door are written in batches, and read back at a moment as the stage
// draws them then: a request running then without its end, one that just ended with its
// outcome, none that ended long before or began after.
func TestKeptAndReadAtAMoment(t *testing.T) {
	ctx := context.Background()
	c := &clock{now: t0}
	db := openStore(t, c)
	k := newKeeper(t, db, c)

	// alice's clock runs 10 s ahead; her report arrives at t0+1s with a PUT that hangs in a
	// partition, and a GET answered long before.
	rep := tabproto.Report{Identity: "alice", Clock: ms(11 * time.Second), Flights: []tabproto.Flight{
		{ID: 1, Verb: "GET", StartMs: ms(-20 * time.Second), EndMs: ms(-19 * time.Second), Outcome: "200"},
		{ID: 2, Verb: "PUT", StartMs: ms(10500 * time.Millisecond)},
	}}
	k.Add("ns", "x", FromReport(rep, ms(time.Second), "cut")...)
	k.Add("ns", "x", Request{ID: "door/1", Identity: "kubectl", Verb: "PUT", Outcome: "409", StartMs: ms(2 * time.Second), EndMs: ms(2010 * time.Millisecond), Door: true})
	c.set(t0.Add(2 * time.Second))
	k.Flush(ctx)
	// Reported again unchanged, arriving 3 ms later on its clock: nothing new to write.
	rep.Clock += 500
	k.Add("ns", "x", FromReport(rep, ms(1503*time.Millisecond), "cut")...)
	cur, _, _ := db.Revision(ctx)
	c.set(t0.Add(4 * time.Second))
	k.Flush(ctx)
	if again, _, _ := db.Revision(ctx); again != cur {
		t.Fatalf("an unchanged report wrote %d changes", again-cur)
	}
	// The PUT is given up at its timeout, 10 s after it left.
	rep.Clock, rep.Flights[1].EndMs, rep.Flights[1].Outcome = ms(20*time.Second), ms(20500*time.Millisecond), tabproto.FlightTimeout
	k.Add("ns", "x", FromReport(rep, ms(10*time.Second), "cut")...)
	c.set(t0.Add(11 * time.Second))
	k.Flush(ctx)

	at := func(d time.Duration) map[string]string {
		rs, err := At(ctx, db, "ns", "x", t0.Add(d), 4*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range rs {
			got[r.ID] = r.Identity + " " + r.Verb + " " + r.Outcome + " " + r.Link + " " + strconv.FormatInt(r.StartMs-t0.UnixMilli(), 10)
		}
		return got
	}
	if got := at(3 * time.Second); len(got) != 2 || got["alice/2"] != "alice PUT  cut 500" || got["door/1"] != "kubectl PUT 409  2000" {
		t.Errorf("at t0+3s: %v, want alice's PUT in flight since t0+0.5s and kubectl's 409", got)
	}
	if got := at(12 * time.Second); len(got) != 1 || got["alice/2"] != "alice PUT timeout cut 500" {
		t.Errorf("at t0+12s: %v, want alice's PUT timed out", got)
	}
	if got := at(300 * time.Millisecond); len(got) != 0 {
		t.Errorf("at t0+0.3s: %v, want nothing (the GET ended 19 s before)", got)
	}
}

// TestBatchIsBounded: a lease with more requests than MaxBatch between two batches keeps the
// end of a request written in flight, the writes and what failed, before the GETs answered.
func TestBatchIsBounded(t *testing.T) {
	ctx := context.Background()
	c := &clock{now: t0}
	db := openStore(t, c)
	k := newKeeper(t, db, c)
	k.Add("ns", "x", Request{ID: "bob/1", Identity: "bob", Verb: "GET", StartMs: ms(0)})
	k.Flush(ctx)
	for i := range 2 * MaxBatch {
		k.Add("ns", "x", Request{ID: "door/" + strconv.Itoa(i), Identity: "load", Verb: "GET", Outcome: "200", StartMs: ms(time.Duration(i) * time.Millisecond), EndMs: ms(time.Duration(i+1) * time.Millisecond), Door: true})
	}
	k.Add("ns", "x", Request{ID: "bob/1", Identity: "bob", Verb: "GET", Outcome: "200", StartMs: ms(0), EndMs: ms(time.Second)})
	k.Add("ns", "x", Request{ID: "door/put", Identity: "kubectl", Verb: "PUT", Outcome: "409", StartMs: ms(0), EndMs: ms(time.Millisecond), Door: true})
	k.Add("ns", "x", Request{ID: "carol/1", Identity: "carol", Verb: "GET", Outcome: "refused", StartMs: ms(0), EndMs: ms(0)})
	k.Flush(ctx)
	evs, err := db.History(ctx, Key("ns", "x"), 0)
	if err != nil || len(evs) != 2 {
		t.Fatalf("%d batches (%v), want 2", len(evs), err)
	}
	b, err := BatchOf(evs[1].Object)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]Request{}
	for _, r := range b.Requests {
		ids[r.ID] = r
	}
	if len(b.Requests) != MaxBatch || ids["bob/1"].Outcome != "200" || ids["door/put"].ID == "" || ids["carol/1"].ID == "" {
		t.Errorf("batch of %d: bob's end %+v, kubectl's PUT %+v, carol's refusal %+v", len(b.Requests), ids["bob/1"], ids["door/put"], ids["carol/1"])
	}
	if _, ok := ids["door/"+strconv.Itoa(2*MaxBatch-1)]; !ok {
		t.Errorf("the newest GET was dropped before older ones")
	}
}

// TestFromReportFollowsTheClock: a candidate's instants are placed on the server's clock by
// the report's arrival, at its clock's rate.
func TestFromReportFollowsTheClock(t *testing.T) {
	rep := tabproto.Report{Identity: "alice", Clock: 50_000, Faults: tabproto.Faults{ClockRate: 2},
		Flights: []tabproto.Flight{{ID: 7, Verb: "PUT", StartMs: 46_000, EndMs: 48_000, Outcome: "200"}}}
	rs := FromReport(rep, 1_000_000, "slow")
	if len(rs) != 1 || rs[0].StartMs != 998_000 || rs[0].EndMs != 999_000 || rs[0].ID != "alice/7" || rs[0].Link != "slow" {
		t.Fatalf("%+v", rs)
	}
}
