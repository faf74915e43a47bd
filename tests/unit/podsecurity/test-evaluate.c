/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Pod Security checks' texts, case by case as pod-security-admission's policy/check_*_test.go
 * assert them (reason and detail byte for byte), the versions at which each rule starts, and the
 * aggregated ForbiddenDetail of several failing checks in kube's order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <yyjson.h>

#include "adm/base/arena.h"
#include "adm/base/json.h"
#include "adm/podsecurity/evaluate.h"

typedef struct check_case_s {
    const char *lv;     /* "restricted:latest" */
    const char *pod;    /* {"metadata":...,"spec":...} */
    const char *reason; /* the failing check's reason */
    const char *detail; /* its detail; NULL: no check with that reason fails */
} check_case_t;

static const check_case_t cases[] = {
    /* allowPrivilegeEscalation */
    {"restricted:latest",
     "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\",\"securityContext\":{}},{\"name\":\"c\""
     ",\"securityContext\":{\"allowPrivilegeEscalation\":true}}]}}",
     "allowPrivilegeEscalation != false",
     "containers \"a\", \"b\", \"c\" must set securityContext.allowPrivilegeEscalation=false"},
    {"restricted:latest", "{\"spec\":{\"os\":{\"name\":\"windows\"},\"containers\":[{\"name\":\"a\"}]}}",
     "allowPrivilegeEscalation != false", NULL},
    {"restricted:v1.24", "{\"spec\":{\"os\":{\"name\":\"windows\"},\"containers\":[{\"name\":\"a\"}]}}",
     "allowPrivilegeEscalation != false",
     "container \"a\" must set securityContext.allowPrivilegeEscalation=false"},
    {"restricted:v1.7", "{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}", "allowPrivilegeEscalation != false",
     NULL},
    /* appArmorProfile */
    {"baseline:latest", "{\"spec\":{\"securityContext\":{\"appArmorProfile\":{\"type\":\"Unconfined\"}}}}",
     "forbidden AppArmor profile", "pod must not set AppArmor profile type to \"Unconfined\""},
    {"baseline:latest",
     "{\"spec\":{\"initContainers\":[{\"name\":\"bar\",\"securityContext\":{\"appArmorProfile\":{\"type\""
     ":\"Unconfined\"}}}],\"containers\":[{\"name\":\"foo\",\"securityContext\":{\"appArmorProfile\":{\"t"
     "ype\":\"RuntimeDefault\"}}}]}}",
     "forbidden AppArmor profile", "container \"bar\" must not set AppArmor profile type to \"Unconfined\""},
    {"baseline:latest",
     "{\"metadata\":{\"annotations\":{\"container.apparmor.security.beta.kubernetes.io/\":\"bogus\",\"con"
     "tainer.apparmor.security.beta.kubernetes.io/a\":\"\",\"container.apparmor.security.beta.kubernetes."
     "io/b\":\"runtime/default\",\"container.apparmor.security.beta.kubernetes.io/c\":\"localhost/\",\"co"
     "ntainer.apparmor.security.beta.kubernetes.io/d\":\"localhost/foo\",\"container.apparmor.security.be"
     "ta.kubernetes.io/e\":\"unconfined\",\"container.apparmor.security.beta.kubernetes.io/f\":\"unknown"
     "\"}}}",
     "forbidden AppArmor profiles",
     "annotations must not set AppArmor profile type to \"container.apparmor.security.beta.kubernetes.io/"
     "=\"bogus\"\", \"container.apparmor.security.beta.kubernetes.io/e=\"unconfined\"\", \"container.appa"
     "rmor.security.beta.kubernetes.io/f=\"unknown\"\""},
    /* capabilities */
    {"baseline:latest",
     "{\"spec\":{\"containers\":[{\"name\":\"a\",\"securityContext\":{\"capabilities\":{\"add\":[\"FOO\","
     "\"BAR\"]}}},{\"name\":\"b\",\"securityContext\":{\"capabilities\":{\"add\":[\"BAR\",\"BAZ\"]}}},{\""
     "name\":\"c\",\"securityContext\":{\"capabilities\":{\"add\":[\"CHOWN\"]}}}]}}",
     "non-default capabilities",
     "containers \"a\", \"b\" must not include \"BAR\", \"BAZ\", \"FOO\" in securityContext.capabilities."
     "add"},
    {"restricted:latest",
     "{\"spec\":{\"containers\":[{\"name\":\"a\",\"securityContext\":{\"capabilities\":{\"add\":[\"FOO\","
     "\"BAR\"]}}},{\"name\":\"b\",\"securityContext\":{\"capabilities\":{\"add\":[\"BAR\",\"BAZ\"]}}},{\""
     "name\":\"c\",\"securityContext\":{\"capabilities\":{\"add\":[\"NET_BIND_SERVICE\",\"CHOWN\"],\"drop"
     "\":[\"ALL\",\"FOO\"]}}}]}}",
     "unrestricted capabilities",
     "containers \"a\", \"b\" must set securityContext.capabilities.drop=[\"ALL\"]; containers \"a\", \"b"
     "\", \"c\" must not include \"BAR\", \"BAZ\", \"CHOWN\", \"FOO\" in securityContext.capabilities.add"},
    {"restricted:latest", "{\"spec\":{\"os\":{\"name\":\"linux\"},\"containers\":[{\"name\":\"a\"}]}}",
     "unrestricted capabilities", "container \"a\" must set securityContext.capabilities.drop=[\"ALL\"]"},
    {"restricted:v1.21", "{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}", "unrestricted capabilities", NULL},
    /* host namespaces, hostPath volumes, host ports */
    {"baseline:latest", "{\"spec\":{\"hostIPC\":true,\"hostNetwork\":true,\"hostPID\":true}}",
     "host namespaces", "hostNetwork=true, hostPID=true, hostIPC=true"},
    {"baseline:latest",
     "{\"spec\":{\"volumes\":[{\"name\":\"a\",\"hostPath\":{}},{\"name\":\"b\",\"hostPath\":{}},{\"name\""
     ":\"c\",\"emptyDir\":{}}]}}",
     "hostPath volumes", "volumes \"a\", \"b\""},
    {"baseline:latest",
     "{\"spec\":{\"containers\":[{\"name\":\"a\",\"ports\":[{\"hostPort\":0}]},{\"name\":\"b\",\"ports\":"
     "[{\"hostPort\":0},{\"hostPort\":20}]}]}}",
     "hostPort", "container \"b\" uses hostPort 20"},
    {"baseline:latest",
     "{\"spec\":{\"containers\":[{\"name\":\"a\",\"ports\":[{\"hostPort\":0}]},{\"name\":\"b\",\"ports\":"
     "[{\"hostPort\":0},{\"hostPort\":10},{\"hostPort\":20}]},{\"name\":\"c\",\"ports\":[{\"hostPort\":0}"
     ",{\"hostPort\":10},{\"hostPort\":30}]}]}}",
     "hostPort", "containers \"b\", \"c\" use hostPorts 10, 20, 30"},
    {"baseline:latest",
     "{\"spec\":{\"containers\":[{\"name\":\"a\",\"ports\":[{\"hostPort\":8080},{\"hostPort\":10000}]}]}}",
     "hostPort", "container \"a\" uses hostPorts 10000, 8080"},
    /* probe and lifecycle hosts (v1.34+) */
    {"baseline:latest",
     "{\"spec\":{\"containers\":[{\"name\":\"a\",\"livenessProbe\":{\"httpGet\":{\"host\":\"localhost\"}}"
     ",\"readinessProbe\":{\"tcpSocket\":{\"host\":\"127.0.0.1\"}},\"startupProbe\":{\"httpGet\":{\"host"
     "\":\"::1\"}}}]}}",
     "probe or lifecycle host",
     "container \"a\" uses probe or lifecycle hosts \"127.0.0.1\", \"::1\", \"localhost\""},
    {"baseline:latest",
     "{\"spec\":{\"containers\":[{\"name\":\"e\",\"lifecycle\":{\"preStop\":{\"httpGet\":{\"host\":\"anot"
     "her.invalid.host\"}}}}]}}",
     "probe or lifecycle host", "container \"e\" uses probe or lifecycle host \"another.invalid.host\""},
    {"baseline:latest",
     "{\"spec\":{\"containers\":[{\"name\":\"invalid2\",\"lifecycle\":{\"postStart\":{\"tcpSocket\":{\"ho"
     "st\":\"a.com\"}}}},{\"name\":\"invalid1\",\"livenessProbe\":{\"httpGet\":{\"host\":\"b.com\"}}}]}}",
     "probe or lifecycle host",
     "containers \"invalid1\", \"invalid2\" use probe or lifecycle hosts \"a.com\", \"b.com\""},
    {"baseline:v1.33",
     "{\"spec\":{\"containers\":[{\"name\":\"a\",\"livenessProbe\":{\"httpGet\":{\"host\":\"x\"}}}]}}",
     "probe or lifecycle host", NULL},
    /* privileged, procMount */
    {"baseline:latest",
     "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\",\"securityContext\":{}},{\"name\":\"c\""
     ",\"securityContext\":{\"privileged\":false}},{\"name\":\"d\",\"securityContext\":{\"privileged\":tr"
     "ue}},{\"name\":\"e\",\"securityContext\":{\"privileged\":true}}]}}",
     "privileged", "containers \"d\", \"e\" must not set securityContext.privileged=true"},
    /* a field only the last of the three lists sets is seen (the pod's record of which
       securityContext fields any container sets covers every list) */
    {"baseline:latest",
     "{\"spec\":{\"initContainers\":[{\"name\":\"i\"}],\"containers\":[{\"name\":\"a\",\"securityContext\""
     ":{\"runAsUser\":1}}],\"ephemeralContainers\":[{\"name\":\"x\",\"securityContext\":{\"privileged\":t"
     "rue}}]}}",
     "privileged", "container \"x\" must not set securityContext.privileged=true"},
    /* more names than a list holds in place (four): all of them, in order */
    {"baseline:latest",
     "{\"spec\":{\"containers\":[{\"name\":\"a\",\"securityContext\":{\"privileged\":true}},{\"name\":\"b"
     "\",\"securityContext\":{\"privileged\":true}},{\"name\":\"c\",\"securityContext\":{\"privileged\":t"
     "rue}},{\"name\":\"d\",\"securityContext\":{\"privileged\":true}},{\"name\":\"e\",\"securityContext\""
     ":{\"privileged\":true}},{\"name\":\"f\",\"securityContext\":{\"privileged\":true}},{\"name\":\"g\","
     "\"securityContext\":{\"privileged\":true}},{\"name\":\"h\",\"securityContext\":{\"privileged\":true"
     "}},{\"name\":\"i\",\"securityContext\":{\"privileged\":true}}]}}",
     "privileged",
     "containers \"a\", \"b\", \"c\", \"d\", \"e\", \"f\", \"g\", \"h\", \"i\" must not set "
     "securityContext.privileged=true"},
    {"baseline:latest",
     "{\"spec\":{\"hostUsers\":true,\"containers\":[{\"name\":\"a\"},{\"name\":\"c\",\"securityContext\":"
     "{\"procMount\":\"Default\"}},{\"name\":\"d\",\"securityContext\":{\"procMount\":\"Unmasked\"}},{\"n"
     "ame\":\"e\",\"securityContext\":{\"procMount\":\"other\"}}]}}",
     "procMount",
     "containers \"d\", \"e\" must not set securityContext.procMount to \"Unmasked\", \"other\""},
    {"baseline:latest",
     "{\"spec\":{\"hostUsers\":false,\"containers\":[{\"name\":\"d\",\"securityContext\":{\"procMount\":"
     "\"Unmasked\"}}]}}",
     "procMount", NULL},
    {"baseline:v1.34",
     "{\"spec\":{\"hostUsers\":false,\"containers\":[{\"name\":\"d\",\"securityContext\":{\"procMount\":"
     "\"Unmasked\"}}]}}",
     "procMount", "container \"d\" must not set securityContext.procMount to \"Unmasked\""},
    {"restricted:latest",
     "{\"spec\":{\"hostUsers\":false,\"containers\":[{\"name\":\"d\",\"securityContext\":{\"procMount\":"
     "\"Unmasked\"}}]}}",
     "procMount", "container \"d\" must not set securityContext.procMount to \"Unmasked\""},
    /* restricted volume types */
    {"restricted:latest",
     "{\"spec\":{\"volumes\":[{\"name\":\"a1\",\"emptyDir\":{}},{\"name\":\"a2\",\"secret\":{}},{\"name\""
     ":\"a3\",\"persistentVolumeClaim\":{}},{\"name\":\"a4\",\"downwardAPI\":{}},{\"name\":\"a5\",\"confi"
     "gMap\":{}},{\"name\":\"a6\",\"projected\":{}},{\"name\":\"a7\",\"csi\":{}},{\"name\":\"a8\",\"ephem"
     "eral\":{}},{\"name\":\"a9\",\"image\":{}},{\"name\":\"b1\",\"hostPath\":{}},{\"name\":\"b2\",\"gceP"
     "ersistentDisk\":{}},{\"name\":\"b3\",\"awsElasticBlockStore\":{}},{\"name\":\"b4\",\"gitRepo\":{}},"
     "{\"name\":\"b5\",\"nfs\":{}},{\"name\":\"b6\",\"iscsi\":{}},{\"name\":\"b7\",\"glusterfs\":{}},{\"n"
     "ame\":\"b8\",\"rbd\":{}},{\"name\":\"b9\",\"flexVolume\":{}},{\"name\":\"b10\",\"cinder\":{}},{\"na"
     "me\":\"b11\",\"cephfs\":{}},{\"name\":\"b12\",\"flocker\":{}},{\"name\":\"b13\",\"fc\":{}},{\"name"
     "\":\"b14\",\"azureFile\":{}},{\"name\":\"b15\",\"vsphereVolume\":{}},{\"name\":\"b16\",\"quobyte\":"
     "{}},{\"name\":\"b17\",\"azureDisk\":{}},{\"name\":\"b18\",\"photonPersistentDisk\":{}},{\"name\":\""
     "b19\",\"portworxVolume\":{}},{\"name\":\"b20\",\"scaleIO\":{}},{\"name\":\"b21\",\"storageos\":{}},"
     "{\"name\":\"c1\"}]}}",
     "restricted volume types",
     "volumes \"b1\", \"b2\", \"b3\", \"b4\", \"b5\", \"b6\", \"b7\", \"b8\", \"b9\", \"b10\", \"b11\", "
     "\"b12\", \"b13\", \"b14\", \"b15\", \"b16\", \"b17\", \"b18\", \"b19\", \"b20\", \"b21\", \"c1\" us"
     "e restricted volume types \"awsElasticBlockStore\", \"azureDisk\", \"azureFile\", \"cephfs\", \"cin"
     "der\", \"fc\", \"flexVolume\", \"flocker\", \"gcePersistentDisk\", \"gitRepo\", \"glusterfs\", \"ho"
     "stPath\", \"iscsi\", \"nfs\", \"photonPersistentDisk\", \"portworxVolume\", \"quobyte\", \"rbd\", "
     "\"scaleIO\", \"storageos\", \"unknown\", \"vsphereVolume\""},
    /* runAsNonRoot */
    {"restricted:latest", "{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}", "runAsNonRoot != true",
     "pod or container \"a\" must set securityContext.runAsNonRoot=true"},
    {"restricted:latest",
     "{\"spec\":{\"securityContext\":{\"runAsNonRoot\":false},\"containers\":[{\"name\":\"a\",\"securityC"
     "ontext\":{\"runAsNonRoot\":true}}]}}",
     "runAsNonRoot != true", "pod must not set securityContext.runAsNonRoot=false"},
    {"restricted:latest",
     "{\"spec\":{\"securityContext\":{\"runAsNonRoot\":true},\"containers\":[{\"name\":\"a\"},{\"name\":"
     "\"b\",\"securityContext\":{\"runAsNonRoot\":true}},{\"name\":\"c\",\"securityContext\":{\"runAsNonR"
     "oot\":false}},{\"name\":\"d\",\"securityContext\":{\"runAsNonRoot\":false}}]}}",
     "runAsNonRoot != true", "containers \"c\", \"d\" must not set securityContext.runAsNonRoot=false"},
    {"restricted:latest",
     "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\",\"securityContext\":{}},{\"name\":\"c\""
     ",\"securityContext\":{\"runAsNonRoot\":true}}]}}",
     "runAsNonRoot != true", "pod or containers \"a\", \"b\" must set securityContext.runAsNonRoot=true"},
    {"restricted:latest", "{\"spec\":{\"hostUsers\":false,\"containers\":[{\"name\":\"a\"}]}}",
     "runAsNonRoot != true", NULL},
    /* runAsUser */
    {"restricted:latest",
     "{\"spec\":{\"securityContext\":{\"runAsUser\":0},\"containers\":[{\"name\":\"a\"}]}}", "runAsUser=0",
     "pod must not set runAsUser=0"},
    {"restricted:latest",
     "{\"spec\":{\"securityContext\":{\"runAsUser\":1},\"containers\":[{\"name\":\"a\"},{\"name\":\"b\","
     "\"securityContext\":{\"runAsUser\":1}},{\"name\":\"c\",\"securityContext\":{\"runAsUser\":0}},{\"na"
     "me\":\"d\",\"securityContext\":{\"runAsUser\":0}}]}}",
     "runAsUser=0", "containers \"c\", \"d\" must not set runAsUser=0"},
    {"restricted:latest", "{\"spec\":{\"hostUsers\":false,\"securityContext\":{\"runAsUser\":0}}}",
     "runAsUser=0", NULL},
    {"restricted:v1.34", "{\"spec\":{\"hostUsers\":false,\"securityContext\":{\"runAsUser\":0}}}",
     "runAsUser=0", "pod must not set runAsUser=0"},
    {"restricted:v1.22", "{\"spec\":{\"securityContext\":{\"runAsUser\":0}}}", "runAsUser=0", NULL},
    /* seLinuxOptions */
    {"baseline:latest",
     "{\"spec\":{\"securityContext\":{\"seLinuxOptions\":{\"type\":\"foo\",\"user\":\"bar\",\"role\":\"ba"
     "z\"}},\"containers\":[{\"name\":\"a\",\"securityContext\":{\"seLinuxOptions\":{\"type\":\"container"
     "_t\"}}},{\"name\":\"b\",\"securityContext\":{\"seLinuxOptions\":{\"type\":\"container_init_t\"}}},{"
     "\"name\":\"c\",\"securityContext\":{\"seLinuxOptions\":{\"type\":\"container_kvm_t\"}}},{\"name\":"
     "\"d\",\"securityContext\":{\"seLinuxOptions\":{\"type\":\"container_engine_t\"}}},{\"name\":\"e\","
     "\"securityContext\":{\"seLinuxOptions\":{\"type\":\"bar\"}}},{\"name\":\"f\",\"securityContext\":{"
     "\"seLinuxOptions\":{\"user\":\"bar\"}}},{\"name\":\"g\",\"securityContext\":{\"seLinuxOptions\":{\""
     "role\":\"baz\"}}}]}}",
     "seLinuxOptions",
     "pod and containers \"e\", \"f\", \"g\" set forbidden securityContext.seLinuxOptions: types \"bar\","
     " \"foo\"; user may not be set; role may not be set"},
    {"baseline:v1.30",
     "{\"spec\":{\"containers\":[{\"name\":\"d\",\"securityContext\":{\"seLinuxOptions\":{\"type\":\"cont"
     "ainer_engine_t\"}}}]}}",
     "seLinuxOptions",
     "container \"d\" set forbidden securityContext.seLinuxOptions: type \"container_engine_t\""},
    {"baseline:latest", "{\"spec\":{\"securityContext\":{\"seLinuxOptions\":{\"type\":\"bad\"}}}}",
     "seLinuxOptions", "pod set forbidden securityContext.seLinuxOptions: type \"bad\""},
    {"baseline:latest", "{\"spec\":{\"securityContext\":{\"seLinuxOptions\":{\"user\":\"bad\"}}}}",
     "seLinuxOptions", "pod set forbidden securityContext.seLinuxOptions: user may not be set"},
    {"baseline:latest", "{\"spec\":{\"securityContext\":{\"seLinuxOptions\":{\"role\":\"bad\"}}}}",
     "seLinuxOptions", "pod set forbidden securityContext.seLinuxOptions: role may not be set"},
    /* seccomp: annotations before v1.19, fields from v1.19 */
    {"baseline:v1.18",
     "{\"metadata\":{\"annotations\":{\"seccomp.security.alpha.kubernetes.io/pod\":\"unconfined\"}}}",
     "seccompProfile", "forbidden annotation seccomp.security.alpha.kubernetes.io/pod=\"unconfined\""},
    {"baseline:v1.18",
     "{\"metadata\":{\"annotations\":{\"seccomp.security.alpha.kubernetes.io/pod\":\"unconfined\",\"conta"
     "iner.seccomp.security.alpha.kubernetes.io/a\":\"unconfined\",\"container.seccomp.security.alpha.kub"
     "ernetes.io/b\":\"unknown\",\"container.seccomp.security.alpha.kubernetes.io/c\":\"runtime/default\""
     "}},\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]}}",
     "seccompProfile",
     "forbidden annotations container.seccomp.security.alpha.kubernetes.io/a=\"unconfined\", container.se"
     "ccomp.security.alpha.kubernetes.io/b=\"unknown\", seccomp.security.alpha.kubernetes.io/pod=\"unconf"
     "ined\""},
    {"baseline:v1.19",
     "{\"metadata\":{\"annotations\":{\"seccomp.security.alpha.kubernetes.io/pod\":\"unconfined\"}}}",
     "seccompProfile", NULL},
    {"baseline:latest",
     "{\"spec\":{\"securityContext\":{\"seccompProfile\":{\"type\":\"Unconfined\"}},\"containers\":[{\"na"
     "me\":\"a\",\"securityContext\":{\"seccompProfile\":{\"type\":\"RuntimeDefault\"}}},{\"name\":\"c\","
     "\"securityContext\":{\"seccompProfile\":{\"type\":\"Unconfined\"}}},{\"name\":\"d\",\"securityConte"
     "xt\":{\"seccompProfile\":{\"type\":\"Unconfined\"}}}]}}",
     "seccompProfile",
     "pod and containers \"c\", \"d\" must not set securityContext.seccompProfile.type to \"Unconfined\""},
    {"restricted:latest", "{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}", "seccompProfile",
     "pod or container \"a\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Loca"
     "lhost\""},
    {"restricted:latest", "{\"spec\":{\"os\":{\"name\":\"windows\"},\"containers\":[{\"name\":\"a\"}]}}",
     "seccompProfile", NULL},
    {"restricted:latest",
     "{\"spec\":{\"securityContext\":{\"seccompProfile\":{\"type\":\"Unconfined\"}},\"containers\":[{\"na"
     "me\":\"a\"}]}}",
     "seccompProfile", "pod must not set securityContext.seccompProfile.type to \"Unconfined\""},
    {"restricted:latest",
     "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\",\"securityContext\":{"
     "\"seccompProfile\":{\"type\":\"Localhost\"}}}]}}",
     "seccompProfile",
     "pod or containers \"a\", \"b\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" o"
     "r \"Localhost\""},
    /* sysctls */
    {"baseline:latest",
     "{\"spec\":{\"securityContext\":{\"sysctls\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"kernel.s"
     "hm_rmid_forced\"}]}}}",
     "forbidden sysctls", "a, b"},
    {"baseline:v1.26",
     "{\"spec\":{\"securityContext\":{\"sysctls\":[{\"name\":\"net.ipv4.ip_local_reserved_ports\"}]}}}",
     "forbidden sysctls", "net.ipv4.ip_local_reserved_ports"},
    {"baseline:v1.27",
     "{\"spec\":{\"securityContext\":{\"sysctls\":[{\"name\":\"net.ipv4.ip_local_reserved_ports\"}]}}}",
     "forbidden sysctls", NULL},
    {"baseline:v1.28",
     "{\"spec\":{\"securityContext\":{\"sysctls\":[{\"name\":\"net.ipv4.tcp_keepalive_time\"}]}}}",
     "forbidden sysctls", "net.ipv4.tcp_keepalive_time"},
    {"baseline:v1.31", "{\"spec\":{\"securityContext\":{\"sysctls\":[{\"name\":\"net.ipv4.tcp_wmem\"}]}}}",
     "forbidden sysctls", "net.ipv4.tcp_wmem"},
    {"baseline:v1.36",
     "{\"spec\":{\"securityContext\":{\"sysctls\":[{\"name\":\"net.ipv4.tcp_notsent_lowat\"}]}}}",
     "forbidden sysctls", "net.ipv4.tcp_notsent_lowat"},
    {"baseline:v1.99",
     "{\"spec\":{\"securityContext\":{\"sysctls\":[{\"name\":\"net.ipv4.tcp_notsent_lowat\"}]}}}",
     "forbidden sysctls", NULL},
    /* windowsHostProcess */
    {"baseline:latest",
     "{\"spec\":{\"securityContext\":{\"windowsOptions\":{\"hostProcess\":true}},\"containers\":[{\"name"
     "\":\"a\",\"securityContext\":{\"windowsOptions\":{\"hostProcess\":true}}},{\"name\":\"b\",\"securit"
     "yContext\":{\"windowsOptions\":{\"hostProcess\":false}}}]}}",
     "hostProcess", "pod and container \"a\" must not set securityContext.windowsOptions.hostProcess=true"},
    /* the pod's fields are read in one pass (psa_pod_t) exactly as yyjson_obj_get finds them: the
       first of duplicate keys, even when null, and null as absent */
    {"baseline:latest",
     "{\"spec\":{\"containers\":[{\"name\":\"a\",\"securityContext\":{\"privileged\":null,\"privileged\":"
     "true}}]}}",
     "privileged", NULL},
    {"baseline:latest",
     "{\"spec\":{\"containers\":[{\"name\":\"a\",\"securityContext\":{\"privileged\":true,\"privileged\":"
     "false}}]}}",
     "privileged", "container \"a\" must not set securityContext.privileged=true"},
    {"baseline:latest",
     "{\"spec\":{\"containers\":[{\"name\":\"a\",\"name\":\"b\",\"securityContext\":{\"privileged\":true},"
     "\"securityContext\":{}}]}}",
     "privileged", "container \"a\" must not set securityContext.privileged=true"},
    {"baseline:latest",
     "{\"spec\":{\"containers\":[{\"name\":\"a\",\"securityContext\":{\"privileged\":true}}],\"containers\":["
     "{"
     "\"name\":\"b\"}],\"initContainers\":null,\"initContainers\":[{\"name\":\"c\",\"securityContext\":{"
     "\"privil"
     "eged\":true}}]}}",
     "privileged", "container \"a\" must not set securityContext.privileged=true"},
    {"restricted:latest", "{\"spec\":{\"containers\":[{\"name\":\"a\",\"securityContext\":\"x\"}]}}",
     "allowPrivilegeEscalation != false",
     "container \"a\" must set securityContext.allowPrivilegeEscalation=false"},
    {"restricted:latest", "{\"spec\":{\"volumes\":[{\"name\":\"v\",\"configMap\":null,\"hostPath\":{}}]}}",
     "restricted volume types", "volume \"v\" uses restricted volume type \"hostPath\""},
    {"baseline:latest", "{\"spec\":{\"volumes\":[{\"name\":\"v\",\"configMap\":{},\"hostPath\":{}}]}}",
     "hostPath volumes", "volume \"v\""},
    {"restricted:latest", "{\"spec\":{\"volumes\":[{\"name\":\"v\",\"configMap\":{},\"hostPath\":{}}]}}",
     "restricted volume types", NULL},
    {"baseline:latest", "{\"spec\":{\"volumes\":[{\"name\":\"v\",\"hostPath\":null,\"hostPath\":{}}]}}",
     "hostPath volumes", NULL},
};

