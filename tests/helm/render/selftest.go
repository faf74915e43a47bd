// SPDX-License-Identifier: Apache-2.0
//
// The chart's CI scenarios (render -selftest OUT): the defaults and each TLS mode, everything
// turned on, and values the chart must refuse. Each rendered scenario is parsed and its objects
// checked (kinds, required fields, security context, probes, the webhook registration, TLS
// wiring); then what admitd itself must accept is written under OUT/<scenario>/ for
// tests/helm/chart-test.sh: args (the container's flags, one per line), registration.yaml (the
// chart's webhook configurations, for admitd's --webhook-config loader), and etc/admitd/ (the files
// the pod would mount: certificate, AdmissionConfiguration, downstream webhooks).
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"

	yaml3 "gopkg.in/yaml.v3"
)

const ns = "admitd-system"

type obj = map[string]interface{}

type scenario struct {
	name  string
	sets  []string
	files []string // values files, written from these texts
	check func(t *tester, docs []obj)
	fails string // non-empty: rendering must fail with this text
}

type tester struct {
	scenario string
	problems []string
}

func (t *tester) errorf(format string, args ...interface{}) {
	t.problems = append(t.problems, t.scenario+": "+fmt.Sprintf(format, args...))
}

// get walks a path of map keys and list indices ("spec.template.spec.containers.0.args").
func get(v interface{}, path string) interface{} {
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case obj:
			v = x[k]
		case []interface{}:
			var i int
			if _, err := fmt.Sscan(k, &i); err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func str(v interface{}, path string) string {
	if s, ok := get(v, path).(string); ok {
		return s
	}
	return ""
}

// dataKey is d.data[key]: the keys of a Secret or ConfigMap have dots of their own.
func dataKey(d obj, key string) string {
	data, _ := d["data"].(obj)
	s, _ := data[key].(string)
	return s
}

func (t *tester) want(d obj, path string, value interface{}) {
	if got := get(d, path); fmt.Sprint(got) != fmt.Sprint(value) {
		t.errorf("%s %s: %s is %v, want %v", d["kind"], str(d, "metadata.name"), path, got, value)
	}
}

func find(docs []obj, kind string) []obj {
	var out []obj
	for _, d := range docs {
		if d["kind"] == kind {
			out = append(out, d)
		}
	}
	return out
}

func one(t *tester, docs []obj, kind string) obj {
	found := find(docs, kind)
	if len(found) != 1 {
		t.errorf("%d objects of kind %s, want 1", len(found), kind)
		return obj{}
	}
	return found[0]
}

func parseDocs(text string) ([]obj, error) {
	dec := yaml3.NewDecoder(strings.NewReader(text))
	var docs []obj
	for {
		var d obj
		err := dec.Decode(&d)
		if err != nil {
			if err.Error() == "EOF" {
				return docs, nil
			}
			return nil, err
		}
		if d != nil {
			docs = append(docs, d)
		}
	}
}

var knownKinds = map[string]bool{
	"Deployment": true, "Service": true, "ServiceAccount": true, "PodDisruptionBudget": true, "Secret": true,
	"ConfigMap": true, "ClusterRole": true, "ClusterRoleBinding": true, "MutatingWebhookConfiguration": true,
	"ValidatingWebhookConfiguration": true, "Certificate": true, "Issuer": true, "ServiceMonitor": true,
}

// checkCommon: what every rendering must hold.
func checkCommon(t *tester, docs []obj, failurePolicy string, timeout int) {
	for _, d := range docs {
		kind, _ := d["kind"].(string)
		if str(d, "apiVersion") == "" || kind == "" || str(d, "metadata.name") == "" {
			t.errorf("an object without apiVersion, kind or metadata.name: %v", d)
		}
		if !knownKinds[kind] {
			t.errorf("unexpected kind %q", kind)
		}
	}
	dep := one(t, docs, "Deployment")
	pod := get(dep, "spec.template.spec")
	c := get(pod, "containers.0")
	t.want(dep, "spec.template.spec.securityContext.runAsNonRoot", true)
	t.want(dep, "spec.template.spec.securityContext.seccompProfile.type", "RuntimeDefault")
	for path, value := range map[string]interface{}{
		"securityContext.readOnlyRootFilesystem":   true,
		"securityContext.allowPrivilegeEscalation": false,
		"securityContext.capabilities.drop":        []interface{}{"ALL"},
		"livenessProbe.httpGet.path":               "/livez",
		"livenessProbe.httpGet.port":               "health",
		"readinessProbe.httpGet.path":              "/readyz",
		"readinessProbe.httpGet.port":              "health",
		"ports.1.name":                             "health",
	} {
		if fmt.Sprint(get(c, path)) != fmt.Sprint(value) {
			t.errorf("container %s is %v, want %v", path, get(c, path), value)
		}
	}
	if get(pod, "affinity.podAntiAffinity") == nil || get(pod, "topologySpreadConstraints.0") == nil {
		t.errorf("pods are not spread: no anti-affinity or topology spread")
	}
	args := fmt.Sprint(get(c, "args"))
	healthPort := fmt.Sprint(get(c, "ports.1.containerPort"))
	if !strings.Contains(args, "--health-listen=0.0.0.0:"+healthPort) {
		t.errorf("the probes' port %s is not --health-listen in %s", healthPort, args)
	}
	if !strings.Contains(args, "--metrics-listen=0.0.0.0:") {
		t.errorf("no --metrics-listen in %s", args)
	}
	svc := one(t, docs, "Service")
	t.want(svc, "spec.ports.0.targetPort", "https")
	one(t, docs, "ServiceAccount")
	one(t, docs, "PodDisruptionBudget")
	sel := fmt.Sprint(get(svc, "spec.selector"))
	if sel != fmt.Sprint(get(dep, "spec.template.metadata.labels")) {
		t.errorf("the Service selects %s, the pods are labelled %v", sel, get(dep, "spec.template.metadata.labels"))
	}
	for kind, path := range map[string]string{"MutatingWebhookConfiguration": "/mutate",
		"ValidatingWebhookConfiguration": "/validate"} {
		wc := one(t, docs, kind)
		t.want(wc, "webhooks.0.sideEffects", "None")
		t.want(wc, "webhooks.0.admissionReviewVersions", []interface{}{"v1", "v1beta1"})
		t.want(wc, "webhooks.0.failurePolicy", failurePolicy)
		t.want(wc, "webhooks.0.timeoutSeconds", timeout)
		t.want(wc, "webhooks.0.clientConfig.service.path", path)
		t.want(wc, "webhooks.0.clientConfig.service.name", str(svc, "metadata.name"))
		t.want(wc, "webhooks.0.clientConfig.service.namespace", ns)
		t.want(wc, "webhooks.0.namespaceSelector.matchExpressions.0", obj{
			"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": []interface{}{ns, "kube-system"}})
	}
	// the volume the certificate comes from is the Secret that the TLS mode provides
	if str(pod, "volumes.0.name") != "tls" || str(pod, "volumes.0.secret.secretName") == "" {
		t.errorf("no tls volume from a Secret: %v", get(pod, "volumes"))
	}
}

func secretName(docs []obj) string {
	return str(get(one(&tester{}, docs, "Deployment"), "spec.template.spec"), "volumes.0.secret.secretName")
}

func checkSelfSigned(t *tester, docs []obj) {
	checkCommon(t, docs, "Fail", 10)
	secret := one(t, docs, "Secret")
	if str(secret, "metadata.name") != secretName(docs) {
		t.errorf("the pod mounts %s, the chart writes %s", secretName(docs), str(secret, "metadata.name"))
	}
	caB64 := dataKey(secret, "ca.crt")
	for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
		if got := str(one(t, docs, kind), "webhooks.0.clientConfig.caBundle"); got != caB64 || got == "" {
			t.errorf("%s caBundle is not the Secret's CA", kind)
		}
	}
	// the serving certificate verifies against the caBundle for the Service's name
	caPEM, _ := base64.StdEncoding.DecodeString(caB64)
	certPEM, _ := base64.StdEncoding.DecodeString(dataKey(secret, "tls.crt"))
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.errorf("caBundle is not a PEM certificate")
		return
	}
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.errorf("tls.crt is not PEM")
		return
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.errorf("tls.crt: %v", err)
		return
	}
	host := str(one(t, docs, "Service"), "metadata.name") + "." + ns + ".svc"
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: host, Roots: pool}); err != nil {
		t.errorf("the serving certificate does not verify for %s: %v", host, err)
	}
}

