package ui

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/lease/recording"
)

// history serves /ui/history?namespace=NS&lease=NAME: the recording of a namespace, of one
// lease of it, or of everything (web/lease/recording), as a file to download, read from one
// snapshot of the server's database.
func (u *historyScreen) history(c echo.Context) error {
	scope := recording.Scope{Namespace: c.QueryParam("namespace"), Lease: c.QueryParam("lease")}
	if err := scope.Validate(); err != nil {
		return u.failSays(c, http.StatusBadRequest, i18n.Say("error.noRecording", err.Error()))
	}
	src, ok := u.store.(store.LogReader)
	if !ok {
		return u.failSays(c, http.StatusNotImplemented, i18n.Say("error.noLog"))
	}
	// The recording's time is the wall clock's, also on a replay, whose screens' clock stands
	// still.
	now := time.Now()
	w := &download{c: c, name: recording.FileName(scope, now)}
	if err := u.rec.Write(c.Request().Context(), w, src, scope, now); err != nil {
		if w.started {
			// Too late for an error page: the file is cut short, which replay refuses (its
			// header announces what it holds).
			u.log.Warn("recording download cut short", slog.Any("error", err))
			return nil
		}
		if errors.Is(err, recording.ErrNothingToRecord) {
			return u.failSays(c, http.StatusNotFound, i18n.Say("error.noRecording", err.Error()))
		}
		return err
	}
	if !w.started {
		w.start()
	}
	return nil
}

// download sends the response's headers with its first bytes, so that a recording that fails
// before it gets an error page instead of a file.
type download struct {
	c       echo.Context
	name    string
	started bool
}

func (d *download) start() {
	d.started = true
	h := d.c.Response().Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("Content-Disposition", `attachment; filename="`+d.name+`"`)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	d.c.Response().WriteHeader(http.StatusOK)
}

func (d *download) Write(p []byte) (int, error) {
	if !d.started {
		d.start()
	}
	return d.c.Response().Write(p)
}
