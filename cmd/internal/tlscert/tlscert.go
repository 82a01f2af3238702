// Package tlscert is the certificate `leaselab serve` serves HTTPS with when it is given none:
// self-signed, its own CA (kubeconfigs carry it), kept beside the database so that a restart
// serves the same one, and replaced when it expires within a day or no longer names every host
// the server is reached at. It also checks a certificate of the user's own against the public
// URL.
package tlscert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Paths are where the self-signed certificate of a database is kept: beside it, so that a
// restart serves the same certificate and printed kubeconfigs stay valid.
func Paths(dbPath string) (cert, key string) {
	return dbPath + ".tls.crt", dbPath + ".tls.key"
}

// SelfSigned loads the certificate kept beside the database, or generates one (ECDSA P-256,
// a year) when there is none, it expires within a day, or it does not name every host the
// server is reached at: localhost, 127.0.0.1, ::1, the listen host, the host of the public URL,
// and for a wildcard address this machine's name and addresses. The certificate is its own CA:
// kubeconfigs carry it. Only leaselab writes the files beside the database (a certificate of
// one's own comes through --tls-cert-file), so replacing them loses nothing of the user's. It
// returns the certificate's file and PEM with the certificate, or an error reading, generating
// or writing it.
func SelfSigned(dbPath, addr, publicURL string, logger *slog.Logger) (certFile string, caPEM []byte, cert tls.Certificate, err error) {
	certFile, keyFile := Paths(dbPath)
	dnsNames, ips := certHosts(addr, publicURL)
	if certPEM, err := os.ReadFile(certFile); err == nil {
		if c, err := tls.LoadX509KeyPair(certFile, keyFile); err == nil && certCovers(c, dnsNames, ips) {
			return certFile, certPEM, c, nil
		}
		// Kubeconfigs printed before carry the old certificate: say why they stop working.
		logger.Warn("the self-signed TLS certificate beside the database expires soon or does not name every host the server is reached at; generating a new one (download the kubeconfigs again)",
			slog.String("file", certFile))
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", nil, tls.Certificate{}, fmt.Errorf("read TLS certificate: %w", err)
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", nil, tls.Certificate{}, fmt.Errorf("generate TLS key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return "", nil, tls.Certificate{}, fmt.Errorf("certificate serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"leaselab"}, CommonName: "leaselab self-signed"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              dnsNames,
		IPAddresses:           ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", nil, tls.Certificate{}, fmt.Errorf("create TLS certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", nil, tls.Certificate{}, fmt.Errorf("encode TLS key: %w", err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	if err := replaceFile(keyFile, keyPEM, 0o600); err != nil {
		return "", nil, tls.Certificate{}, fmt.Errorf("write TLS key: %w", err)
	}
	if err := replaceFile(certFile, certPEM, 0o644); err != nil {
		return "", nil, tls.Certificate{}, fmt.Errorf("write TLS certificate: %w", err)
	}
	cert, err = tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return "", nil, tls.Certificate{}, fmt.Errorf("load TLS certificate: %w", err)
	}
	logger.Info("generated a self-signed TLS certificate", slog.String("file", certFile), slog.Any("dns", dnsNames), slog.Any("ips", ips))
	return certFile, certPEM, cert, nil
}

// replaceFile writes data to a new file beside path and renames it over path: a reader sees the
// old file or the whole new one, and the file has mode perm even when the old one was looser
// (os.WriteFile keeps an existing file's mode).
func replaceFile(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = f.Chmod(perm)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// certHosts lists the names and addresses the certificate must be valid for: those of the
// listen address and the host of the public URL, which join links and kubeconfigs name.
func certHosts(addr, publicURL string) ([]string, []net.IP) {
	dns := []string{"localhost"}
	ips := []net.IP{net.IPv4(127, 0, 0, 1).To4(), net.IPv6loopback}
	addIP := func(ip net.IP) {
		if v4 := ip.To4(); v4 != nil {
			ip = v4
		}
		if !slices.ContainsFunc(ips, ip.Equal) {
			ips = append(ips, ip)
		}
	}
	host, _, _ := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	switch {
	case host == "" || ip != nil && ip.IsUnspecified():
		if name, err := os.Hostname(); err == nil && name != "" && !slices.Contains(dns, name) {
			dns = append(dns, name)
		}
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok && !n.IP.IsLinkLocalUnicast() {
					addIP(n.IP)
				}
			}
		}
	case ip != nil:
		addIP(ip)
	case !slices.Contains(dns, host):
		dns = append(dns, host)
	}
	if u, err := url.Parse(publicURL); err == nil && u.Hostname() != "" {
		if ip := net.ParseIP(u.Hostname()); ip != nil {
			addIP(ip)
		} else if h := strings.ToLower(u.Hostname()); !slices.Contains(dns, h) {
			dns = append(dns, h)
		}
	}
	return dns, ips
}

// WarnUnnamedHost warns when a certificate of the user's own does not name the public URL's
// host: clients given the join links and kubeconfigs would refuse it.
func WarnUnnamedHost(c tls.Certificate, publicURL string, logger *slog.Logger) {
	u, err := url.Parse(publicURL)
	if err != nil || u.Hostname() == "" || len(c.Certificate) == 0 {
		return
	}
	x, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		return
	}
	if err := x.VerifyHostname(u.Hostname()); err != nil {
		logger.Warn("--tls-cert-file does not name the host of --public-url: clients will refuse the join links and kubeconfigs",
			slog.String("host", u.Hostname()), slog.Any("error", err))
	}
}

// certCovers says whether a certificate is valid for another day and names every host.
func certCovers(c tls.Certificate, dnsNames []string, ips []net.IP) bool {
	if len(c.Certificate) == 0 {
		return false
	}
	x, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil || time.Until(x.NotAfter) < 24*time.Hour {
		return false
	}
	for _, d := range dnsNames {
		if !slices.Contains(x.DNSNames, d) {
			return false
		}
	}
	for _, ip := range ips {
		if !slices.ContainsFunc(x.IPAddresses, ip.Equal) {
			return false
		}
	}
	return true
}