func checkCertManager(t *tester, docs []obj) {
	checkCommon(t, docs, "Fail", 10)
	var serving obj
	for _, c := range find(docs, "Certificate") {
		if str(c, "spec.secretName") == secretName(docs) {
			serving = c
		}
	}
	if serving == nil {
		t.errorf("no Certificate writes the Secret the pod mounts (%s)", secretName(docs))
		return
	}
	host := str(one(t, docs, "Service"), "metadata.name") + "." + ns + ".svc"
	if !strings.Contains(fmt.Sprint(get(serving, "spec.dnsNames")), host) {
		t.errorf("the Certificate's dnsNames %v lack %s", get(serving, "spec.dnsNames"), host)
	}
	for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
		wc := one(t, docs, kind)
		ann, _ := get(wc, "metadata.annotations").(obj)
		if ann["cert-manager.io/inject-ca-from"] != ns+"/"+str(serving, "metadata.name") {
			t.errorf("%s inject-ca-from is %v", kind, ann["cert-manager.io/inject-ca-from"])
		}
		if get(wc, "webhooks.0.clientConfig.caBundle") != nil {
			t.errorf("%s has a caBundle of its own; cert-manager injects it", kind)
		}
	}
	if len(find(docs, "Issuer")) != 2 {
		t.errorf("without an issuerRef the chart makes its own CA: want 2 Issuers, got %d", len(find(docs, "Issuer")))
	}
	if len(find(docs, "Secret")) != 0 {
		t.errorf("cert-manager writes the Secret; the chart must not")
	}
}

