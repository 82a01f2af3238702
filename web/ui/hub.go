package ui

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// TabInfo is one connected candidate tab as the hub shows it to dashboards: what the tab last
// reported about itself, plus the id the hub gave it.
type TabInfo struct {
	ID           string    `json:"id"`
	Identity     string    `json:"identity"`
	Namespace    string    `json:"namespace"`
	Lease        string    `json:"lease"`
	State        string    `json:"state"`
	Role         string    `json:"role"`
	Holder       string    `json:"holder"`
	Faults       TabFaults `json:"faults"`
	ActiveFaults []string  `json:"activeFaults"`
	LastLog      TabLog    `json:"lastLog"`
	// Coordinated is true when the tab runs in Coordinated Leader Election mode; then
	// BinaryVersion, EmulationVersion and Strategy are what its LeaseCandidate declares, and
	// PreferredHolder is the server's spec.preferredHolder in the lease record it last read.
	// A plain tab has none of them.
	Coordinated      bool   `json:"coordinated"`
	BinaryVersion    string `json:"binaryVersion"`
	EmulationVersion string `json:"emulationVersion"`
	Strategy         string `json:"strategy"`
	PreferredHolder  string `json:"preferredHolder"`
	// SteppingDown is decided by the hub from the above: a coordinated tab that leads or holds
	// the lease while the server prefers another candidate.
	SteppingDown bool `json:"steppingDown"`
	// ConnectedAt is when the tab connected, Unix ms on the server's clock.
	ConnectedAt int64 `json:"connectedAt"`
	// Owner is the authenticated user who opened the tab, set by the hub (never by the tab);
	// empty on a server without authentication.
	Owner string `json:"owner"`
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

// TabFaults are a tab's active faults, as its snapshot has them.
type TabFaults struct {
	Paused        bool   `json:"paused"`
	Partition     string `json:"partition"`
	LatencyMs     int64  `json:"latencyMs"`
	ClockOffsetMs int64  `json:"clockOffsetMs"`
}

// TabLog is the newest line of a tab's decision log.
type TabLog struct {
	At   int64  `json:"at"`
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// tabStates are the states a tab may report (its data-state).
var tabStates = []string{"leader", "follower", "paused", "partitioned", "stopped"}

// Limits on what a tab may report; longer strings are cut.
const (
	maxIdentityLen = 253
	maxNameLen     = 253
	maxTextLen     = 300
	maxFaults      = 8
	maxVersionLen  = 64
)

// clean makes a reported tab safe to keep and show: known state, bounded strings.
func (t *TabInfo) clean() error {
	if !slices.Contains(tabStates, t.State) {
		return fmt.Errorf("unknown state %q", truncate(t.State, 40))
	}
	t.Identity = truncate(t.Identity, maxIdentityLen)
	t.Namespace = truncate(t.Namespace, maxNameLen)
	t.Lease = truncate(t.Lease, maxNameLen)
	t.Holder = truncate(t.Holder, maxIdentityLen)
	t.Role = truncate(t.Role, 20)
	t.Faults.Partition = truncate(t.Faults.Partition, 20)
	if len(t.ActiveFaults) > maxFaults {
		t.ActiveFaults = t.ActiveFaults[:maxFaults]
	}
	for i, f := range t.ActiveFaults {
		t.ActiveFaults[i] = truncate(f, 100)
	}
	if t.ActiveFaults == nil {
		t.ActiveFaults = []string{}
	}
	t.LastLog.Kind = truncate(t.LastLog.Kind, 20)
	t.LastLog.Text = truncate(t.LastLog.Text, maxTextLen)
	if t.Coordinated {
		t.BinaryVersion = truncate(t.BinaryVersion, maxVersionLen)
		t.EmulationVersion = truncate(t.EmulationVersion, maxVersionLen)
		t.Strategy = truncate(t.Strategy, maxVersionLen)
		t.PreferredHolder = truncate(t.PreferredHolder, maxIdentityLen)
	} else {
		t.BinaryVersion, t.EmulationVersion, t.Strategy, t.PreferredHolder = "", "", "", ""
	}
	t.SteppingDown = t.Coordinated && t.PreferredHolder != "" && t.PreferredHolder != t.Identity &&
		(t.Role == "leader" || t.Holder == t.Identity)
	return nil
}

// truncate cuts s to at most n bytes on a rune boundary, and drops invalid UTF-8.
func truncate(s string, n int) string {
	s = strings.ToValidUTF8(s, "")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// TabCommand is a fault command for a tab's worker: the worker's own message (see
// wasm/candidate.Worker), restricted to the fault commands.
type TabCommand struct {
	Type      string   `json:"type"`
	Mode      string   `json:"mode,omitempty"`
	LatencyMs *float64 `json:"latencyMs,omitempty"`
	Seconds   *float64 `json:"seconds,omitempty"`
}

// validate refuses anything but a known fault command with sane values.
func (c TabCommand) validate() error {
	switch c.Type {
	case "pause", "resume", "heal", "release", "crash", "rejoin", "snapshot":
		return nil
	case "partition":
		if c.Mode != "" && c.Mode != "hang" && c.Mode != "fail" {
			return fmt.Errorf("partition mode must be hang or fail")
		}
		return nil
	case "slow":
		if c.LatencyMs != nil && (*c.LatencyMs < 0 || *c.LatencyMs > 600_000) {
			return errors.New("latencyMs must be between 0 and 600000")
		}
		return nil
	case "clockOffset":
		if c.Seconds == nil || *c.Seconds < -86_400 || *c.Seconds > 86_400 {
			return errors.New("clockOffset needs seconds between -86400 and 86400")
		}
		return nil
	}
	return fmt.Errorf("unknown command %q", truncate(c.Type, 40))
}

// Hub connects candidate tabs with dashboards, in memory: tabs report their state, dashboards
// follow the list and send fault commands that the hub forwards to one tab. Every queue is
// bounded: a tab that does not take its commands is disconnected, and a dashboard only ever
// gets the latest list.
type Hub struct {
	log *slog.Logger
	now func() time.Time

	mu       sync.Mutex
	tabs     map[string]*hubTab
	watchers map[*hubWatcher]struct{}
	version  uint64 // bumped on every change of the list
	encVer   uint64
	encoded  []byte // the "tabs" message for encVer
}

// hubTab is one connected tab.
type hubTab struct {
	id       string
	owner    TabUser
	info     TabInfo
	reported bool
	// out holds messages for the tab; when it is full the tab is disconnected.
	out  chan []byte
	kick func()
}

// hubWatcher is one dashboard following the list.
type hubWatcher struct {
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
	return &Hub{log: logger, now: now, tabs: map[string]*hubTab{}, watchers: map[*hubWatcher]struct{}{}}
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
	defer h.mu.Unlock()
	if _, ok := h.tabs[t.id]; !ok {
		return
	}
	delete(h.tabs, t.id)
	if t.reported {
		h.changedLocked()
	}
}

// errTabNamespace refuses a report of a tab in a namespace its owner may not write in.
var errTabNamespace = errors.New("may not report a tab in this namespace")

// report stores what a tab says about itself, under the name of the user who opened it. A
// report of a namespace the owner may not write in is refused and changes nothing.
func (h *Hub) report(t *hubTab, info TabInfo) error {
	if err := info.clean(); err != nil {
		return err
	}
	if !t.owner.mayReport(info.Namespace) {
		return fmt.Errorf("%w: %q only in %s", errTabNamespace, t.owner.Name, strings.Join(t.owner.Namespaces, ", "))
	}
	info.Owner = t.owner.Name
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.tabs[t.id]; !ok {
		return errors.New("tab is gone")
	}
	info.ID, info.ConnectedAt = t.id, t.info.ConnectedAt
	t.info, t.reported = info, true
	h.changedLocked()
	return nil
}

func (h *Hub) changedLocked() {
	h.version++
	for w := range h.watchers {
		select {
		case w.notify <- struct{}{}:
		default:
		}
	}
}

// Tabs returns the tabs that reported themselves, by namespace, lease and connection time.
func (h *Hub) Tabs() []TabInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tabsLocked()
}

func (h *Hub) tabsLocked() []TabInfo {
	out := make([]TabInfo, 0, len(h.tabs))
	for _, t := range h.tabs {
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

// encodedTabs is the "tabs" message with the current list, encoded once per change and shared
// by every dashboard.
func (h *Hub) encodedTabs() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.encoded != nil && h.encVer == h.version {
		return h.encoded
	}
	b, err := json.Marshal(struct {
		Type string    `json:"type"`
		Tabs []TabInfo `json:"tabs"`
	}{"tabs", h.tabsLocked()})
	if err != nil {
		h.log.Error("encode tabs", slog.Any("error", err))
		return []byte(`{"type":"tabs","tabs":[]}`)
	}
	h.encoded, h.encVer = b, h.version
	return b
}

func (h *Hub) addWatcher() *hubWatcher {
	w := &hubWatcher{notify: make(chan struct{}, 1)}
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

// Errors of Command.
var (
	ErrNoSuchTab = errors.New("no such tab: it may have been closed")
	ErrTabSlow   = errors.New("the tab is not taking commands: disconnected it")
)

// Command forwards a fault command to one tab. It returns ErrNoSuchTab, ErrTabSlow, or the
// reason the command was refused.
func (h *Hub) Command(tabID string, cmd TabCommand) error {
	if err := cmd.validate(); err != nil {
		return err
	}
	msg, err := json.Marshal(struct {
		Type    string     `json:"type"`
		Command TabCommand `json:"command"`
	}{"command", cmd})
	if err != nil {
		return err
	}
	h.mu.Lock()
	t := h.tabs[tabID]
	h.mu.Unlock()
	if t == nil {
		return ErrNoSuchTab
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
