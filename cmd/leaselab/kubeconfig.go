package main

import (
	"context"
	"fmt"
	"io"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func runKubeconfig(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("kubeconfig", "print a kubeconfig for this server", "", stderr)
	server := fs.String("server", "http://127.0.0.1:8080", "URL of the leaselab server")
	namespace := fs.String("namespace", "default", "namespace of the context")
	token := fs.String("token", "", "bearer token to put in the kubeconfig (workshop mode)")
	name := fs.String("name", "leaselab", "name of the cluster, user and context")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	b, err := kubeconfig(*server, *namespace, *token, *name)
	if err != nil {
		return err
	}
	_, err = stdout.Write(b)
	return err
}

// kubeconfig renders a kubeconfig with one cluster, user and context.
func kubeconfig(server, namespace, token, name string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: namespace}
	cfg.CurrentContext = name
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("write kubeconfig: %w", err)
	}
	return b, nil
}