static void parse_lv(const char *s, adm_psa_lv_t *lv)
{
    char level[32];
    const char *colon = strchr(s, ':');

    snprintf(level, sizeof(level), "%.*s", (int)(colon - s), s);
    assert_true(adm_psa_parse_level(level, &lv->level));
    assert_true(adm_psa_parse_version(colon + 1, &lv->version));
}

static void test_check_texts(void **state)
{
    adm_arena_t *a = adm_arena_create(65536);

    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        const check_case_t *c = &cases[i];
        yyjson_read_err err;
        yyjson_doc *doc = adm_json_read(a, c->pod, strlen(c->pod), &err);
        yyjson_val *pod = yyjson_doc_get_root(doc);
        adm_psa_lv_t lv;
        adm_psa_result_t r;
        const char *got = NULL;

        if (doc == NULL) {
            fail_msg("case %zu: bad JSON at %zu: %s", i, err.pos, err.msg);
        }
        parse_lv(c->lv, &lv);
        adm_psa_evaluate(a, &lv, yyjson_obj_get(pod, "metadata"), yyjson_obj_get(pod, "spec"), &r);
        assert_false(r.nomem);
        for (size_t k = 0; k < r.nfailed; k++) {
            if (strcmp(r.reasons[k], c->reason) == 0) {
                got = r.details[k];
            }
        }
        if (c->detail == NULL ? got != NULL : got == NULL || strcmp(got, c->detail) != 0) {
            fail_msg("case %zu (%s, %s):\n want %s\n got  %s", i, c->lv, c->reason,
                     c->detail != NULL ? c->detail : "(allowed)", got != NULL ? got : "(allowed)");
        }
    }
    adm_arena_destroy(a);
}

