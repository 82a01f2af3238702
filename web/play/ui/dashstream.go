package ui

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/a-h/templ"
	"github.com/coder/websocket"
	"github.com/labstack/echo/v4"

	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
)

// The dashboard's stream: each dashboard is sent what changed in the live part (dashlive.go)
// that it shows, rendered for its language and its user, each message encoded once for the
// dashboards that see the same, and sends back its fault commands for the tabs.

// dashSub is one dashboard following the live part: in a language, of one namespace ("": all),
// for a user.
type dashSub struct {
	lang i18n.Lang
	ns   string
	who  templates.SignedIn
	// room says that the dashboard shows the room: the instructor's, following every namespace.
	room bool
	// key is the audience (lang, ns, who): dashboards of one audience share each message.
	key string
	outbox
}

// dashMessage is one message of /ui/dashboard/watch. Put are the elements rendered again, Gone
// the ids of those removed, Feed the new feed lines (oldest first) and Renewals the renewals
// counted since the last message. History says that something happened that the time control
// marks. The first message says Reset: Keep are the ids of every card and row of the live part,
// the dashboard removes the others, and Feed replaces its feed; that message and those that
// follow it at once put every element (a large live part comes in several messages, each
// written within wsWriteTimeout).
type dashMessage struct {
	Type     string         `json:"type"`
	Reset    bool           `json:"reset,omitempty"`
	Keep     []string       `json:"keep,omitempty"`
	Put      []dashFragment `json:"put,omitempty"`
	Gone     []string       `json:"gone,omitempty"`
	Feed     []string       `json:"feed,omitempty"`
	Renewals int            `json:"renewals,omitempty"`
	History  bool           `json:"history,omitempty"`
}

// dashFragment is one element as its component renders it. An element of a list (In, the
// list's id) goes before the element Before ("": last); another takes the place of the
// element of its id.
type dashFragment struct {
	ID     string `json:"id"`
	In     string `json:"in,omitempty"`
	Before string `json:"before,omitempty"`
	HTML   string `json:"html"`
}

// fragment is entry e of list l for dashboard s: its element, before the next one s shows.
func (d *liveDash) fragment(l int, e *liveEntry, s *dashSub) dashFragment {
	sorted := d.sortedLocked(l)
	f := dashFragment{ID: e.id, In: liveListIDs[l], HTML: d.entryHTML(e, s)}
	if i := d.lists[l].index[e.id] + 1; i < len(sorted) && s.shows(sorted[i].ns) {
		f.Before = sorted[i].id
	}
	return f
}

// entryHTML renders an element for dashboard s, once per language and permission.
func (d *liveDash) entryHTML(e *liveEntry, s *dashSub) string {
	var c templ.Component
	may := false
	switch m := e.model.(type) {
	case templates.LeaseCard:
		m.Writable = s.who.MayWrite(m.Namespace)
		may, c = m.Writable, templates.CardFragment(m)
	case templates.Tab:
		m.Commandable = s.who.MayCommand(m.Owner)
		may, c = m.Commandable, templates.TabRowFragment(m, d.slow)
	case templates.CandidateRow:
		c = templates.CandidateFragment(m)
	case templates.ElectionRow:
		c = templates.ElectionFragment(m, d.election)
	}
	v := liveVariant{s.lang, may}
	if h, ok := d.html[e.id][v]; ok {
		return h
	}
	h := renderHTML(c, s.lang)
	if d.html[e.id] == nil {
		d.html[e.id] = map[liveVariant]string{}
	}
	d.html[e.id][v] = h
	return h
}

// logFragment is the newest decision in tab t's row, rendered once per language.
func (d *liveDash) logFragment(t templates.Tab, lang i18n.Lang) dashFragment {
	id, v := templates.TabLogID(t.ID), liveVariant{lang: lang}
	h, ok := d.html[id][v]
	if !ok {
		h = renderHTML(templates.TabLogFragment(t), lang)
		if d.html[id] == nil {
			d.html[id] = map[liveVariant]string{}
		}
		d.html[id][v] = h
	}
	return dashFragment{ID: id, HTML: h}
}

// renderHTML is c rendered in lang.
func renderHTML(c templ.Component, lang i18n.Lang) string {
	var sb strings.Builder
	if err := c.Render(i18n.WithLang(context.Background(), lang), &sb); err != nil {
		return "" // the components write to memory: they do not fail
	}
	return sb.String()
}

