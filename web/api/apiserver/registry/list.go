package registry

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leaselab/leaselab/store"
)

// tooLargeWait is how long a read at a future resourceVersion waits for the store to catch up
// before answering 504, as the real server's watch cache does.
const tooLargeWait = 3 * time.Second

// parseRV parses a resourceVersion parameter; "" and "0" are 0.
func parseRV(rv string) (int64, error) {
	if rv == "" || rv == "0" {
		return 0, nil
	}
	n, err := strconv.ParseUint(rv, 10, 63)
	if err != nil {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q: %v", rv, err))
	}
	return int64(n), nil
}

// waitForRevision makes a "not older than rv" read wait until the store has reached rv, and
// answers 504 as the real server does when it does not get there in time.
func (r *Registry) waitForRevision(ctx context.Context, gr schema.GroupResource, rv int64) error {
	if rv == 0 {
		return nil
	}
	deadline := time.Now().Add(tooLargeWait)
	for {
		cur, _, err := r.store.Revision(ctx)
		if err != nil {
			return storeError(err, gr, "")
		}
		if cur >= rv {
			return nil
		}
		if time.Now().After(deadline) {
			return errTooLargeResourceVersion(rv, cur)
		}
		select {
		case <-ctx.Done():
			return storeError(ctx.Err(), gr, "")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// inconsistentContinue is the real server's answer to a continue token whose revision was
// compacted; the Status carries a token to go on at the latest revision.
const inconsistentContinue = "The provided continue parameter is too old to display a consistent list result. " +
	"You can start a new list without the continue parameter, or use the continue token in this response to " +
	"retrieve the remainder of the results. Continuing with the provided token results in an inconsistent " +
	"list - objects that were created, modified, or deleted between the time the first chunk was returned " +
	"and now may show up in the list."

// continueToken is the opaque continue token, in the real server's shape: the revision every
// page is read at and the key to start after.
type continueToken struct {
	APIVersion string `json:"v"`
	RV         int64  `json:"rv"`
	Start      string `json:"start"`
}

func encodeContinue(rv int64, after store.Key) string {
	b, _ := json.Marshal(continueToken{APIVersion: "meta.k8s.io/v1", RV: rv, Start: after.Namespace + "/" + after.Name + "\x00"})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(token string) (int64, store.Key, error) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return 0, store.Key{}, fmt.Errorf("continue key is not valid: %v", err)
	}
	var t continueToken
	if err := json.Unmarshal(b, &t); err != nil {
		return 0, store.Key{}, fmt.Errorf("continue key is not valid: %v", err)
	}
	if t.APIVersion != "meta.k8s.io/v1" {
		return 0, store.Key{}, fmt.Errorf("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	}
	if t.RV == 0 {
		// A negative revision is the real server's token for "continue at the latest
		// revision", which it hands out when the token's own revision was compacted.
		return 0, store.Key{}, fmt.Errorf("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	}
	start, ok := strings.CutSuffix(t.Start, "\x00")
	ns, name, found := strings.Cut(start, "/")
	if !ok || !found || name == "" {
		return 0, store.Key{}, fmt.Errorf("continue key is not valid: bad start key %q", t.Start)
	}
	return t.RV, store.Key{Namespace: ns, Name: name}, nil
}
