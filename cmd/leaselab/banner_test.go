package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/cmd/internal/access"
	"github.com/leaselab/leaselab/web/api/auth"
)

// TestBannerShowsOnlyRealLinks: the start banner of a workshop names no placeholder a newcomer
// could copy, and its commands name the binary as it was started.
func TestBannerShowsOnlyRealLinks(t *testing.T) {
	a := &access.Gate{Tokens: []auth.Token{
		{Token: "instr-token", User: auth.User{Name: auth.InstructorName, Role: auth.RoleInstructor}},
		{Token: "p1-token", User: auth.User{Name: "participant-01", Role: auth.RoleParticipant, Namespace: "participant-01"}},
	}}
	var out bytes.Buffer
	a.Print(&out, "https://host:8443", "x.db", invokedName())
	s := out.String()
	if strings.Contains(s, "TOKEN") || !strings.Contains(s, "https://host:8443/join?token=instr-token") {
		t.Errorf("banner:\n%s", s)
	}

	saved := os.Args[0]
	defer func() { os.Args[0] = saved }()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin", "leaselab")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	os.Args[0] = "bin/leaselab"
	t.Setenv("PATH", "/nonexistent")
	if got := invokedName(); got != "bin/leaselab" {
		t.Errorf("started as bin/leaselab: hints say %q", got)
	}
	t.Setenv("PATH", filepath.Dir(bin))
	if got := invokedName(); got != "leaselab" {
		t.Errorf("started as bin/leaselab, which PATH finds: hints say %q", got)
	}
}
