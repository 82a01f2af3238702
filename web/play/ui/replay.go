package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/api/status"
)

// Replay describes the recording a read-only server replays (leaselab replay): its screens
// show it in a banner, candidate tabs cannot join, and the dashboard commands no tab.
type Replay struct {
	// File is the recording, as it was named on the command line.
	File string
	// Scope says what it records ("lease demo/x", "namespace demo"); "" for everything.
	Scope string
	// From and To are its earliest and latest commit times; the server's clock stands at To.
	From, To time.Time
	// FirstRevision and LastRevision are the revisions of its first and last change.
	FirstRevision, LastRevision int64
	// Changes is how many changes it holds.
	Changes int64
}

// Refusal is why the server refuses to change anything, for every refusal to say the same.
//
//said:english the API's refusal (a Status message), which kubectl prints as the API words it
func (r *Replay) Refusal() string {
	return fmt.Sprintf("this server replays the recording %q, read-only: nothing can be created, changed or deleted", r.File)
}

// banner is the view model of the replay banner on every page; nil when the server is live.
func (r *Replay) banner() *templates.Replay {
	if r == nil {
		return nil
	}
	return &templates.Replay{
		File:          r.File,
		Scope:         r.Scope,
		ScopeSays:     r.scopeSays(),
		From:          r.From.Local().Format("2006-01-02 15:04:05"),
		To:            clockTime(r.To),
		FirstRevision: r.FirstRevision,
		LastRevision:  r.LastRevision,
		Changes:       r.Changes,
	}
}

// scopeSays is the scope in both languages: "lease demo/x" is "租约 demo/x".
func (r *Replay) scopeSays() i18n.Text {
	if kind, name, ok := strings.Cut(r.Scope, " "); ok && (kind == "lease" || kind == "namespace") {
		return i18n.Say("replay.scope."+kind, name)
	}
	return i18n.Same(r.Scope)
}

// refuseTab answers a candidate tab's connection on a replay: there is nothing a tab could
// run against.
func (u *tabScreen) refuseTab(c echo.Context) error {
	msg := "candidate tabs cannot join: " + u.opts.Replay.Refusal() //said:english an API Status, as the API words it
	status.Write(c.Response(), c.Request(), status.MethodNotAllowed(schema.GroupResource{}, "", msg), status.Filter)
	return nil
}

// replayProblem is what a candidate tab's page says on a replay.
func (u *tabScreen) replayProblem() i18n.Text {
	if u.opts.Replay == nil {
		return i18n.Text{}
	}
	return i18n.Say("replay.noTabs", u.opts.Replay.File)
}