// singletons are the elements of dashboard s outside the lists that changed with ch (all of
// them when ch is nil): the number of tabs, the names the Open tab form suggests and the room.
func (d *liveDash) singletons(ch *liveChange, s *dashSub) []dashFragment {
	var out []dashFragment
	put := func(id string, c templ.Component) {
		out = append(out, dashFragment{ID: id, HTML: renderHTML(c, s.lang)})
	}
	if ch == nil || ch.moved[liveTabs] {
		n := 0
		for _, e := range d.sortedLocked(liveTabs) {
			n += b2i(s.shows(e.ns))
		}
		put(templates.TabCountID, templates.TabCountFragment(n))
	}
	if ch == nil || ch.moved[liveCards] || ch.namespaces {
		put(templates.NamespaceFilterID, templates.NamespaceFilterFragment(d.namespacesFor(s.ns), s.ns))
	}
	if ch == nil || ch.moved[liveCards] {
		var cards []templates.LeaseCard
		for _, e := range d.sortedLocked(liveCards) {
			if s.shows(e.ns) {
				cards = append(cards, e.model.(templates.LeaseCard))
			}
		}
		put(templates.LeaseNamesID, templates.LeaseNamesFragment(cards))
	}
	if s.room && (ch == nil || ch.room) {
		for i, c := range templates.RoomFragments(d.room) {
			put([]string{templates.RoomCountID, templates.RoomListID, templates.RoomEmptyID}[i], c)
		}
	}
	return out
}

// messageLocked is what ch changed for dashboard s, encoded; nil when nothing it shows changed.
func (d *liveDash) messageLocked(ch *liveChange, s *dashSub, feed map[int]string) []byte {
	m := dashMessage{Type: "dash"}
	for l := range liveLists {
		start := len(m.Put)
		for id, in := range ch.put {
			if e := d.lists[l].entries[id]; in == l && e != nil && s.shows(e.ns) {
				m.Put = append(m.Put, d.fragment(l, e, s))
			}
		}
		index := d.lists[l].index
		slices.SortFunc(m.Put[start:], func(a, b dashFragment) int { return cmp.Compare(index[a.ID], index[b.ID]) })
	}
	for _, g := range ch.gone {
		if !s.shows(g.ns) {
			continue
		}
		// An element that moved to another namespace the dashboard shows is put, not gone.
		if l, ok := ch.put[g.id]; ok && s.shows(d.lists[l].entries[g.id].ns) {
			continue
		}
		m.Gone = append(m.Gone, g.id)
	}
	for _, id := range ch.logs {
		if _, ok := ch.put[id]; ok {
			continue // the whole row is sent
		}
		if e := d.lists[liveTabs].entries[id]; e != nil && s.shows(e.ns) {
			m.Put = append(m.Put, d.logFragment(e.model.(templates.Tab), s.lang))
		}
	}
	m.Put = append(m.Put, d.singletons(ch, s)...)
	for i, f := range ch.feed {
		if !s.shows(f.Namespace) {
			continue
		}
		if _, ok := feed[i]; !ok {
			f.Fresh = true
			feed[i] = renderHTML(templates.FeedFragment(f), s.lang)
		}
		m.Feed = append(m.Feed, feed[i])
	}
	m.Renewals, m.History = ch.renewals, len(ch.history) > 0
	if s.ns != "" {
		m.Renewals, m.History = ch.renewalsIn[s.ns], ch.history[s.ns]
	}
	if len(m.Put)+len(m.Gone)+len(m.Feed)+m.Renewals == 0 && !m.History {
		return nil
	}
	return m.encode()
}

// encode is m as sent. Its HTML is not escaped further (\u003c for <): the message is read as
// JSON, never put in a page, and HTML is most of it.
func (m dashMessage) encode() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(m) // strings and numbers: it does not fail
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// sendLocked sends what ch changed to every dashboard that shows some of it, each message
// encoded once per audience; a dashboard too far behind is dropped and reconnects.
func (d *liveDash) sendLocked(ch *liveChange) {
	if len(d.subs) == 0 {
		return
	}
	encoded := map[string][]byte{}
	feeds := map[i18n.Lang]map[int]string{} // the new feed lines, rendered once per language
	for s := range d.subs {
		data, ok := encoded[s.key]
		if !ok {
			if feeds[s.lang] == nil {
				feeds[s.lang] = map[int]string{}
			}
			data = d.messageLocked(ch, s, feeds[s.lang])
			encoded[s.key] = data
		}
		if data == nil {
			continue
		}
		if !s.offer(data) {
			delete(d.subs, s)
		}
	}
}

// resetChunk bounds the fragments of one message of a dashboard's first messages: a room of
// hundreds of tabs is a few megabytes of rows, which a slow network may not take within one
// write's timeout.
const resetChunk = 256 << 10

