package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/leaselab/leaselab/cmd/internal/access"
	"github.com/leaselab/leaselab/cmd/internal/tlscert"
	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/api/auth"
)

func runKubeconfig(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("kubeconfig", "print a kubeconfig for this server", "", stderr)
	server := fs.String("server", "", "URL of the leaselab server (default: the URL the server on --db announced at its last start)")
	namespace := fs.String("namespace", "", "namespace of the context (default: the participant's own with --db, else default)")
	token := fs.String("token", "", "bearer token to put in the kubeconfig (workshop mode)")
	name := fs.String("name", "leaselab", "name of the cluster, user and context")
	caFile := fs.String("certificate-authority", "", "PEM certificate authority to embed (default with --db: the self-signed certificate kept beside the database, if any)")
	db := fs.String("db", "leaselab.db", "the server's database: finds the token's namespace, the self-signed certificate and (without --server) the URL the server announced")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var ca []byte
	if *caFile != "" {
		b, err := os.ReadFile(*caFile)
		if err != nil {
			return fmt.Errorf("--certificate-authority: %w", err)
		}
		ca = b
	}
	if !flagGiven(fs, "server") {
		u, err := recordedURL(*db)
		if err != nil {
			return err
		}
		*server = u
	}
	if *db != "" {
		if ca == nil {
			certFile, _ := tlscert.Paths(*db)
			if b, err := os.ReadFile(certFile); err == nil {
				ca = b
			} else if !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		if *token != "" {
			objs, err := sqlite.ReadObjects(ctx, *db, auth.IdentityResource)
			if err != nil {
				return err
			}
			found := false
			for _, o := range objs {
				if t, err := auth.DecodeIdentity(o.Value); err == nil && t.Token == *token {
					found = true
					if *namespace == "" {
						*namespace = t.User.Namespace
					}
				}
			}
			// A workshop database knows every token: another one is a typo or a token of
			// another class, whose kubeconfig would only get 401s.
			if !found && len(objs) > 0 {
				return fmt.Errorf("--token is none of the workshop identities in %s", *db)
			}
		}
	}
	if *namespace == "" {
		*namespace = "default"
	}
	b, err := auth.Kubeconfig(*server, *namespace, *token, *name, ca)
	if err != nil {
		return err
	}
	_, err = stdout.Write(b)
	return err
}

// recordedURL is the URL the server on db announced at its last start: its --public-url, as in
// the kubeconfigs the instructor page offers, or the address it listened on. Without one the
// answer would be a guess, so it is an error that says what to give instead.
func recordedURL(db string) (string, error) {
	u, err := os.ReadFile(access.URLPath(db))
	switch {
	case err == nil && len(bytes.TrimSpace(u)) > 0:
		return string(bytes.TrimSpace(u)), nil
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return "", err
	}
	if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("no database at %s, so no server URL to name: give --server URL, or --db with the file leaselab serve uses", db)
	}
	return "", fmt.Errorf("no server has announced its URL beside %s (it writes %s at start): start leaselab serve --db %s, or give --server URL", db, access.URLPath(db), db)
}

// kubeconfig renders a kubeconfig with one cluster, user and context.
func kubeconfig(server, namespace, token, name string) ([]byte, error) {
	return auth.Kubeconfig(server, namespace, token, name, nil)
}
