package auth

import (
	"fmt"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Kubeconfig renders a kubeconfig with one cluster, user and context. caData, when set, is the
// PEM certificate authority the client verifies the server with (embedded, so the file is
// self-contained). A plain-http server is marked insecure-skip-tls-verify: there is no TLS to
// verify, and the JavaScript client (@kubernetes/client-node) refuses an http server without
// it, while kubectl, client-go and the Python client accept it.
func Kubeconfig(server, namespace, token, name string, caData []byte) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cluster := &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caData}
	if strings.HasPrefix(strings.ToLower(server), "http://") {
		cluster.InsecureSkipTLSVerify = true
	}
	cfg.Clusters[name] = cluster
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: namespace}
	cfg.CurrentContext = name
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("write kubeconfig: %w", err)
	}
	return b, nil
}