// resetLocked is the whole live part for dashboard s, as its first messages; feed is the
// board's feed, oldest first.
func (d *liveDash) resetLocked(s *dashSub, feed []templates.FeedItem) [][]byte {
	first := dashMessage{Type: "dash", Reset: true, Keep: []string{}}
	for _, f := range feed {
		if s.shows(f.Namespace) {
			first.Feed = append(first.Feed, renderHTML(templates.FeedFragment(f), s.lang))
		}
	}
	var puts []dashFragment
	for l := range liveLists {
		for _, e := range d.sortedLocked(l) {
			if s.shows(e.ns) {
				first.Keep = append(first.Keep, e.id)
				puts = append(puts, d.fragment(l, e, s))
			}
		}
	}
	msgs := []dashMessage{first}
	size := 0
	for _, f := range append(puts, d.singletons(nil, s)...) {
		if m := &msgs[len(msgs)-1]; size+len(f.HTML) <= resetChunk || len(m.Put) == 0 {
			m.Put, size = append(m.Put, f), size+len(f.HTML)
			continue
		}
		msgs, size = append(msgs, dashMessage{Type: "dash", Put: []dashFragment{f}}), len(f.HTML)
	}
	out := make([][]byte, len(msgs))
	for i, m := range msgs {
		out[i] = m.encode()
	}
	return out
}

// shows says whether the dashboard shows namespace ns.
func (s *dashSub) shows(ns string) bool { return s.ns == "" || s.ns == ns }

// addLocked adds a dashboard of namespace ns ("": all) in lang for who.
func (d *liveDash) addLocked(lang i18n.Lang, ns string, who templates.SignedIn) *dashSub {
	s := &dashSub{lang: lang, ns: ns, who: who, room: who.Instructor && who.Name != "" && ns == "",
		key:    fmt.Sprintf("%s\x00%s\x00%s\x00%t\x00%s", lang, ns, who.Name, who.Instructor, strings.Join(who.Namespaces, " ")),
		outbox: newOutbox()}
	d.subs[s] = struct{}{}
	return s
}

// dropAllLocked drops every dashboard and forgets the live part: the board stopped, and the
// dashboards reconnect to a fresh one.
func (d *liveDash) dropAllLocked() {
	for s := range d.subs {
		s.drop()
		delete(d.subs, s)
	}
	d.clear()
}

// dashboardWatch serves GET /ui/dashboard/watch[?namespace=]: the dashboard's live part over a
// WebSocket, of the namespace the page shows (every namespace without one), in the request's
// language and for its user. The first message is the whole live part, then what changes
// (dashMessage). The dashboard sends fault commands for candidate tabs the other way, as over
// /ui/tabs/watch; a refused one is answered with {"type":"error","tab":...,"error":...}.
func (u *dashboardScreen) dashboardWatch(c echo.Context) error {
	conn, err := acceptWS(c, watchReadLimit)
	if err != nil {
		u.log.Debug("dashboard watch refused", slog.Any("error", err))
		return nil
	}
	who, _ := u.signedIn(c.Request())
	sub, first, err := u.board.follow(c.Request().Context(), c.QueryParam("namespace"), who)
	if err != nil {
		u.log.Error("dashboard live", slog.Any("error", err))
		conn.Close(websocket.StatusInternalError, "the dashboard could not be read") //said:english a WebSocket close reason, read by developers
		return nil
	}
	defer u.board.unfollow(sub)
	// The stream lives with the server, not with the hijacked request.
	ctx, cancel := context.WithCancel(u.opts.Context)
	defer cancel()
	replies := make(chan []byte, 8)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer cancel()
		u.commands.obeyDashboard(ctx, c.Request(), conn, replies)
	})
	status, reason := u.followLive(ctx, conn, sub, first, replies)
	cancel()
	wg.Wait()
	conn.Close(status, reason) // a no-op when the reader closed it
	return nil
}

// followLive writes a dashboard's first messages, then what its subscription is sent and the
// replies to its commands, until ctx ends, the dashboard falls behind or a write fails; it
// returns how to close the connection.
func (u *dashboardScreen) followLive(ctx context.Context, conn *websocket.Conn, sub *dashSub, first [][]byte, replies <-chan []byte) (websocket.StatusCode, string) {
	for _, msg := range first {
		if err := wsWrite(ctx, conn, msg); err != nil {
			return websocket.StatusGoingAway, "write failed"
		}
	}
	for {
		var msg []byte
		select {
		case <-ctx.Done():
			return websocket.StatusNormalClosure, ""
		case <-sub.dropped:
			return websocket.StatusTryAgainLater, "fell behind: reconnect"
		case msg = <-replies:
		case msg = <-sub.msgs:
		}
		if err := wsWrite(ctx, conn, msg); err != nil {
			return websocket.StatusGoingAway, "write failed"
		}
	}
}
