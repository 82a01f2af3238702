package candidate

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// JitterFactor is client-go's: the acquire loop waits between RetryPeriod and
// (1 + JitterFactor) × RetryPeriod, and RenewDeadline must exceed
// JitterFactor × RetryPeriod.
const JitterFactor = 1.2

// Defaults of the browser candidate (the page's optional parameters).
const (
	DefaultNamespace     = "default"
	DefaultLeaseDuration = 10 * time.Second
	DefaultRenewDeadline = 7 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
	// MaxDuration bounds leaseDuration (and so the other two).
	MaxDuration = 24 * time.Hour
	// MinRetryPeriod is the shortest retryPeriod a page may ask for. client-go takes any
	// positive one, but a playground is shared: a room of thirty tabs retrying every
	// millisecond is a load test, and nothing can be seen at that pace anyway.
	MinRetryPeriod = 200 * time.Millisecond
)

// Config describes one candidate.
type Config struct {
	// BaseURL is the API server's scheme and host ("" in tests that pass a
	// transport which ignores it).
	BaseURL string
	// Token, when set, is sent as a bearer token.
	Token string
	// Namespace and LeaseName name the Lease the candidates compete for.
	Namespace string
	LeaseName string
	// Identity is written to holderIdentity while this candidate leads.
	Identity string
	// LeaseDuration is how long others wait, from their own observation of
	// the last change, before taking the lease. Whole seconds (the Lease
	// stores leaseDurationSeconds).
	LeaseDuration time.Duration
	// RenewDeadline is how long a leader keeps trying to renew before it
	// gives up leading.
	RenewDeadline time.Duration
	// RetryPeriod is the pause between attempts.
	RetryPeriod time.Duration
	// ReleaseOnCancel releases the lease (holderIdentity "") when leading
	// ends because the renew deadline passed, as client-go's option of the
	// same name. The Release command always releases; Crash never does.
	ReleaseOnCancel bool
	// RequestTimeout bounds every request, as the Timeout of client-go's rest.Config; 0 means
	// the renew deadline (what kube-controller-manager and kube-scheduler set), NoTimeout none:
	// a request then ends only with its attempt's own deadline, or its connection.
	RequestTimeout time.Duration
	// WaitsOutRenewals makes a leader wait for a renewal in flight however long past its
	// renew deadline: the renew round looks at its deadline only between tries, as client-go's
	// did before v9 (Kubernetes 1.12), and as an elector does that sends its requests without
	// the round's deadline. Only the request's own end (its timeout, its connection found dead)
	// ends the wait.
	WaitsOutRenewals bool
	// StopAfterLoss leaves the candidate stopped after it loses leadership.
	// By default it starts over as a fresh candidate, as a process restarted
	// by its supervisor would.
	StopAfterLoss bool
	// Coordinated joins Coordinated Leader Election, as client-go's
	// coordinated elector with its LeaseCandidate helper: the candidate keeps
	// a LeaseCandidate with BinaryVersion and EmulationVersion, answers the
	// server's pings, never takes the lease itself (the server assigns it) and
	// steps down when the server names a preferredHolder.
	Coordinated bool
	// BinaryVersion and EmulationVersion are MAJOR.MINOR.PATCH, emulation at
	// most binary; used only when Coordinated.
	BinaryVersion    string
	EmulationVersion string
}

// NoTimeout is a Config.RequestTimeout of none.
const NoTimeout time.Duration = -1

// requestTimeout is the timeout of every request (0: none).
func (c Config) requestTimeout() time.Duration {
	switch {
	case c.RequestTimeout == 0:
		return c.RenewDeadline
	case c.RequestTimeout < 0:
		return 0
	}
	return c.RequestTimeout
}

// ConfigError lists why a Config was refused, in plain language.
type ConfigError struct {
	Problems []string
	// Messages are the Problems as messages, for pages in other languages (one each, in the
	// same order, when the problems are the configuration's own).
	Messages []tabproto.Msg
}

// add adds a problem.
func (e *ConfigError) add(m tabproto.Msg) {
	e.Problems = append(e.Problems, m.In("en"))
	e.Messages = append(e.Messages, m)
}

func (e *ConfigError) Error() string {
	return "invalid candidate configuration: " + strings.Join(e.Problems, "; ")
}

