package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/lease/judge"
)

// momentsReply is what the time control reads from /ui/moments: the recorded window (From,
// the oldest moment the history read still has, to To, now) and the events in it, oldest
// first, as the judge tells them.
type momentsReply struct {
	From    string       `json:"from"`
	To      string       `json:"to"`
	Moments []momentItem `json:"moments"`
}

// momentItem is one event: the moment whose page tells it (written as in links), its kind (a feed kind, or
// judge.KindRole for a candidate's role change) and the judge's sentence.
type momentItem struct {
	At   string `json:"at"`
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// maxMoments bounds the events sent to the time control: the newest are kept.
const maxMoments = 2000

// moments serves GET /ui/moments?namespace=NS[&lease=NAME]: the events of the leases of the
// namespace (every namespace when it is empty), or of the one lease, for the time control.
func (u *historyScreen) moments(c echo.Context) error {
	ns, name := c.QueryParam("namespace"), c.QueryParam("lease")
	if name != "" && ns == "" {
		return echo.NewHTTPError(http.StatusBadRequest, "lease= needs namespace=")
	}
	now := u.opts.Now()
	reply, err := u.momentsOf(c.Request().Context(), ns, name, now)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache")
	c.Response().WriteHeader(http.StatusOK)
	enc := json.NewEncoder(c.Response())
	enc.SetEscapeHTML(false) // the texts are data for textContent, kept as the judge cut them
	return enc.Encode(reply)
}

// momentsOf gathers the window and the events of the leases of ns (or the lease name) up to now.
func (u *historyScreen) momentsOf(ctx context.Context, ns, name string, now time.Time) (momentsReply, error) {
	leases := []*coordinationv1.Lease{{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}}
	if name == "" {
		var err error
		if leases, _, err = u.listLeases(ctx, ns, moment{}); err != nil {
			return momentsReply{}, err
		}
	}
	from := now
	var told []judge.Told
	for _, l := range leases {
		st, err := u.story(ctx, l, now, false)
		if err != nil {
			return momentsReply{}, err
		}
		told = append(told, st.told...)
		told = append(told, judge.TellRoles(l.Namespace+"/"+l.Name, st.views)...)
		if len(st.changes) > 0 {
			from = minTime(from, st.changes[0].At)
		}
		if len(st.views) > 0 {
			from = minTime(from, st.views[0].At)
		}
	}
	// Each event is at the moment whose page tells it: a split brain, once it lasted.
	slices.SortStableFunc(told, func(a, b judge.Told) int { return a.KnownAt().Compare(b.KnownAt()) })
	told = told[max(0, len(told)-maxMoments):]
	reply := momentsReply{From: momentText(from), To: momentText(now), Moments: make([]momentItem, 0, len(told))}
	lang := i18n.FromContext(ctx)
	for _, t := range told {
		text := t.Text
		if !t.Says.IsZero() {
			text = t.Says.In(lang)
		}
		reply.Moments = append(reply.Moments, momentItem{At: momentText(t.KnownAt()), Kind: t.Kind, Text: text})
	}
	return reply, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// momentText writes the moment t as links do, rounded up to the millisecond: the page of that
// moment then includes what happened at t.
func momentText(t time.Time) string { return ceilMillisecond(t).UTC().Format(momentLayout) }

// ceilMillisecond is t rounded up to the millisecond, the precision of a moment in a link.
func ceilMillisecond(t time.Time) time.Time {
	return t.Add(time.Millisecond - 1).Truncate(time.Millisecond)
}