/* The aggregate: failing checks in kube's order (baseline IDs, then restricted IDs), each
   "reason (detail)", and ForbiddenReason for namespace warnings. */
static void test_aggregate(void **state)
{
    static const char pod[] = "{\"spec\":{\"hostNetwork\":true,\"containers\":[{\"name\":\"c\"}]}}";
    adm_arena_t *a = adm_arena_create(16384);
    yyjson_read_err err;
    yyjson_val *p = yyjson_doc_get_root(adm_json_read(a, pod, strlen(pod), &err));
    adm_psa_lv_t lv = {ADM_PSA_RESTRICTED, {true, 0}};
    adm_psa_result_t r;

    adm_psa_evaluate(a, &lv, NULL, yyjson_obj_get(p, "spec"), &r);
    assert_string_equal(
        adm_psa_result_detail(a, &r),
        "host namespaces (hostNetwork=true), allowPrivilegeEscalation != false (container \"c\" must set "
        "securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \"c\" must "
        "set "
        "securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod or container \"c\" must set "
        "securityContext.runAsNonRoot=true), seccompProfile (pod or container \"c\" must set "
        "securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")");
    assert_string_equal(adm_psa_result_reason(a, &r),
                        "host namespaces, allowPrivilegeEscalation != false, "
                        "unrestricted capabilities, runAsNonRoot != true, seccompProfile");

    /* privileged allows anything; baseline does not run restricted checks */
    lv.level = ADM_PSA_PRIVILEGED;
    adm_psa_evaluate(a, &lv, NULL, yyjson_obj_get(p, "spec"), &r);
    assert_int_equal(r.nfailed, 0);
    lv.level = ADM_PSA_BASELINE;
    adm_psa_evaluate(a, &lv, NULL, yyjson_obj_get(p, "spec"), &r);
    assert_string_equal(adm_psa_result_detail(a, &r), "host namespaces (hostNetwork=true)");

    /* restricted v1.0-v1.18: the baseline seccomp annotation check still runs (not yet overridden) */
    {
        static const char ann[] =
            "{\"metadata\":{\"annotations\":{\"seccomp.security.alpha.kubernetes.io/pod\":"
            "\"unconfined\"}},\"spec\":{\"securityContext\":{\"runAsNonRoot\":true}}}";
        yyjson_val *q = yyjson_doc_get_root(adm_json_read(a, ann, strlen(ann), &err));

        lv.level = ADM_PSA_RESTRICTED;
        lv.version.latest = false;
        lv.version.minor = 5;
        adm_psa_evaluate(a, &lv, yyjson_obj_get(q, "metadata"), yyjson_obj_get(q, "spec"), &r);
        assert_string_equal(adm_psa_result_detail(a, &r),
                            "seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="
                            "\"unconfined\")");
    }
    adm_arena_destroy(a);
}

