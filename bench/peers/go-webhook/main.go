// go-webhook is a minimal validating admission webhook written with the Go standard library
// only. It is the benchmark peer for admitd: it does the parse-and-answer work a typical Go
// webhook does (read the body, decode the AdmissionReview into typed structs, decode the object
// into a generic map to look at its labels, encode the answer) and nothing else, so that
// admitd-bench can compare admitd against it request for request.
//
//	go-webhook -listen 127.0.0.1:9443 -cert server.pem -key server-key.pem
//
// POST /validate answers {"apiVersion":<the request's>,"kind":"AdmissionReview",
// "response":{"uid":<the request's uid>,"allowed":true}}; bad JSON or a missing request or uid
// gets 400, a body over 3 MiB gets 413. GET /healthz answers "ok". HTTP/1.1 with keep-alive,
// like kubebuilder's scaffold (HTTP/2 off unless -enable-http2). Run it with GOMAXPROCS=1 in the
// environment to match admitd's single thread.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"
)

// maxBodyBytes is kube-apiserver's request size limit, and admitd's --max-request-bytes default.
const maxBodyBytes = 3 << 20

// The AdmissionReview types, trimmed copies of k8s.io/api/admission/v1 (v1beta1 has the same
// shape on the wire).
type groupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

type groupVersionResource struct {
	Group    string `json:"group"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
}

type userInfo struct {
	Username string              `json:"username,omitempty"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

type admissionRequest struct {
	UID                string                `json:"uid"`
	Kind               groupVersionKind      `json:"kind"`
	Resource           groupVersionResource  `json:"resource"`
	SubResource        string                `json:"subResource,omitempty"`
	RequestKind        *groupVersionKind     `json:"requestKind,omitempty"`
	RequestResource    *groupVersionResource `json:"requestResource,omitempty"`
	RequestSubResource string                `json:"requestSubResource,omitempty"`
	Name               string                `json:"name,omitempty"`
	Namespace          string                `json:"namespace,omitempty"`
	Operation          string                `json:"operation"`
	UserInfo           userInfo              `json:"userInfo"`
	Object             json.RawMessage       `json:"object,omitempty"`
	OldObject          json.RawMessage       `json:"oldObject,omitempty"`
	DryRun             *bool                 `json:"dryRun,omitempty"`
	Options            json.RawMessage       `json:"options,omitempty"`
}

type admissionResponse struct {
	UID     string `json:"uid"`
	Allowed bool   `json:"allowed"`
}

type admissionReview struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Request    *admissionRequest  `json:"request,omitempty"`
	Response   *admissionResponse `json:"response,omitempty"`
}

// labelsOf decodes an object into a generic map, as most hand-written webhooks do, and returns
// its metadata.labels. A null or absent object has no labels.
func labelsOf(raw json.RawMessage) (map[string]interface{}, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var obj map[string]interface{}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	meta, _ := obj["metadata"].(map[string]interface{})
	labels, _ := meta["labels"].(map[string]interface{})
	return labels, nil
}

// inspected counts the labels looked at, so the inspection has an observable result.
var inspected uint64

func validate(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		http.Error(w, "reading body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) > maxBodyBytes {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}

	var review admissionReview
	if err := json.Unmarshal(body, &review); err != nil {
		http.Error(w, "bad AdmissionReview: "+err.Error(), http.StatusBadRequest)
		return
	}
	if review.Request == nil || review.Request.UID == "" {
		http.Error(w, "bad AdmissionReview: missing request or request.uid", http.StatusBadRequest)
		return
	}
	req := review.Request

	// Look at the labels of the object (oldObject for DELETE), like a policy webhook would.
	raw := req.Object
	if req.Operation == "DELETE" {
		raw = req.OldObject
	}
	labels, err := labelsOf(raw)
	if err != nil {
		http.Error(w, "bad object: "+err.Error(), http.StatusBadRequest)
		return
	}
	for k, v := range labels {
		if s, ok := v.(string); ok && len(k)+len(s) > 0 {
			inspected++
		}
	}

	apiVersion := review.APIVersion
	if apiVersion == "" {
		apiVersion = "admission.k8s.io/v1"
	}
	out, err := json.Marshal(admissionReview{
		APIVersion: apiVersion,
		Kind:       "AdmissionReview",
		Response:   &admissionResponse{UID: req.UID, Allowed: true},
	})
	if err != nil {
		http.Error(w, "encoding answer: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out) //nolint:errcheck // the client went away; nothing to do
}

func main() {
	listen := flag.String("listen", "127.0.0.1:9443", "HTTPS listen address `HOST:PORT` (port 0 picks a free port)")
	certFile := flag.String("cert", "", "PEM certificate chain `FILE` (required)")
	keyFile := flag.String("key", "", "PEM private key `FILE` (required)")
	enableHTTP2 := flag.Bool("enable-http2", false, "offer HTTP/2 with ALPN (off, as in kubebuilder's scaffold)")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintf(os.Stderr, "go-webhook: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	if *certFile == "" || *keyFile == "" {
		fmt.Fprintln(os.Stderr, "go-webhook: -cert and -key are required")
		os.Exit(2)
	}
	cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-webhook: -cert %s / -key %s: %v\n", *certFile, *keyFile, err)
		os.Exit(2)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("/validate", validate)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok") //nolint:errcheck
	})

	tlsConfig := &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"http/1.1"},
	}
	srv := &http.Server{
		Handler:           mux,
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0), // no per-connection log lines (TLS errors etc.)
	}
	if *enableHTTP2 {
		tlsConfig.NextProtos = []string{"h2", "http/1.1"}
	} else {
		// A non-nil empty map turns off the automatic HTTP/2 upgrade.
		srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdownCtx) //nolint:errcheck
	}()

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-webhook: -listen %s: %v\n", *listen, err)
		os.Exit(2)
	}
	// Port 0 picks a free port; this line says which.
	fmt.Fprintf(os.Stderr, "go-webhook: serving on https://%s (%s, GOMAXPROCS=%d)\n",
		ln.Addr(), runtime.Version(), runtime.GOMAXPROCS(0))
	// The certificate is already in TLSConfig, so the file arguments stay empty.
	if err := srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(os.Stderr, "go-webhook: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "go-webhook: stopped (%d labels inspected)\n", inspected)
}
