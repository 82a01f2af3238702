package ui

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
	"rsc.io/qr"

	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/play/scenario"
)

// This file is the screens' side of the lesson whose cast is the room (scenario.Scenario.Room):
// its run sees the tabs the hub has on its lease (hubRoom), and its page has a panel with the
// join link, its QR code and the room's tabs, from which the instructor faults any of them,
// or a random third (the routes below).
//
//	POST /scenarios/:name/room/:action   fault (tab, cmd), third, heal, simulate (form)
//	GET  /scenarios/:name/room/qr        the QR code of the join link (PNG)

// hubRoom is a room lesson's room: the tabs the hub has on the lesson's lease.
type hubRoom struct{ h *Hub }

func (r hubRoom) Tabs(namespace, lease string) []scenario.RoomTab {
	var out []scenario.RoomTab
	for _, t := range r.h.TabsIn(namespace) {
		if t.Lease == lease {
			out = append(out, scenario.RoomTab{ID: t.ID, Report: t.Report})
		}
	}
	return out
}

func (r hubRoom) Command(id string, cmd tabproto.Command) error { return r.h.Command(id, "", cmd) }

// roomOf is the room a run of sc plays with: the hub's tabs for a room lesson, none for any
// other.
func (u *scenarioScreen) roomOf(sc *scenario.Scenario) scenario.Room {
	if !sc.Room {
		return nil
	}
	return hubRoom{u.hub}
}

// roomTabsOn are the tabs on the lease ns/lease, by identity.
func (u *scenarioScreen) roomTabsOn(ns, lease string) []TabInfo {
	var out []TabInfo
	for _, t := range u.hub.TabsIn(ns) {
		if t.Lease == lease {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b TabInfo) int { return strings.Compare(a.Identity, b.Identity) })
	return out
}

// roomLive adds a room lesson's panel to the live part l of its page, and to each step's
// narration what the room's tabs did; the room's tabs are on the panel, not among the
// members' cards. Any other lesson's live part is l.
func (u *scenarioScreen) roomLive(ctx context.Context, sc *scenario.Scenario, run *scenario.Run, l templates.ScenarioLive) templates.ScenarioLive {
	if !sc.Room {
		return l
	}
	lang := i18n.FromContext(ctx)
	if run != nil {
		for i := range l.Steps {
			l.Steps[i].Say = scenario.RoomOf(run).Narration(i).In(lang)
		}
		l.Members = nil
	}
	base := "/scenarios/" + sc.Name + "/room"
	r := &templates.ArenaRoom{Lease: sc.Namespace + "/" + sc.Lease, JoinURL: roomJoinURL(sc), QRURL: base + "/qr", Actions: base,
		CanSimulate: run != nil && l.Running && scenario.RoomOf(run).CanSimulate()}
	tabs := u.roomTabsOn(sc.Namespace, sc.Lease)
	r.Count = len(tabs)
	for _, t := range tabs {
		if t.Faults.Partition != tabproto.PartitionNone {
			r.Cut++
		}
	}
	// A large room's rows would be most of the page, sent again at every change: the tabs
	// the lesson is about (leaders, stale or faulted ones) first, and as many others as fit.
	slices.SortStableFunc(tabs, func(a, b TabInfo) int { return notable(b) - notable(a) })
	for _, t := range tabs[:min(len(tabs), maxRoomRows)] {
		f := t.Faults
		r.Tabs = append(r.Tabs, templates.ArenaTab{ID: t.ID, Identity: t.Identity, Owner: t.Owner, State: string(t.State), Stale: t.Stale,
			Faults: tabproto.Words(f.Describe(), string(lang)), Paused: f.Paused, Partitioned: f.Partition != tabproto.PartitionNone,
			Stopped: t.State == tabproto.StateStopped, LatencyMs: f.LatencyMs})
	}
	l.Room = r
	return l
}

// maxRoomRows bounds the rows of the room's panel; the rest are counted.
const maxRoomRows = 48

// notable is 1 for a tab the room's panel lists first: a leader, a stale one, a faulted or a
// stopped one; the others follow.
func notable(t TabInfo) int {
	if t.Role == tabproto.RoleLeader || t.Stale || t.State == tabproto.StateStopped || len(t.Faults.Describe()) > 0 {
		return 1
	}
	return 0
}

// roomJoinURL opens a candidate tab on a room lesson's lease, with its timings.
func roomJoinURL(sc *scenario.Scenario) string {
	return "/play?namespace=" + url.QueryEscape(sc.Namespace) + "&lease=" + url.QueryEscape(sc.Lease) + scenarioTimings(sc)
}

// roomQR serves GET /scenarios/:name/room/qr: the join link as a QR code, on the host the
// page was asked of (the projector's).
func (u *scenarioScreen) roomQR(c echo.Context) error {
	sc, err := u.roomScenario(c)
	if sc == nil {
		return err
	}
	scheme := "http"
	if c.Request().TLS != nil {
		scheme = "https"
	}
	code, err := qr.Encode(scheme+"://"+c.Request().Host+roomJoinURL(sc), qr.M)
	if err != nil {
		return err
	}
	code.Scale = 4
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, "image/png", code.PNG())
}

