package ui

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/lease/traffic"
	"github.com/leaselab/leaselab/web/lease/views"
)

// TabInfo is one connected candidate tab as the hub shows it: what the tab last reported about
// itself, plus what the hub knows and decides. Its JSON is the report's fields followed by the
// hub's, in this order, as programs that follow /ui/tabs/watch read it; their ActiveFaults are
// the tab's faults in the language they asked for, as the server words them (forDashboard),
// whatever words the tab sent. The dashboard's board renders its rows from it (liveDash).
type TabInfo struct {
	// ID is the id the hub gave the tab.
	ID string `json:"id"`
	tabproto.Report
	// SteppingDown is decided by the hub from the report (see tabproto.Report.SteppingDown),
	// never taken from the tab.
	SteppingDown bool `json:"steppingDown"`
	// Stale is decided by the hub from the report (see tabproto.Report.Stale): the tab
	// believes it leads while the record it last read names another holder. Omitted when
	// false, so that the list is what it has always been for every other tab.
	Stale bool `json:"stale,omitempty"`
	// ConnectedAt is when the tab connected, Unix ms on the server's clock.
	ConnectedAt int64 `json:"connectedAt"`
	// Owner is the authenticated user who opened the tab, set by the hub (never by the tab);
	// empty on a server without authentication.
	Owner string `json:"owner"`
	// ReceivedMs is when the hub received the report, Unix ms on the server's clock: the stage
	// places the report's timers and requests by it. Not sent to dashboards.
	ReceivedMs int64 `json:"-"`
}

// TabUser is who opened a candidate tab, on a server with authentication.
type TabUser struct {
	// Name is the authenticated user name; dashboards see it as the Owner of the user's tabs.
	Name string
	// Namespaces, when not nil, are the only namespaces the user's tabs may report (a
	// participant's own and the arena); nil lets them report any (the instructor).
	Namespaces []string
}

// mayReport says whether u's tabs may report a tab of namespace ns.
func (u TabUser) mayReport(ns string) bool {
	return u.Namespaces == nil || slices.Contains(u.Namespaces, ns)
}

// Hub connects candidate tabs with dashboards, in memory: tabs report their state, dashboards
// follow the list and send fault commands that the hub forwards to one tab. Every queue is
// bounded: a tab that does not take its commands is disconnected, and a dashboard only ever
// gets the latest list.
type Hub struct {
	log *slog.Logger
	now func() time.Time
	// views, when set, records each tab's view of its lease (see web/lease/views).
	views *views.Recorder
	// requests, when set, keeps the requests each tab reports for the stage's past (see
	// web/lease/traffic).
	requests *traffic.Keeper

	mu   sync.Mutex
	tabs map[string]*hubTab
	// inNamespace are the reported tabs of each namespace: a dashboard that follows one is
	// told its changes without a look at every other tab.
	inNamespace map[string]map[*hubTab]struct{}
	watchers    map[*hubWatcher]struct{}
	version     uint64 // bumped on every change of the list
	encVer      uint64
	encoded     map[i18n.Lang][]byte // the "tabs" message of every namespace for encVer, by language
	// gone are the tabs removed from the list, with the version that removed each, oldest
	// first, for the changes since a version (tabsSince); at most maxGoneTabs.
	gone []goneTab
	// goneFloor is the newest version whose removals gone no longer holds: changes since an
	// older version are the whole list again.
	goneFloor uint64
	// deltas are the "tabsChanged" messages to version deltaVer, by the version they start
	// from: dashboards that follow at the same pace share one encoding.
	deltaVer uint64
	deltas   map[deltaKey][]byte
}

// goneTab is a tab removed from the list at version.
type goneTab struct {
	id, namespace string
	version       uint64
}

// maxGoneTabs bounds the removals the hub remembers for dashboards that follow the changes; a
// dashboard further behind gets the whole list.
const maxGoneTabs = 4096