// Validate applies client-go's checks (LeaseDuration > RenewDeadline >
// JitterFactor × RetryPeriod, all positive, a non-empty identity) and the
// Lease's own (whole seconds). It returns a *ConfigError.
func (c Config) Validate() error {
	var ce ConfigError
	if strings.TrimSpace(c.Identity) == "" {
		ce.add(say("config.identity"))
	}
	if c.LeaseName == "" {
		ce.add(say("config.leaseName"))
	}
	if c.Namespace == "" {
		ce.add(say("config.namespace"))
	}
	positive := true
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"leaseDuration", c.LeaseDuration}, {"renewDeadline", c.RenewDeadline}, {"retryPeriod", c.RetryPeriod}} {
		if d.v <= 0 {
			ce.add(say("config.positive", d.name))
			positive = false
		}
	}
	if positive {
		if c.LeaseDuration%time.Second != 0 {
			ce.add(say("config.whole", secs(c.LeaseDuration)))
		}
		if c.LeaseDuration <= c.RenewDeadline {
			ce.add(say("config.leaseOverDeadline", secs(c.LeaseDuration), secs(c.RenewDeadline)))
		}
		if limit := time.Duration(JitterFactor * float64(c.RetryPeriod)); c.RenewDeadline <= limit {
			ce.add(say("config.deadlineOverRetry", secs(c.RenewDeadline), strconv.FormatFloat(JitterFactor, 'f', 1, 64), secs(limit)))
		}
		if c.LeaseDuration > MaxDuration {
			ce.add(say("config.atMost", secs(c.LeaseDuration), secs(MaxDuration)))
		}
	}
	if c.Coordinated {
		for _, m := range validateVersions(c.BinaryVersion, c.EmulationVersion) {
			ce.add(m)
		}
	}
	if len(ce.Problems) > 0 {
		return &ce
	}
	return nil
}

// validateVersions checks the coordinated mode's versions.
func validateVersions(binary, emulation string) []tabproto.Msg {
	var p []tabproto.Msg
	b, bok := parseSemver(binary)
	e, eok := parseSemver(emulation)
	for _, v := range []struct {
		name, s string
		ok      bool
	}{{"binaryVersion", binary, bok}, {"emulationVersion", emulation, eok}} {
		if v.name == "emulationVersion" && emulation == binary && !bok {
			continue // the same value, refused once
		}
		switch {
		case v.s == "":
			p = append(p, say("config.versionRequired", v.name))
		case !v.ok:
			p = append(p, say("config.versionBad", v.name, strconv.Quote(v.s)))
		}
	}
	if bok && eok && compareSemver(e, b) > 0 {
		p = append(p, say("config.emulationNewer", emulation, binary))
	}
	return p
}

// parseSemver parses a strict MAJOR.MINOR.PATCH (no leading zeros, no "v",
// no pre-release or build suffix).
func parseSemver(s string) ([3]int, bool) {
	var v [3]int
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, part := range parts {
		if part == "" || len(part) > 9 || (len(part) > 1 && part[0] == '0') {
			return v, false
		}
		for _, r := range part {
			if r < '0' || r > '9' {
				return v, false
			}
		}
		v[i], _ = strconv.Atoi(part)
	}
	return v, true
}