// roomScenario is the room lesson the path names; it answers 404 for any other.
func (u *scenarioScreen) roomScenario(c echo.Context) (*scenario.Scenario, error) {
	sc, err := u.findScenario(c)
	if sc == nil {
		return nil, err
	}
	if !sc.Room {
		return nil, u.fail(c, http.StatusNotFound, i18n.T(c.Request().Context(), "scn.notfound", sc.Name))
	}
	return sc, nil
}

// roomAction serves POST /scenarios/:name/room/{fault,third,heal,simulate}: the instructor's
// faults of the room's tabs (one tab's, a random third's, healing every cut one) and a
// simulated tab, as a form answered with a redirect to the page (or, from the panel's script, 204).
func (u *scenarioScreen) roomAction(c echo.Context) error {
	ctx := c.Request().Context()
	sc, err := u.roomScenario(c)
	if sc == nil {
		return err
	}
	seed, speed, ok, err := u.instructorsAction(c, sc)
	if !ok {
		return err
	}
	from := u.sender(c.Request())
	switch c.Param("action") {
	case "fault":
		err = u.roomFault(c.FormValue("tab"), c.FormValue("cmd"), from)
	case "third":
		u.roomThird(sc, from)
	case "heal":
		u.roomHeal(sc, from)
	case "simulate":
		run := u.scenarios.get(sc.Name, seed)
		if run == nil {
			return u.fail(c, http.StatusConflict, i18n.T(ctx, "scn.notrunning", c.FormValue("seed")))
		}
		scenario.RoomOf(run).Simulate()
	default:
		return u.fail(c, http.StatusNotFound, i18n.T(ctx, "arena.err.action", c.Param("action")))
	}
	if err != nil {
		return u.fail(c, http.StatusConflict, err.Error())
	}
	if c.Request().Header.Get("X-Requested-With") == "room-panel" {
		return c.NoContent(http.StatusNoContent)
	}
	extra := url.Values{}
	if c.QueryParam("present") == "1" {
		extra.Set("present", "1")
	}
	return c.Redirect(http.StatusSeeOther, scenarioURL(sc.Name, seed, speed, extra))
}

// sender is the signed-in user who sends a fault command ("" without authentication): the
// tab's page says who it came from.
func (u *scenarioScreen) sender(r *http.Request) string {
	if u.opts.TabUser != nil {
		if tu, ok := u.opts.TabUser(r); ok {
			return tu.Name
		}
	}
	return ""
}

// errRoomCommand refuses a fault the panel does not offer.
var errRoomCommand = errors.New("no such fault for a tab of the room")

// roomCommands are the faults of the panel's buttons, by the name a button posts: each sets
// or undoes one of a tab's faults, as the dashboard's buttons do.
var roomCommands = map[string]tabproto.Command{
	"pause":     {Type: tabproto.CommandPause},
	"resume":    {Type: tabproto.CommandResume},
	"partition": {Type: tabproto.CommandPartition, Mode: tabproto.PartitionHang},
	"heal":      {Type: tabproto.CommandHeal},
	"slow":      {Type: tabproto.CommandSlow}, // the tab's own delay: the first its renewals cannot outlast
	"fast":      {Type: tabproto.CommandSlow, LatencyMs: new(float64)},
	"crash":     {Type: tabproto.CommandCrash},
	"rejoin":    {Type: tabproto.CommandRejoin},
}

// roomFault sends one tab the fault its button names, through the hub.
func (u *scenarioScreen) roomFault(tab, name, from string) error {
	cmd, ok := roomCommands[name]
	if !ok {
		return errRoomCommand
	}
	return u.hub.Command(tab, from, cmd)
}

// roomThird cuts the network of a random third of the room's running tabs (their requests
// hang), those whose network is whole first: pressed again, it cuts another third.
func (u *scenarioScreen) roomThird(sc *scenario.Scenario, from string) {
	var tabs []TabInfo
	for _, t := range u.roomTabsOn(sc.Namespace, sc.Lease) {
		if t.State != tabproto.StateStopped {
			tabs = append(tabs, t)
		}
	}
	rand.Shuffle(len(tabs), func(i, j int) { tabs[i], tabs[j] = tabs[j], tabs[i] })
	slices.SortStableFunc(tabs, func(a, b TabInfo) int {
		return boolOrder(a.Faults.Partition != tabproto.PartitionNone) - boolOrder(b.Faults.Partition != tabproto.PartitionNone)
	})
	for _, t := range tabs[:scenario.AThird(len(tabs))] {
		u.roomSend(t, from, roomCommands["partition"])
	}
}

// roomHeal heals the network of every tab of the room whose network is cut.
func (u *scenarioScreen) roomHeal(sc *scenario.Scenario, from string) {
	for _, t := range u.roomTabsOn(sc.Namespace, sc.Lease) {
		if t.Faults.Partition != tabproto.PartitionNone {
			u.roomSend(t, from, roomCommands["heal"])
		}
	}
}

// roomSend sends a tab of the room cmd; a tab that left meanwhile is no error.
func (u *scenarioScreen) roomSend(t TabInfo, from string, cmd tabproto.Command) {
	if err := u.hub.Command(t.ID, from, cmd); err != nil {
		u.log.Info("room fault not delivered", slog.String("tab", t.Identity), slog.String("command", cmd.Type), slog.Any("error", err))
	}
}

func boolOrder(b bool) int {
	if b {
		return 1
	}
	return 0
}