// hubTab is one connected tab.
type hubTab struct {
	id       string
	owner    TabUser
	info     TabInfo
	reported bool
	// changed is the version of the list at the tab's last report.
	changed uint64
	// out holds messages for the tab; when it is full the tab is disconnected.
	out  chan []byte
	kick func()
	// obey, for a seat (an in-process candidate), carries out its fault commands instead of
	// out.
	obey func(tabproto.Command) error
}

// deltaKey is a "tabsChanged" message's audience: the version it starts from, the namespace
// followed ("": all) and the dashboard's language.
type deltaKey struct {
	from      uint64
	namespace string
	lang      i18n.Lang
}

// hubWatcher is one dashboard following the list.
type hubWatcher struct {
	// namespace is the one namespace the dashboard follows; empty for all of them. A
	// participant's dashboard opens on the participant's own: it is not woken, nor written
	// to, for the other tabs' reports, which it hides.
	namespace string
	// lang is the dashboard's language, the tabs' faults are worded in.
	lang i18n.Lang
	// notify has room for one signal: changes coalesce into the next send.
	notify chan struct{}
}

// tabQueue bounds the messages waiting for one tab.
const tabQueue = 16

// NewHub returns an empty hub.
func NewHub(logger *slog.Logger, now func() time.Time) *Hub {
	if now == nil {
		now = time.Now
	}
	return &Hub{log: logger, now: now, tabs: map[string]*hubTab{}, inNamespace: map[string]map[*hubTab]struct{}{}, watchers: map[*hubWatcher]struct{}{}}
}

func newTabID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// addTab registers a tab opened by owner (the zero TabUser on a server without
// authentication); kick disconnects it.
func (h *Hub) addTab(owner TabUser, kick func()) *hubTab {
	t := &hubTab{id: newTabID(), owner: owner, out: make(chan []byte, tabQueue), kick: kick}
	t.info.ConnectedAt = h.now().UnixMilli()
	h.mu.Lock()
	h.tabs[t.id] = t
	h.mu.Unlock()
	return t
}

// removeTab forgets a tab that disconnected.
func (h *Hub) removeTab(t *hubTab) {
	h.mu.Lock()
	_, ok := h.tabs[t.id]
	delete(h.tabs, t.id)
	if ok && t.reported {
		h.leaveNamespaceLocked(t, t.info.Namespace)
		h.changedLocked(t.info.Namespace)
		if len(h.gone) == maxGoneTabs {
			h.goneFloor = h.gone[0].version
			h.gone = append(h.gone[:0], h.gone[1:]...)
		}
		h.gone = append(h.gone, goneTab{id: t.id, namespace: t.info.Namespace, version: h.version})
	}
	info := t.info
	h.mu.Unlock()
	if ok && t.reported && h.views != nil {
		// The tab closed: its candidate is gone, as a process that exits.
		h.views.Gone(info.Identity, info.Namespace, info.Lease, sourceOf(info.Report), h.now())
	}
}

// errTabNamespace refuses a report of a tab in a namespace its owner may not write in.
var errTabNamespace = errors.New("may not report a tab in this namespace")

