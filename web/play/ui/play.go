package ui

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/lease/timings"
)

// play serves /play: one candidate tab. The query is read and validated with the candidate's
// own rules (wasm/candidate), so a refused configuration is explained on the page before any
// wasm is loaded; the identity is chosen here when none is given, so that the page carries it
// from the first paint.
func (u *tabScreen) play(c echo.Context) error {
	q := c.QueryParams()
	var ps playProblems
	params, err := candidate.ParamsFromQuery(q)
	ps.addError(err)
	cfg, err := params.Config()
	ps.addError(err)
	calc := playTimings(q, params, cfg)
	u.checkPlayTarget(c.Request(), &ps, params, cfg)
	v := u.playView(c.Request().Context(), q, params, cfg, ps)
	v.Timings = calc
	status := http.StatusOK
	if len(ps.en) > 0 {
		status = http.StatusUnprocessableEntity
	}
	return u.render(c, status, templates.PlayView(v))
}

// playProblems are why /play refuses its configuration, in the order found: in English, and in
// both languages.
type playProblems struct {
	en   []string
	says []i18n.Text
}

// add adds a problem said in both languages.
func (ps *playProblems) add(t i18n.Text) {
	ps.en = append(ps.en, t.En)
	ps.says = append(ps.says, t)
}

// addError adds the problems of a candidate's configuration error (each once), or err itself.
func (ps *playProblems) addError(err error) {
	var ce *candidate.ConfigError
	if errors.As(err, &ce) {
		for i, p := range ce.Problems {
			if slices.Contains(ps.en, p) {
				continue
			}
			if len(ce.Messages) == len(ce.Problems) {
				ps.add(candidateSays(ce.Messages[i]))
			} else {
				ps.add(i18n.Same(p))
			}
		}
	} else if err != nil {
		ps.add(i18n.Same(err.Error()))
	}
}

// playTimings is the calculator's view of the durations as typed, as client-go would run them,
// also when the playground refuses them; nil when one is not even a number.
func playTimings(q url.Values, params candidate.Params, cfg candidate.Config) *templates.Timings {
	if (q.Get("leaseDuration") == "" || params.LeaseDuration != nil) && (q.Get("renewDeadline") == "" || params.RenewDeadline != nil) &&
		(q.Get("retryPeriod") == "" || params.RetryPeriod != nil) {
		t := timingsView(timings.Check(timings.Settings{LeaseDuration: cfg.LeaseDuration, RenewDeadline: cfg.RenewDeadline, RetryPeriod: cfg.RetryPeriod}), 0)
		return &t
	}
	return nil
}

// checkPlayTarget adds what refuses the lease the tab would run for, here: names Kubernetes
// refuses, a namespace the user may not write, a replay, and what an upstream cluster does not
// allow.
func (u *tabScreen) checkPlayTarget(r *http.Request, ps *playProblems, params candidate.Params, cfg candidate.Config) {
	if cfg.LeaseName != "" {
		for _, msg := range validation.IsDNS1123Subdomain(cfg.LeaseName) {
			ps.add(i18n.Say("play.badLeaseName", strconv.Quote(cfg.LeaseName), msg))
		}
	}
	for _, msg := range validation.IsDNS1123Label(cfg.Namespace) {
		ps.add(i18n.Say("play.badNamespace", strconv.Quote(cfg.Namespace), msg))
	}
	if p := u.mayNotWrite(r, cfg.Namespace); !p.IsZero() {
		ps.add(p)
	}
	if p := u.replayProblem(); !p.IsZero() {
		ps.add(p)
	}
	if up := u.opts.Upstream; up != nil {
		if up.ReadOnly != "" {
			ps.add(i18n.Same(up.ReadOnly)) // the cluster's refusal, as the upstream says it
		}
		if params.Coordinated && up.CandidatesRefused != "" {
			ps.add(i18n.Say("play.coordinatedRefused", up.CandidatesRefused))
		}
		if len(up.Namespaces) > 0 && !slices.Contains(up.Namespaces, cfg.Namespace) {
			ps.add(i18n.Say("play.notForwarded", strconv.Quote(cfg.Namespace), strings.Join(up.Namespaces, ", ")))
		}
	}
}

// playView is the page of a tab: the form shows the durations as typed, the script starts the
// candidate with the configuration as read (disabled when refused).
func (u *tabScreen) playView(ctx context.Context, q url.Values, params candidate.Params, cfg candidate.Config, ps playProblems) templates.Play {
	typed := func(key string, def float64) string {
		if s := q.Get(key); s != "" {
			return s
		}
		return strconv.FormatFloat(def, 'f', -1, 64)
	}
	v := templates.Play{
		Page:             u.page(cfg.Identity+" · "+cfg.Namespace+"/"+cfg.LeaseName, "play"),
		ProblemsSays:     ps.says,
		Namespace:        cfg.Namespace,
		Lease:            cfg.LeaseName,
		Identity:         cfg.Identity,
		LeaseDuration:    typed("leaseDuration", candidate.DefaultLeaseDuration.Seconds()),
		RenewDeadline:    typed("renewDeadline", candidate.DefaultRenewDeadline.Seconds()),
		RetryPeriod:      typed("retryPeriod", candidate.DefaultRetryPeriod.Seconds()),
		Coordinated:      params.Coordinated,
		BinaryVersion:    params.BinaryVersion,
		EmulationVersion: params.EmulationVersion,
		Problems:         ps.en,
		LeaseURL:         leaseURL(cfg.Namespace, cfg.LeaseName),
	}
	v.Config = playConfig(ctx, v.Page, cfg, len(ps.en) > 0)
	v.Page.Candidate = !v.Config.Disabled
	return v
}

// playConfig is what the tab's script starts the candidate with.
func playConfig(ctx context.Context, page templates.Page, cfg candidate.Config, refused bool) templates.PlayConfig {
	tm := candidate.Timings{LeaseDuration: cfg.LeaseDuration, RenewDeadline: cfg.RenewDeadline, RetryPeriod: cfg.RetryPeriod}
	return templates.PlayConfig{
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
		WorkerURL:   page.Assets.WorkerJS,
		WasmExecURL: page.Assets.WasmExec,
		WasmURL:     page.Assets.Wasm,
		ServerNowMs: page.ServerNowMs,
		Disabled:    refused || page.Assets.WasmMissing,
		Slow:        templates.PlaySlow{Choices: slowChoices(ctx, &tm), DefaultMs: tm.SlowLatency().Milliseconds()},
	}
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
func (u *tabScreen) mayNotWrite(r *http.Request, ns string) i18n.Text {
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