const userCA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="

func checkSecret(t *tester, docs []obj) {
	checkCommon(t, docs, "Fail", 10)
	if secretName(docs) != "my-tls" {
		t.errorf("the pod mounts %s, not tls.secretName", secretName(docs))
	}
	if len(find(docs, "Secret")) != 0 || len(find(docs, "Certificate")) != 0 {
		t.errorf("secret mode: the chart must neither write a Secret nor ask for a Certificate")
	}
	for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
		t.want(one(t, docs, kind), "webhooks.0.clientConfig.caBundle", userCA)
	}
}

const everythingValues = `
replicaCount: 3
webhook:
  failurePolicy: Ignore
  timeoutSeconds: 5
  namespaceSelector:
    matchLabels: {admitd.io/enabled: "true"}
    matchExpressions:
      - {key: tier, operator: NotIn, values: [infra]}
metrics:
  serviceMonitor: {enabled: true}
dashboard: {enabled: true}
admission:
  enablePlugins: [AlwaysPullImages, EventRateLimit]
  disablePlugins: [TaintNodesByCondition]
  config:
    apiVersion: apiserver.config.k8s.io/v1
    kind: AdmissionConfiguration
    plugins:
      - name: EventRateLimit
        configuration:
          apiVersion: eventratelimit.admission.k8s.io/v1alpha1
          kind: Configuration
          limits:
            - {type: Server, qps: 50, burst: 100}
downstreamWebhooks:
  - apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingWebhookConfiguration
    metadata: {name: policy}
    webhooks:
      - name: pods.policy.example.com
        clientConfig:
          service: {name: policy, namespace: policy-system, path: /validate}
        rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
        sideEffects: None
        admissionReviewVersions: [v1]
  - apiVersion: admissionregistration.k8s.io/v1
    kind: MutatingWebhookConfiguration
    metadata: {name: defaults}
    webhooks:
      - name: defaults.example.com
        clientConfig: {url: "https://defaults.example.com/mutate"}
        rules: [{operations: [CREATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}]
        sideEffects: None
        admissionReviewVersions: [v1]
clusterState:
  inCluster: true
`