// report stores what a tab says about itself, under the name of the user who opened it. A
// report of a namespace the owner may not write in is refused and changes nothing. It returns
// the report's validation error (see tabproto.Report.Clean), an error wrapping
// errTabNamespace, or an error when the tab is gone.
func (h *Hub) report(t *hubTab, r tabproto.Report) error {
	if err := r.Clean(); err != nil {
		return err
	}
	if !t.owner.mayReport(r.Namespace) {
		return fmt.Errorf("%w: %q only in %s", errTabNamespace, t.owner.Name, strings.Join(t.owner.Namespaces, ", "))
	}
	h.mu.Lock()
	if _, ok := h.tabs[t.id]; !ok {
		h.mu.Unlock()
		return errors.New("tab is gone")
	}
	prev := t.info.Report
	received := h.now()
	t.info = TabInfo{ID: t.id, Report: r, SteppingDown: r.SteppingDown(), Stale: r.Stale(), ConnectedAt: t.info.ConnectedAt, Owner: t.owner.Name, ReceivedMs: received.UnixMilli()}
	wasReported := t.reported
	t.reported = true
	if wasReported && prev.Namespace != r.Namespace {
		h.leaveNamespaceLocked(t, prev.Namespace)
		h.changedLocked(prev.Namespace, r.Namespace)
	} else {
		h.changedLocked(r.Namespace)
	}
	if h.inNamespace[r.Namespace] == nil {
		h.inNamespace[r.Namespace] = map[*hubTab]struct{}{}
	}
	h.inNamespace[r.Namespace][t] = struct{}{}
	t.changed = h.version
	h.mu.Unlock()
	if h.views != nil {
		if wasReported && !sameCandidate(prev, r) {
			h.views.Gone(prev.Identity, prev.Namespace, prev.Lease, sourceOf(prev), h.now())
		}
		h.views.ReportBy(t.owner.Name, r, sourceOf(r), received)
	}
	if h.requests != nil {
		h.requests.Add(r.Namespace, r.Lease, traffic.FromReport(r, received.UnixMilli(), stageLink(r.Faults))...)
	}
	return nil
}

// sourceOf says where a report comes from, for the views' record.
func sourceOf(r tabproto.Report) string {
	if r.Native {
		return views.SourceNative
	}
	return views.SourceTab
}

// sameCandidate reports whether two reports are of one candidate of one lease.
func sameCandidate(a, b tabproto.Report) bool {
	return a.Identity == b.Identity && a.Namespace == b.Namespace && a.Lease == b.Lease
}

// leaveNamespaceLocked takes t out of the index of namespace ns.
func (h *Hub) leaveNamespaceLocked(t *hubTab, ns string) {
	delete(h.inNamespace[ns], t)
	if len(h.inNamespace[ns]) == 0 {
		delete(h.inNamespace, ns)
	}
}

// changedLocked counts a change of the list, to tabs of namespaces, and wakes the dashboards
// that follow them.
func (h *Hub) changedLocked(namespaces ...string) {
	h.version++
	for w := range h.watchers {
		if w.namespace != "" && !slices.Contains(namespaces, w.namespace) {
			continue
		}
		select {
		case w.notify <- struct{}{}:
		default:
		}
	}
}

// TabsIn returns the tabs of namespace ns that reported themselves, as Tabs orders them.
func (h *Hub) TabsIn(ns string) []TabInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tabsInLocked(ns)
}

// countOn is how many tabs that reported themselves are candidates of the lease ns/lease.
func (h *Hub) countOn(ns, lease string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for t := range h.tabsOfLocked(ns) {
		if t.reported && t.info.Lease == lease {
			n++
		}
	}
	return n
}

// Tabs returns the tabs that reported themselves, by namespace, lease and connection time.
func (h *Hub) Tabs() []TabInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tabsLocked()
}

func (h *Hub) tabsLocked() []TabInfo { return h.tabsInLocked("") }

