package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/leaselab/leaselab/store"
)

// IdentityResource is the store resource workshop identities are kept under. The API does not
// serve it: it lives in the database only, so that a restart keeps every token.
const IdentityResource = "participants.leaselab.dev"

// InstructorName is the workshop instructor's user name.
const InstructorName = "instructor"

// identity is the stored form of a workshop identity.
type identity struct {
	Name      string `json:"name"`
	UID       string `json:"uid"`
	Token     string `json:"token"`
	Role      Role   `json:"role"`
	Namespace string `json:"namespace,omitempty"`
}

func (id identity) token() Token {
	u := User{Name: id.Name, UID: id.UID, Role: id.Role, Namespace: id.Namespace}
	if id.Role == RoleInstructor {
		u.Groups = []string{"leaselab:instructors"}
	} else {
		u.Groups = []string{"leaselab:participants"}
	}
	return Token{Token: id.Token, User: u}
}

// ParticipantName is the user name (and namespace) of the i-th participant, from 1.
func ParticipantName(i, n int) string {
	width := len(fmt.Sprint(n))
	if width < 2 {
		width = 2
	}
	return fmt.Sprintf("participant-%0*d", width, i)
}

// LoadWorkshop returns the workshop identities stored in st, instructor first, then
// participants by name; none when the database never ran a workshop.
func LoadWorkshop(ctx context.Context, st store.Interface) ([]Token, error) {
	ids, err := loadIdentities(ctx, st)
	if err != nil {
		return nil, err
	}
	out := make([]Token, 0, len(ids))
	for _, id := range ids {
		out = append(out, id.token())
	}
	return out, nil
}

// EnsureWorkshop creates what is missing of a workshop of n participants (participant-01 …
// participant-N, each with a random token and its own namespace) and an instructor, keeps
// them in st, and returns every stored identity as LoadWorkshop does. Existing identities keep
// their tokens; a smaller n removes nobody.
func EnsureWorkshop(ctx context.Context, st store.Interface, n int) ([]Token, error) {
	ids, err := loadIdentities(ctx, st)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, id := range ids {
		have[id.Name] = true
	}
	want := []identity{{Name: InstructorName, Role: RoleInstructor}}
	for i := 1; i <= n; i++ {
		name := ParticipantName(i, n)
		want = append(want, identity{Name: name, Role: RoleParticipant, Namespace: name})
	}
	for _, id := range want {
		if have[id.Name] {
			continue
		}
		if id.Token, err = newToken(); err != nil {
			return nil, err
		}
		if id.UID, err = newToken(); err != nil {
			return nil, err
		}
		b, err := json.Marshal(id)
		if err != nil {
			return nil, err
		}
		if _, err := st.Create(ctx, store.Key{Resource: IdentityResource, Name: id.Name}, b); err != nil && !errors.Is(err, store.ErrExists) {
			return nil, fmt.Errorf("store identity %s: %w", id.Name, err)
		}
	}
	return LoadWorkshop(ctx, st)
}

func loadIdentities(ctx context.Context, st store.Interface) ([]identity, error) {
	res, err := st.List(ctx, store.ListOptions{Resource: IdentityResource})
	if err != nil {
		return nil, fmt.Errorf("list workshop identities: %w", err)
	}
	ids := make([]identity, 0, len(res.Objects))
	for _, o := range res.Objects {
		var id identity
		if err := json.Unmarshal(o.Value, &id); err != nil {
			return nil, fmt.Errorf("decode workshop identity %s: %w", o.Name, err)
		}
		if id.Token == "" || (id.Role != RoleInstructor && id.Role != RoleParticipant) {
			return nil, fmt.Errorf("workshop identity %s is incomplete", o.Name)
		}
		ids = append(ids, id)
	}
	sort.SliceStable(ids, func(i, j int) bool {
		if ids[i].Role != ids[j].Role {
			return ids[i].Role == RoleInstructor
		}
		return ids[i].Name < ids[j].Name
	})
	return ids, nil
}

// newToken returns 32 random bytes, base64url: unguessable and safe in URLs and CSV.
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// DecodeIdentity decodes one stored workshop identity (a value under IdentityResource).
func DecodeIdentity(value []byte) (Token, error) {
	var id identity
	if err := json.Unmarshal(value, &id); err != nil {
		return Token{}, fmt.Errorf("decode workshop identity: %w", err)
	}
	return id.token(), nil
}