func compareSemver(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// strategy is the strategy the candidate's LeaseCandidate declares: the one
// the server's controller implements in coordinated mode, "" otherwise.
func (c Config) strategy() string {
	if !c.Coordinated {
		return ""
	}
	return StrategyOldestEmulationVersion
}

// leaseDurationSeconds is the value written to the Lease.
func (c Config) leaseDurationSeconds() int32 { return int32(c.LeaseDuration / time.Second) }

// Params are the optional page parameters of a candidate tab, as they arrive
// in the worker's start message. Durations are in seconds.
type Params struct {
	BaseURL         string   `json:"baseURL,omitempty"`
	Token           string   `json:"token,omitempty"`
	Namespace       string   `json:"namespace,omitempty"`
	Lease           string   `json:"lease"`
	Identity        string   `json:"identity,omitempty"`
	LeaseDuration   *float64 `json:"leaseDuration,omitempty"`
	RenewDeadline   *float64 `json:"renewDeadline,omitempty"`
	RetryPeriod     *float64 `json:"retryPeriod,omitempty"`
	ReleaseOnCancel bool     `json:"releaseOnCancel,omitempty"`
	StopAfterLoss   bool     `json:"stopAfterLoss,omitempty"`
	// Coordinated mode and its versions (see Config).
	Coordinated      bool   `json:"coordinated,omitempty"`
	BinaryVersion    string `json:"binaryVersion,omitempty"`
	EmulationVersion string `json:"emulationVersion,omitempty"`
}

// ParamsFromQuery reads the /play query: namespace, lease, identity,
// leaseDuration, renewDeadline, retryPeriod (seconds), releaseOnCancel,
// stopAfterLoss and coordinated (true/false or 1/0), binaryVersion and
// emulationVersion. It returns a *ConfigError for values that are
// not numbers or booleans.
func ParamsFromQuery(q url.Values) (Params, error) {
	p := Params{Namespace: q.Get("namespace"), Lease: q.Get("lease"), Identity: q.Get("identity"),
		BinaryVersion: q.Get("binaryVersion"), EmulationVersion: q.Get("emulationVersion")}
	var problems ConfigError
	for _, f := range []struct {
		key string
		dst **float64
	}{{"leaseDuration", &p.LeaseDuration}, {"renewDeadline", &p.RenewDeadline}, {"retryPeriod", &p.RetryPeriod}} {
		s := q.Get(f.key)
		if s == "" {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			problems.add(say("config.number", f.key, strconv.Quote(s)))
			continue
		}
		*f.dst = &v
	}
	for _, f := range []struct {
		key string
		dst *bool
	}{{"releaseOnCancel", &p.ReleaseOnCancel}, {"stopAfterLoss", &p.StopAfterLoss}, {"coordinated", &p.Coordinated}} {
		s := q.Get(f.key)
		if s == "" {
			continue
		}
		v, err := strconv.ParseBool(s)
		if err != nil {
			problems.add(say("config.bool", f.key, strconv.Quote(s)))
			continue
		}
		*f.dst = v
	}
	if len(problems.Problems) > 0 {
		return p, &problems
	}
	return p, nil
}

// Config applies the defaults (namespace "default", 10/7/2 seconds, a random
// "tab-xxxx" identity, emulationVersion = binaryVersion) and validates the
// result. It returns a *ConfigError.
func (p Params) Config() (Config, error) {
	c := Config{
		BaseURL:         p.BaseURL,
		Token:           p.Token,
		Namespace:       p.Namespace,
		LeaseName:       p.Lease,
		Identity:        p.Identity,
		LeaseDuration:   seconds(p.LeaseDuration, DefaultLeaseDuration),
		RenewDeadline:   seconds(p.RenewDeadline, DefaultRenewDeadline),
		RetryPeriod:     seconds(p.RetryPeriod, DefaultRetryPeriod),
		ReleaseOnCancel: p.ReleaseOnCancel,
		StopAfterLoss:   p.StopAfterLoss,
		Coordinated:     p.Coordinated,
	}
	if c.Coordinated {
		c.BinaryVersion = strings.TrimSpace(p.BinaryVersion)
		c.EmulationVersion = strings.TrimSpace(p.EmulationVersion)
		if c.EmulationVersion == "" {
			c.EmulationVersion = c.BinaryVersion
		}
	}
	if c.Namespace == "" {
		c.Namespace = DefaultNamespace
	}
	if c.Identity == "" {
		c.Identity = fmt.Sprintf("tab-%04x", rand.IntN(1<<16))
	}
	err := c.Validate()
	if c.RetryPeriod > 0 && c.RetryPeriod < MinRetryPeriod {
		floor := say("config.floor", secs(c.RetryPeriod), secs(MinRetryPeriod))
		var ce *ConfigError
		if !errors.As(err, &ce) {
			ce = &ConfigError{}
			err = ce
		}
		ce.add(floor)
	}
	return c, err
}

func seconds(v *float64, def time.Duration) time.Duration {
	if v == nil {
		return def
	}
	// Clamp far outside the valid range, so the conversion cannot overflow;
	// Validate refuses the clamped value with a reason.
	v2 := min(max(*v, -1e7), 1e7)
	return time.Duration(math.Round(v2*1000)) * time.Millisecond
}

// secs formats a duration the way the page shows it: "7 s", "2.4 s".
func secs(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// unmarshalParams decodes a start message's config.
func unmarshalParams(raw json.RawMessage) (Params, error) {
	var p Params
	if len(raw) == 0 {
		return p, &ConfigError{Problems: []string{"the start message has no config"}} //said:english only a broken page sends this
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, &ConfigError{Problems: []string{"config: " + err.Error()}}
	}
	return p, nil
}
