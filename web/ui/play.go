package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/timings"
)

// play serves /play: one candidate tab. The query is read and validated with the candidate's
// own rules (wasm/candidate), so a refused configuration is explained on the page before any
// wasm is loaded; the identity is chosen here when none is given, so that the page carries it
// from the first paint.
func (u *UI) play(c echo.Context) error {
	q := c.QueryParams()
	var problems []string
	var says []i18n.Text // problems in both languages
	problem := func(t i18n.Text) {
		problems = append(problems, t.En)
		says = append(says, t)
	}
	addProblems := func(err error) {
		var ce *candidate.ConfigError
		if errors.As(err, &ce) {
			for i, p := range ce.Problems {
				if slices.Contains(problems, p) {
					continue
				}
				if len(ce.Messages) == len(ce.Problems) {
					problem(candidateSays(ce.Messages[i]))
				} else {
					problem(i18n.Same(p))
				}
			}
		} else if err != nil {
			problem(i18n.Same(err.Error()))
		}
	}
	params, err := candidate.ParamsFromQuery(q)
	addProblems(err)
	cfg, err := params.Config()
	addProblems(err)
	// The calculator judges the durations as typed, as client-go would run them, also when the
	// playground refuses them; not when one is not even a number.
	var calc *templates.Timings
	if (q.Get("leaseDuration") == "" || params.LeaseDuration != nil) && (q.Get("renewDeadline") == "" || params.RenewDeadline != nil) &&
		(q.Get("retryPeriod") == "" || params.RetryPeriod != nil) {
		t := timingsView(timings.Check(timings.Settings{LeaseDuration: cfg.LeaseDuration, RenewDeadline: cfg.RenewDeadline, RetryPeriod: cfg.RetryPeriod}))
		calc = &t
	}
	if cfg.LeaseName != "" {
		for _, msg := range validation.IsDNS1123Subdomain(cfg.LeaseName) {
			problem(i18n.Say("play.badLeaseName", strconv.Quote(cfg.LeaseName), msg))
		}
	}
	for _, msg := range validation.IsDNS1123Label(cfg.Namespace) {
		problem(i18n.Say("play.badNamespace", strconv.Quote(cfg.Namespace), msg))
	}
	if p := u.mayNotWrite(c.Request(), cfg.Namespace); !p.IsZero() {
		problem(p)
	}
	if p := u.replayProblem(); !p.IsZero() {
		problem(p)
	}
	if up := u.opts.Upstream; up != nil {
		if up.ReadOnly != "" {
			problems = append(problems, up.ReadOnly)
		}
		if params.Coordinated && up.CandidatesRefused != "" {
			problems = append(problems, "coordinated mode is not available: "+up.CandidatesRefused)
		}
		if len(up.Namespaces) > 0 && !slices.Contains(up.Namespaces, cfg.Namespace) {
			problems = append(problems, fmt.Sprintf("namespace %q is not shown here: this server forwards only the namespaces %s of the cluster", cfg.Namespace, strings.Join(up.Namespaces, ", ")))
		}
	}

	typed := func(key string, def float64) string {
		if s := q.Get(key); s != "" {
			return s
		}
		return strconv.FormatFloat(def, 'f', -1, 64)
	}
	v := templates.Play{
		Page:             u.page(cfg.Identity+" · "+cfg.Namespace+"/"+cfg.LeaseName, "play"),
		ProblemsSays:     says,
		Namespace:        cfg.Namespace,
		Lease:            cfg.LeaseName,
		Identity:         cfg.Identity,
		LeaseDuration:    typed("leaseDuration", candidate.DefaultLeaseDuration.Seconds()),
		RenewDeadline:    typed("renewDeadline", candidate.DefaultRenewDeadline.Seconds()),
		RetryPeriod:      typed("retryPeriod", candidate.DefaultRetryPeriod.Seconds()),
		Coordinated:      params.Coordinated,
		BinaryVersion:    params.BinaryVersion,
		EmulationVersion: params.EmulationVersion,
		Problems:         problems,
		Timings:          calc,
		LeaseURL:         leaseURL(cfg.Namespace, cfg.LeaseName),
	}
	v.Config = templates.PlayConfig{
		Start: templates.PlayStart{
			Namespace:        cfg.Namespace,
			Lease:            cfg.LeaseName,
			Identity:         cfg.Identity,
			LeaseDuration:    cfg.LeaseDuration.Seconds(),
			RenewDeadline:    cfg.RenewDeadline.Seconds(),
			RetryPeriod:      cfg.RetryPeriod.Seconds(),
			Coordinated:      cfg.Coordinated,
			BinaryVersion:    cfg.BinaryVersion,
			EmulationVersion: cfg.EmulationVersion,
		},
		WorkerURL:   v.Page.Assets.WorkerJS,
		WasmExecURL: v.Page.Assets.WasmExec,
		WasmURL:     v.Page.Assets.Wasm,
		ServerNowMs: v.Page.ServerNowMs,
		Disabled:    len(problems) > 0 || v.Page.Assets.WasmMissing,
	}
	tm := candidate.Timings{LeaseDuration: cfg.LeaseDuration, RenewDeadline: cfg.RenewDeadline, RetryPeriod: cfg.RetryPeriod}
	v.Config.Slow = templates.PlaySlow{Choices: slowChoices(c.Request().Context(), &tm), DefaultMs: tm.SlowLatency().Milliseconds()}
	status := http.StatusOK
	if len(problems) > 0 {
		status = http.StatusUnprocessableEntity
	}
	return u.render(c, status, templates.PlayView(v))
}

// slowChoices are the delays the slow-network fault offers, each with what it does at the
// timings t when they are known (a tab's own page; the dashboard does not know a tab's), in
// the language of ctx.
func slowChoices(ctx context.Context, t *candidate.Timings) []templates.SlowChoice {
	lang := string(i18n.FromContext(ctx))
	out := make([]templates.SlowChoice, len(candidate.SlowSteps))
	for i, d := range candidate.SlowSteps {
		out[i] = templates.SlowChoice{Ms: d.Milliseconds(), Label: exactSecsText(d)}
		if t != nil {
			out[i].Effect = t.LatencyEffectSays(d).In(lang)
		}
	}
	return out
}

// mayNotWrite says why the signed-in user may not run a candidate in namespace ns (a
// participant's tab for another participant's namespace would only repeat 403s), or "" when
// it may.
func (u *UI) mayNotWrite(r *http.Request, ns string) i18n.Text {
	if u.opts.TabUser == nil {
		return i18n.Text{}
	}
	tu, ok := u.opts.TabUser(r)
	if !ok || tu.mayReport(ns) {
		return i18n.Text{}
	}
	quoted := make([]string, len(tu.Namespaces))
	for i, n := range tu.Namespaces {
		quoted[i] = strconv.Quote(n)
	}
	where := i18n.Text{En: strings.Join(quoted, " or "), Zh: strings.Join(quoted, " 或 ")}
	return i18n.Say("play.mayNotWrite", tu.Name, strconv.Quote(ns), where)
}

// candidateSays is one of the candidate's sentences in both languages.
func candidateSays(m tabproto.Msg) i18n.Text {
	return i18n.Text{En: m.In(string(i18n.EN)), Zh: m.In(string(i18n.ZH))}
}
