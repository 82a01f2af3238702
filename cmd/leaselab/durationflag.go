package main

import (
	"errors"
	"flag"
	"strconv"
	"time"
)

// durationValue is a duration flag that also takes a plain number of seconds, as the
// candidate tab's URL does: --lease-duration 10 and --lease-duration 10s mean the same.
type durationValue time.Duration

func (d *durationValue) Set(s string) error {
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		*d = durationValue(secs * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a duration such as 10s, 1m30s or 500ms, or a plain number of seconds")
	}
	*d = durationValue(v)
	return nil
}

func (d *durationValue) String() string { return time.Duration(*d).String() }

// durationVar defines a duration flag that takes a Go duration or plain seconds.
func durationVar(fs *flag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var((*durationValue)(p), name, usage+" (a `duration` such as 10s, or plain seconds)")
}