// tabsInLocked is tabsLocked of namespace ns ("": every namespace).
func (h *Hub) tabsInLocked(ns string) []TabInfo {
	out := make([]TabInfo, 0, len(h.tabs))
	for t := range h.tabsOfLocked(ns) {
		if t.reported {
			out = append(out, t.info)
		}
	}
	slices.SortFunc(out, func(a, b TabInfo) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		if c := strings.Compare(a.Lease, b.Lease); c != 0 {
			return c
		}
		if a.ConnectedAt != b.ConnectedAt {
			return int(a.ConnectedAt - b.ConnectedAt)
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// encodedTabs is the "tabs" message with the current list of namespace ns ("": every
// namespace) for dashboards in lang, the whole list encoded once per change and language and
// shared by every dashboard.
func (h *Hub) encodedTabs(ns string, lang i18n.Lang) []byte {
	b, _ := h.encodedTabsAt(ns, lang)
	return b
}

// encodedTabsAt is encodedTabs and the version of the list it holds.
func (h *Hub) encodedTabsAt(ns string, lang i18n.Lang) ([]byte, uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.encVer != h.version {
		h.encoded, h.encVer = nil, h.version
	}
	if b, ok := h.encoded[lang]; ok && ns == "" {
		return b, h.version
	}
	b, err := json.Marshal(struct {
		Type string    `json:"type"`
		Tabs []TabInfo `json:"tabs"`
	}{"tabs", forDashboard(h.tabsInLocked(ns), lang)})
	if err != nil {
		h.log.Error("encode tabs", slog.Any("error", err))
		return []byte(`{"type":"tabs","tabs":[]}`), h.version
	}
	if ns == "" {
		if h.encoded == nil {
			h.encoded = map[i18n.Lang][]byte{}
		}
		h.encoded[lang] = b
	}
	return b, h.version
}

// forDashboard is tabs as a dashboard in lang is told them: each tab's ActiveFaults are its
// faults worded in lang. tabs is changed in place.
func forDashboard(tabs []TabInfo, lang i18n.Lang) []TabInfo {
	for i := range tabs {
		tabs[i].ActiveFaults = tabproto.Words(tabs[i].Faults.Describe(), string(lang))
	}
	return tabs
}

// tabsOfLocked yields the tabs of namespace ns: every tab when ns is empty, else the reported
// tabs of ns.
func (h *Hub) tabsOfLocked(ns string) iter.Seq[*hubTab] {
	return func(yield func(*hubTab) bool) {
		if ns != "" {
			for t := range h.inNamespace[ns] {
				if !yield(t) {
					return
				}
			}
			return
		}
		for _, t := range h.tabs {
			if !yield(t) {
				return
			}
		}
	}
}

// tabsChanged is the message of what changed in the list since version from: the tabs that
// reported since (in no particular order) and the ids of those removed since. It returns the
// version it brings a dashboard to, and instead the whole "tabs" list when the hub no longer
// knows every removal since from. Dashboards at the same version share one encoding.
func (h *Hub) tabsChanged(from uint64, ns string, lang i18n.Lang) ([]byte, uint64) {
	h.mu.Lock()
	if from < h.goneFloor {
		h.mu.Unlock()
		return h.encodedTabsAt(ns, lang)
	}
	defer h.mu.Unlock()
	if h.deltaVer != h.version || h.deltas == nil {
		h.deltaVer, h.deltas = h.version, map[deltaKey][]byte{}
	}
	key := deltaKey{from, ns, lang}
	if b, ok := h.deltas[key]; ok {
		return b, h.version
	}
	changed := []TabInfo{}
	for t := range h.tabsOfLocked(ns) {
		if t.reported && t.changed > from {
			changed = append(changed, t.info)
		}
	}
	gone := []string{}
	for i := len(h.gone) - 1; i >= 0 && h.gone[i].version > from; i-- {
		if ns == "" || h.gone[i].namespace == ns {
			gone = append(gone, h.gone[i].id)
		}
	}
	b, err := json.Marshal(struct {
		Type string    `json:"type"`
		Tabs []TabInfo `json:"tabs"`
		Gone []string  `json:"gone"`
	}{"tabsChanged", forDashboard(changed, lang), gone})
	if err != nil {
		h.log.Error("encode tab changes", slog.Any("error", err))
		return []byte(`{"type":"tabsChanged","tabs":[],"gone":[]}`), h.version
	}
	h.deltas[key] = b
	return b, h.version
}

// tabChanges is what changed in the list since version from, for the dashboard's board: the
// tabs that reported since (in no particular order) and the ids of those removed since; with
// whole, every reported tab instead, when from is 0 or the hub no longer knows every removal
// since from. It returns the version it brings the board to.
func (h *Hub) tabChanges(from uint64) (tabs []TabInfo, gone []string, whole bool, version uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if from == 0 || from < h.goneFloor {
		return h.tabsLocked(), nil, true, h.version
	}
	for t := range h.tabsOfLocked("") {
		if t.reported && t.changed > from {
			tabs = append(tabs, t.info)
		}
	}
	for i := len(h.gone) - 1; i >= 0 && h.gone[i].version > from; i-- {
		gone = append(gone, h.gone[i].id)
	}
	return tabs, gone, false, h.version
}

func (h *Hub) addWatcher(namespace string, lang i18n.Lang) *hubWatcher {
	w := &hubWatcher{namespace: namespace, lang: lang, notify: make(chan struct{}, 1)}
	h.mu.Lock()
	h.watchers[w] = struct{}{}
	h.mu.Unlock()
	return w
}

func (h *Hub) removeWatcher(w *hubWatcher) {
	h.mu.Lock()
	delete(h.watchers, w)
	h.mu.Unlock()
}

// Errors of Command and CommandOwn.
var (
	ErrNoSuchTab = errors.New("no such tab: it may have been closed")
	ErrTabSlow   = errors.New("the tab is not taking commands: disconnected it")
	ErrNotYours  = errors.New("only the instructor may inject faults into tabs that others opened")
)

// CommandOwn forwards a fault command to one of the tabs that user opened: ErrNotYours for
// anyone else's, so that what one participant does cannot hurt another.
func (h *Hub) CommandOwn(user, tabID string, cmd tabproto.Command) error {
	return h.command(tabID, cmd, user, func(owner TabUser) bool { return owner.Name == user })
}

// Command forwards a fault command that from sent (the signed-in user; "" without tokens) to
// one tab. It returns ErrNoSuchTab, ErrTabSlow, or the reason the command was refused (see
// tabproto.Command.Validate).
func (h *Hub) Command(tabID, from string, cmd tabproto.Command) error {
	return h.command(tabID, cmd, from, nil)
}

// command forwards cmd, sent by from, to the tab tabID when mine, if set, accepts the tab's
// owner.
func (h *Hub) command(tabID string, cmd tabproto.Command, from string, mine func(TabUser) bool) error {
	msg, err := tabproto.EncodeCommand(cmd, from)
	if err != nil {
		return err
	}
	h.mu.Lock()
	t := h.tabs[tabID]
	h.mu.Unlock()
	if t == nil {
		return ErrNoSuchTab
	}
	if mine != nil && !mine(t.owner) {
		return ErrNotYours
	}
	if t.obey != nil {
		return t.obey(cmd)
	}
	if !t.send(msg) {
		return ErrTabSlow
	}
	return nil
}

// send queues a message for the tab, disconnecting it when its queue is full.
func (t *hubTab) send(msg []byte) bool {
	select {
	case t.out <- msg:
		return true
	default:
		t.kick()
		return false
	}
}

// Seat is an in-process candidate shown among the tabs (a scenario's member): it reports as a
// tab does, without a connection, and obeys the dashboard's fault commands itself.
type Seat struct {
	h *Hub
	t *hubTab
}

// Enter seats an in-process candidate opened by owner; obey carries out the fault commands
// sent to it.
func (h *Hub) Enter(owner TabUser, obey func(tabproto.Command) error) *Seat {
	t := h.addTab(owner, func() {})
	t.obey = obey
	return &Seat{h: h, t: t}
}

// Report shows what the candidate says about itself, as a tab's report (refused, and logged,
// when a tab's would be).
func (s *Seat) Report(r tabproto.Report) {
	// The candidate's own list of requests, which Clean would cut in place while the candidate
	// goes on writing it.
	r.Flights = slices.Clone(r.Flights)
	if err := s.h.report(s.t, r); err != nil {
		s.h.log.Debug("seat report refused", slog.String("identity", r.Identity), slog.Any("error", err))
	}
}

// Leave takes the candidate off the list, as a closed tab.
func (s *Seat) Leave() { s.h.removeTab(s.t) }
