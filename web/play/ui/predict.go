package ui

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/play/scenario"
)

// voterCookie keeps an anonymous voter's identity: without workshop mode, the audience's
// browsers vote by it, one vote each.
const voterCookie = "leaselab-voter"

// voterOf is who votes with request r: the signed-in user, else the browser's voter cookie
// ("" when it has none yet).
func (u *scenarioScreen) voterOf(r *http.Request) string {
	if u.opts.TabUser != nil {
		if tu, ok := u.opts.TabUser(r); ok {
			return "user:" + tu.Name
		}
	}
	if c, err := r.Cookie(voterCookie); err == nil && len(c.Value) == 32 {
		if _, err := hex.DecodeString(c.Value); err == nil {
			return "browser:" + c.Value
		}
	}
	return ""
}

// newVoter gives the browser of c a voter cookie and returns its identity.
func newVoter(c echo.Context) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	v := hex.EncodeToString(b)
	c.SetCookie(&http.Cookie{Name: voterCookie, Value: v, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: c.Request().TLS != nil, MaxAge: 7 * 24 * 3600})
	return "browser:" + v
}

// predictionView is the question of the step st shows, as voter sees it; nil when it asks none.
// The tally shows on the instructor's page while the vote is open, and to everyone after.
func predictionView(lang i18n.Lang, sc *scenario.Scenario, run *scenario.Run, st scenario.State, seed, voter string, mayControl bool, back string) *templates.Prediction {
	q := st.Question
	if q == nil {
		return nil
	}
	ask := sc.Steps[q.Step].Ask
	v := &templates.Prediction{Step: q.Step + 1, Seed: seed, Back: back, VoteURL: "/scenarios/" + sc.Name + "/vote",
		RevealURL: "/scenarios/" + sc.Name + "/reveal", Ask: ask.Ask.In(lang), Open: q.Open, Votes: q.Total(),
		ShowTally: mayControl || !q.Open, MayReveal: mayControl && q.Open}
	if !q.Open {
		v.Why = ask.Why.In(lang)
	}
	mine := -1
	if voter != "" {
		mine = run.Ballot().ChoiceOf(voter, q.Step)
	}
	for i, c := range ask.Choices {
		ch := templates.PredictionChoice{Text: c.In(lang), Votes: q.Votes[i], Chosen: i == mine, Right: !q.Open && i == ask.Answer}
		if v.Votes > 0 {
			ch.Share = (100*q.Votes[i]/v.Votes + 2) / 5 * 5
		}
		v.Choices = append(v.Choices, ch)
	}
	return v
}

// vote serves POST /scenarios/:name/vote (seed, step, choice): everyone who watches may vote,
// one choice each, until the reveal. Answered 204 to the page's script, else with a redirect
// back to the page it came from.
func (u *scenarioScreen) vote(c echo.Context) error {
	ctx := c.Request().Context()
	sc, err := u.findScenario(c)
	if sc == nil {
		return err
	}
	seed, speed, problem := scenarioParams(c, sc)
	if problem != "" {
		return u.fail(c, http.StatusBadRequest, i18n.T(ctx, problem))
	}
	step, err1 := strconv.Atoi(c.FormValue("step"))
	choice, err2 := strconv.Atoi(c.FormValue("choice"))
	if err1 != nil || err2 != nil {
		return u.fail(c, http.StatusBadRequest, i18n.T(ctx, "scn.predict.badChoice"))
	}
	run := u.scenarios.get(sc.Name, seed)
	if run == nil {
		return u.fail(c, http.StatusConflict, i18n.T(ctx, "scn.notrunning", strconv.FormatUint(seed, 10)))
	}
	voter := u.voterOf(c.Request())
	if voter == "" {
		voter = newVoter(c)
	}
	switch err := run.Ballot().Vote(voter, step-1, choice); {
	case errors.Is(err, scenario.ErrClosed):
		return u.fail(c, http.StatusConflict, i18n.T(ctx, "scn.predict.closed"))
	case errors.Is(err, scenario.ErrTooManyVoters):
		return u.fail(c, http.StatusTooManyRequests, i18n.T(ctx, "scn.predict.full"))
	case err != nil:
		return u.fail(c, http.StatusBadRequest, i18n.T(ctx, "scn.predict.badChoice"))
	}
	if c.Request().Header.Get("X-Requested-With") != "" {
		return c.NoContent(http.StatusNoContent)
	}
	if c.FormValue("back") == "follow" {
		return c.Redirect(http.StatusSeeOther, "/follow")
	}
	return c.Redirect(http.StatusSeeOther, scenarioURL(sc.Name, seed, speed, nil))
}