/* Two results alike: the same failing checks with the same texts, in the same order. */
static void assert_same_result(size_t i, const char *lv, const adm_psa_result_t *x, const adm_psa_result_t *y)
{
    bool same = x->nfailed == y->nfailed && x->nomem == y->nomem;

    for (size_t k = 0; same && k < x->nfailed; k++) {
        same = strcmp(x->reasons[k], y->reasons[k]) == 0 && strcmp(x->details[k], y->details[k]) == 0;
    }
    if (!same) {
        fail_msg("case %zu at %s: the evaluation with the other levels' verdicts differs", i, lv);
    }
}

/*
 * One pod evaluated at several levels and versions with one memo (as the plugin evaluates enforce,
 * audit and warn) gives at each what a fresh evaluation gives, whatever the order: every pod of
 * the check table, at every level and at versions where checks change implementation.
 */
static void test_memo_across_levels(void **state)
{
    static const char *const lvs[] = {"baseline:latest",  "restricted:latest", "baseline:v1.0",
                                      "restricted:v1.5",  "restricted:v1.24",  "baseline:v1.30",
                                      "restricted:v1.34", "baseline:v1.36"};
    adm_arena_t *a = adm_arena_create(65536);

    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        yyjson_read_err err;
        yyjson_val *pod = yyjson_doc_get_root(adm_json_read(a, cases[i].pod, strlen(cases[i].pod), &err));
        yyjson_val *meta = yyjson_obj_get(pod, "metadata"), *spec = yyjson_obj_get(pod, "spec");
        adm_psa_memo_t forward, backward;

        memset(&forward, 0, sizeof(forward));
        memset(&backward, 0, sizeof(backward));
        for (size_t k = 0; k < sizeof(lvs) / sizeof(*lvs); k++) {
            const char *names[2] = {lvs[k], lvs[sizeof(lvs) / sizeof(*lvs) - 1 - k]};
            adm_psa_memo_t *memos[2] = {&forward, &backward};

            for (int d = 0; d < 2; d++) {
                adm_psa_lv_t lv;
                adm_psa_result_t fresh, kept;

                parse_lv(names[d], &lv);
                adm_psa_evaluate(a, &lv, meta, spec, &fresh);
                adm_psa_evaluate_memo(a, &lv, meta, spec, memos[d], &kept);
                assert_same_result(i, names[d], &fresh, &kept);
            }
        }
    }
    adm_arena_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_texts),
        cmocka_unit_test(test_aggregate),
        cmocka_unit_test(test_memo_across_levels),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
