package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/api/inprocess"
)

// dashboardUserAgent makes the API record the dashboard as the field manager of its writes.
const dashboardUserAgent = "leaselab-dashboard"

// createLease handles the "New lease" form. The lease is created by the API handler itself, so
// the same validation, defaulting and namespace handling apply as to kubectl; refusals are
// shown on the dashboard with the API's message.
func (u *dashboardScreen) createLease(c echo.Context) error {
	ctx := c.Request().Context()
	form := templates.LeaseForm{
		Namespace: strings.TrimSpace(c.FormValue("namespace")),
		Name:      strings.TrimSpace(c.FormValue("name")),
	}
	switch {
	case form.Namespace == "":
		refuse(&form, i18n.Say("form.namespaceRequired"))
	default:
		for _, msg := range validation.IsDNS1123Label(form.Namespace) {
			refuse(&form, i18n.Say("form.badNamespace", form.Namespace, msg))
		}
	}
	if form.Name == "" {
		refuse(&form, i18n.Say("form.nameRequired"))
	}
	code := http.StatusUnprocessableEntity
	if len(form.Errors) == 0 {
		lease := coordinationv1.Lease{
			TypeMeta:   metav1.TypeMeta{APIVersion: coordinationv1.SchemeGroupVersion.String(), Kind: "Lease"},
			ObjectMeta: metav1.ObjectMeta{Name: form.Name, Namespace: form.Namespace},
		}
		body, err := json.Marshal(&lease)
		if err != nil {
			return err
		}
		if err := u.callAPI(ctx, http.MethodPost, leasesPath(form.Namespace), body); err != nil {
			// The API's refusal is shown in the form, as a bad name is: a 403 stays a 403.
			if isForbidden(err) {
				code = http.StatusForbidden
			}
			refuse(&form, i18n.Same(err.Error()))
		}
	}
	if len(form.Errors) > 0 {
		v, err := u.dashboardView(c.Request(), u.homeNamespace(c.Request()), form, moment{})
		if err != nil {
			return err
		}
		return u.render(c, code, templates.DashboardView(v))
	}
	return c.Redirect(http.StatusSeeOther, u.returnTo(c))
}

// returnTo is the dashboard a form's user goes back to: the namespace it showed (the view field,
// which the page's script fills in as the filter changes; "" for every namespace), else the
// user's home namespace.
func (u *dashboardScreen) returnTo(c echo.Context) string {
	if err := c.Request().ParseForm(); err == nil {
		if view, ok := c.Request().PostForm["view"]; ok && len(view) == 1 && (view[0] == "" || len(validation.IsDNS1123Label(view[0])) == 0) {
			return dashboardURL(view[0])
		}
	}
	return dashboardURL(u.homeNamespace(c.Request()))
}

// homeNamespace is the namespace the user's dashboard shows (templates.SignedIn.Home).
func (u *dashboardScreen) homeNamespace(r *http.Request) string {
	s, _ := u.signedIn(r)
	return s.Home()
}

// refuse adds a reason the form was refused.
func refuse(f *templates.LeaseForm, why i18n.Text) {
	f.Errors = append(f.Errors, why.En)
	f.ErrorsSays = append(f.ErrorsSays, why)
}

// deleteLease handles a card's Delete button. A lease that is already gone is not an error.
func (u *dashboardScreen) deleteLease(c echo.Context) error {
	ns, name := c.Param("namespace"), c.Param("name")
	if len(validation.IsDNS1123Label(ns)) > 0 {
		return u.failSays(c, http.StatusBadRequest, i18n.Say("error.badNamespace", ns))
	}
	err := u.callAPI(c.Request().Context(), http.MethodDelete, leasesPath(ns)+"/"+url.PathEscape(name), nil)
	if isForbidden(err) {
		return u.failSays(c, http.StatusForbidden, i18n.Same(err.Error()))
	}
	var se *apiError
	if err != nil && !(errors.As(err, &se) && se.code == http.StatusNotFound) {
		return u.failSays(c, http.StatusBadGateway, i18n.Say("error.notDeleted", err.Error()))
	}
	return c.Redirect(http.StatusSeeOther, u.returnTo(c))
}

func leasesPath(ns string) string {
	return "/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases"
}

// apiError is a refusal by the API: its Status message.
type apiError struct {
	code int
	msg  string
}

func (e *apiError) Error() string { return e.msg }

// isForbidden says whether the API refused an action with 403.
func isForbidden(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.code == http.StatusForbidden
}

// callAPI performs one request on the API in process (Options.API), as the user of ctx (the
// signed-in user of the request being served), and returns an *apiError for a refusal.
func (u *dashboardScreen) callAPI(ctx context.Context, method, path string, body []byte) error {
	if u.opts.API == nil {
		return &apiError{code: http.StatusServiceUnavailable, msg: "the API is not available"} //said:english an API error, as the API words its own
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+inprocess.Host+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("User-Agent", dashboardUserAgent)
	resp, err := u.opts.API.RoundTrip(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode < 300 {
		return nil
	}
	var st metav1.Status
	msg := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &st) == nil && st.Message != "" {
		msg = st.Message
	}
	return &apiError{code: resp.StatusCode, msg: msg}
}