func checkEverything(t *tester, docs []obj) {
	checkCommon(t, docs, "Ignore", 5)
	t.want(one(t, docs, "Deployment"), "spec.replicas", 3)
	role := one(t, docs, "ClusterRole")
	rules := fmt.Sprint(get(role, "rules"))
	for _, r := range []string{"namespaces", "limitranges", "resourcequotas", "priorityclasses", "runtimeclasses",
		"services", "endpointslices"} {
		if !strings.Contains(rules, r) {
			t.errorf("the ClusterRole does not let admitd read %s: %s", r, rules)
		}
	}
	if strings.Contains(rules, "create") || strings.Contains(rules, "update") || strings.Contains(rules, "*") {
		t.errorf("the ClusterRole grants more than get/list/watch: %s", rules)
	}
	t.want(one(t, docs, "ClusterRoleBinding"), "subjects.0.name", str(one(t, docs, "ServiceAccount"), "metadata.name"))
	one(t, docs, "ServiceMonitor")
	wc := one(t, docs, "ValidatingWebhookConfiguration")
	t.want(wc, "webhooks.0.namespaceSelector.matchExpressions.1.key", "tier")
	if ml, _ := get(wc, "webhooks.0.namespaceSelector.matchLabels").(obj); ml["admitd.io/enabled"] != "true" {
		t.errorf("webhook.namespaceSelector.matchLabels were not kept: %v", ml)
	}
	var config, dashboard obj
	for _, cm := range find(docs, "ConfigMap") {
		if strings.HasSuffix(str(cm, "metadata.name"), "-dashboard") {
			dashboard = cm
		} else {
			config = cm
		}
	}
	if dashboard == nil || config == nil {
		t.errorf("want the configuration and the dashboard ConfigMaps")
		return
	}
	var board map[string]interface{}
	if err := json.Unmarshal([]byte(dataKey(dashboard, "admitd.json")), &board); err != nil {
		t.errorf("the dashboard is not JSON: %v", err)
	} else {
		text := dataKey(dashboard, "admitd.json")
		for _, family := range []string{"admitd_requests_total", "admitd_admission_controller_duration_seconds",
			"admitd_webhook_admission_duration_seconds", "admitd_webhook_rejection_count",
			"admitd_webhook_fail_open_count", "admitd_connections", "admitd_config_reloads_total"} {
			if !strings.Contains(text, family) {
				t.errorf("the dashboard does not show %s", family)
			}
		}
	}
	args := fmt.Sprint(get(one(t, docs, "Deployment"), "spec.template.spec.containers.0.args"))
	for _, a := range []string{"--enable-admission-plugins=AlwaysPullImages,EventRateLimit",
		"--disable-admission-plugins=TaintNodesByCondition", "--admission-control-config-file=",
		"--webhook-config=/etc/admitd/webhooks", "--in-cluster"} {
		if !strings.Contains(args, a) {
			t.errorf("args lack %s: %s", a, args)
		}
	}
}

var scenarios = []scenario{
	{name: "defaults", check: checkSelfSigned},
	{name: "selfSigned", sets: []string{"tls.mode=selfSigned"}, check: checkSelfSigned},
	{name: "certManager", sets: []string{"tls.mode=certManager"}, check: checkCertManager},
	{name: "secret", sets: []string{"tls.mode=secret", "tls.secretName=my-tls", "tls.caBundle=" + userCA},
		check: checkSecret},
	{name: "everything", files: []string{everythingValues}, check: checkEverything},
	{name: "secret-without-name", sets: []string{"tls.mode=secret"}, fails: "tls.secretName is required"},
	{name: "unknown-tls-mode", sets: []string{"tls.mode=magic"}, fails: "tls.mode: must be one of"},
	{name: "bad-failure-policy", sets: []string{"webhook.failurePolicy=Sometimes"}, fails: "webhook.failurePolicy"},
	{name: "zero-replicas", sets: []string{"replicaCount=0"}, fails: "replicaCount"},
}

