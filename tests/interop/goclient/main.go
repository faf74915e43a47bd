// SPDX-License-Identifier: Apache-2.0

// goclient is the Go standard-library TLS client of admitd's interoperability test
// (tests/integration/test-tls-interop.c): kube-apiserver is a Go client, so every cipher suite
// admitd enables is checked against Go's crypto/tls. It sends one AdmissionReview to URL over a
// fresh connection and prints "VERSION SUITE STATUS" (e.g. "TLSv1.3 TLS_AES_128_GCM_SHA256 200").
// Go does not let a client choose its TLS 1.3 suites, so -suite applies to TLS 1.2 (-tls12) only.
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	url := flag.String("url", "", "https URL to POST the review to")
	caFile := flag.String("ca", "", "PEM file of the CA that signed the server")
	review := flag.String("review", "", "file holding the AdmissionReview to send")
	suite := flag.String("suite", "", "TLS 1.2 cipher suite name (Go's), e.g. TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256")
	tls12 := flag.Bool("tls12", false, "offer TLS 1.2 only")
	flag.Parse()

	if err := run(*url, *caFile, *review, *suite, *tls12); err != nil {
		fmt.Fprintln(os.Stderr, "goclient:", err)
		os.Exit(1)
	}
}

func run(url, caFile, reviewFile, suite string, tls12 bool) error {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return fmt.Errorf("%s: no certificate", caFile)
	}
	body, err := os.ReadFile(reviewFile)
	if err != nil {
		return err
	}
	cfg := &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}
	if tls12 {
		cfg.MaxVersion = tls.VersionTLS12
	}
	if suite != "" {
		id, ok := suiteID(suite)
		if !ok {
			return fmt.Errorf("unknown suite %s", suite)
		}
		cfg.CipherSuites = []uint16{id}
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if !strings.Contains(string(answer), `"allowed"`) {
		return fmt.Errorf("answer is not an AdmissionReview: %s", answer)
	}
	fmt.Printf("%s %s %d\n", versionName(resp.TLS.Version), tls.CipherSuiteName(resp.TLS.CipherSuite), resp.StatusCode)
	return nil
}

func suiteID(name string) (uint16, bool) {
	for _, s := range tls.CipherSuites() {
		if s.Name == name {
			return s.ID, true
		}
	}
	return 0, false
}

func versionName(v uint16) string {
	switch v {
	case tls.VersionTLS13:
		return "TLSv1.3"
	case tls.VersionTLS12:
		return "TLSv1.2"
	}
	return fmt.Sprintf("0x%04x", v)
}
