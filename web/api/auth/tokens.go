// Package auth decides who may do what on leaselab: static bearer tokens (the real API server's
// --token-file format) and workshop identities, the browser session cookie set by a join link,
// the WebSocket bearer-token subprotocol, the participant / instructor authorization rules, and
// the limits that keep a shared room alive (request rate, watches, objects per namespace). Its
// refusals are the real API server's metav1.Status bodies (401, 403, 429).
package auth

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Role says what an identity may do.
type Role string

const (
	// RoleInstructor reads and writes everywhere, sees the workshop page and commands every tab.
	RoleInstructor Role = "instructor"
	// RoleParticipant reads everything and writes only in its own namespace and in ArenaNamespace.
	RoleParticipant Role = "participant"
)

// ArenaNamespace is the namespace every participant may write in.
const ArenaNamespace = "arena"

// InstructorGroups are the groups that make a token-file user an instructor.
var InstructorGroups = []string{"system:masters", "leaselab:instructors"}

// User is an authenticated identity.
type User struct {
	Name   string
	UID    string
	Groups []string
	Role   Role
	// Namespace is a participant's own namespace.
	Namespace string
}

// Token is one bearer token and the identity it authenticates.
type Token struct {
	Token string
	User  User
}

// ParseTokenFile reads a token file in the real API server's format: CSV records of at least
// three columns, token,user,uid, and an optional fourth, the groups as one quoted
// comma-separated field ("group1,group2"). As kube-apiserver does, records with an empty token
// are skipped and a later duplicate token wins. A user in one of InstructorGroups is an
// instructor; any other user is a participant whose namespace is its user name (lower-cased)
// when that is a valid namespace name, else an error. It returns an error for malformed CSV
// or short records.
func ParseTokenFile(r io.Reader) ([]Token, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	var out []Token
	index := map[string]int{}
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("token file: %w", err)
		}
		if len(rec) < 3 {
			return nil, fmt.Errorf("token file record %d must have at least 3 columns (token, user name, user uid), found %d", line, len(rec))
		}
		if rec[0] == "" {
			continue
		}
		u := User{Name: rec[1], UID: rec[2], Role: RoleParticipant}
		if len(rec) >= 4 && rec[3] != "" {
			u.Groups = strings.Split(rec[3], ",")
		}
		for _, g := range u.Groups {
			for _, ig := range InstructorGroups {
				if g == ig {
					u.Role = RoleInstructor
				}
			}
		}
		if u.Role == RoleParticipant {
			u.Namespace = strings.ToLower(u.Name)
			if msgs := validation.IsDNS1123Label(u.Namespace); len(msgs) > 0 {
				return nil, fmt.Errorf("token file record %d: user %q is not usable as a namespace name (%s); put instructors in group %s", line, u.Name, strings.Join(msgs, ", "), InstructorGroups[1])
			}
		}
		if i, ok := index[rec[0]]; ok {
			out[i].User = u
			continue
		}
		index[rec[0]] = len(out)
		out = append(out, Token{Token: rec[0], User: u})
	}
	return out, nil
}