// A throwaway certificate for scenarios whose Secret comes from elsewhere, so admitd can start.
func throwawayCert(dir string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "admitd"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"admitd"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
}

// writeForAdmitd writes what the pod would get: its args, the files it mounts, and the chart's
// own webhook configurations.
func writeForAdmitd(dir string, docs []obj) error {
	etc := filepath.Join(dir, "etc", "admitd")
	for _, sub := range []string{"tls", "admission", "webhooks"} {
		if err := os.MkdirAll(filepath.Join(etc, sub), 0o755); err != nil {
			return err
		}
	}
	dep := find(docs, "Deployment")[0]
	var args []string
	for _, a := range get(dep, "spec.template.spec.containers.0.args").([]interface{}) {
		args = append(args, fmt.Sprint(a))
	}
	if err := os.WriteFile(filepath.Join(dir, "args"), []byte(strings.Join(args, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	if secrets := find(docs, "Secret"); len(secrets) == 1 {
		for _, k := range []string{"tls.crt", "tls.key"} {
			b, err := base64.StdEncoding.DecodeString(dataKey(secrets[0], k))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(etc, "tls", k), b, 0o600); err != nil {
				return err
			}
		}
	} else if err := throwawayCert(filepath.Join(etc, "tls")); err != nil {
		return err
	}
	for _, cm := range find(docs, "ConfigMap") {
		data, _ := get(cm, "data").(obj)
		if s, ok := data["admission.yaml"].(string); ok {
			if err := os.WriteFile(filepath.Join(etc, "admission", "admission.yaml"), []byte(s), 0o644); err != nil {
				return err
			}
		}
		if s, ok := data["webhooks.yaml"].(string); ok {
			if err := os.WriteFile(filepath.Join(etc, "webhooks", "webhooks.yaml"), []byte(s), 0o644); err != nil {
				return err
			}
		}
	}
	var reg []string
	for _, d := range docs {
		if d["kind"] == "MutatingWebhookConfiguration" || d["kind"] == "ValidatingWebhookConfiguration" {
			b, err := yaml3.Marshal(d)
			if err != nil {
				return err
			}
			reg = append(reg, string(b))
		}
	}
	return os.WriteFile(filepath.Join(dir, "registration.yaml"), []byte(strings.Join(reg, "---\n")), 0o644)
}

func runSelftest(chart, out string) error {
	var problems []string
	for _, sc := range scenarios {
		t := &tester{scenario: sc.name}
		var files []string
		for i, text := range sc.files {
			f := filepath.Join(out, fmt.Sprintf("%s-values-%d.yaml", sc.name, i))
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
				return err
			}
			files = append(files, f)
		}
		manifests, notes, err := render(chart, ns, "admitd", files, sc.sets)
		if sc.fails != "" {
			if err == nil || !strings.Contains(err.Error(), sc.fails) {
				t.errorf("rendering must fail with %q, got %v", sc.fails, err)
			}
			problems = append(problems, t.problems...)
			fmt.Printf("scenario %-20s refused as it should: %v\n", sc.name, err)
			continue
		}
		if err != nil {
			problems = append(problems, sc.name+": "+err.Error())
			continue
		}
		docs, err := parseDocs(manifests)
		if err != nil {
			problems = append(problems, sc.name+": the output is not YAML: "+err.Error())
			continue
		}
		if !strings.Contains(notes, "kubectl") {
			t.errorf("NOTES.txt did not render: %q", notes)
		}
		sc.check(t, docs)
		problems = append(problems, t.problems...)
		if len(t.problems) == 0 {
			dir := filepath.Join(out, sc.name)
			if err := writeForAdmitd(dir, docs); err != nil {
				return fmt.Errorf("%s: %v", sc.name, err)
			}
			if err := os.WriteFile(filepath.Join(dir, "manifests.yaml"), []byte(manifests), 0o644); err != nil {
				return err
			}
		}
		fmt.Printf("scenario %-20s %d objects, %d problems\n", sc.name, len(docs), len(t.problems))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d problems:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	return nil
}
