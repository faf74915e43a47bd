/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Priority: a new pod gets spec.priority (and spec.preemptionPolicy) from its PriorityClass, or
 * from the global default class (the lowest-valued one marked globalDefault when several are)
 * with its name, or priority 0 and PreemptLowerPriority when there is none; a pod that states a
 * different priority or policy is refused. An update that dropped those fields gets them back
 * from the old pod. A PriorityClass may not be made globalDefault while another one is.
 *
 * kube-apiserver creates system-node-critical and system-cluster-critical itself and keeps them
 * (it recreates them when deleted), so a cluster always has them: admitd knows them too when the
 * --cluster-state files do not hold them. The gated Workload defaulting (WorkloadAwarePreemption,
 * alpha) is not done.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/plugins/lookup.h"

#include <inttypes.h>
#include <string.h>

#define GROUP "scheduling.k8s.io"

typedef struct class_s {
    const char *name;
    int32_t value;
    const char *policy; /* NULL: the class has none */
} class_t;

static const class_t system_classes[] = {
    {"system-node-critical", 2000001000, "PreemptLowerPriority"},
    {"system-cluster-critical", 2000000000, "PreemptLowerPriority"},
};

static class_t class_read(yyjson_val *pc)
{
    yyjson_val *v = adm_json_get(pc, "value");
    yyjson_val *p = adm_json_get(pc, "preemptionPolicy");
    class_t c = {adm_json_str(adm_json_get(pc, "metadata"), "name"), 0, NULL};

    /* value is an int32 the API server validated; anything else reads as Go's zero value */
    if (yyjson_is_int(v) && yyjson_get_sint(v) >= INT32_MIN && yyjson_get_sint(v) <= INT32_MAX) {
        c.value = (int32_t)yyjson_get_sint(v);
    }
    c.policy = yyjson_is_str(p) ? yyjson_get_str(p) : NULL;
    return c;
}

/* The class named name: from the cluster state, else a built-in system class. */
static bool class_find(adm_attrs_t *attrs, const char *name, class_t *out)
{
    yyjson_val *pc = adm_lookup(attrs, GROUP, "PriorityClass", "", name);

    if (pc != NULL) {
        *out = class_read(pc);
        return true;
    }
    for (size_t i = 0; i < sizeof(system_classes) / sizeof(system_classes[0]); i++) {
        if (strcmp(name, system_classes[i].name) == 0) {
            *out = system_classes[i];
            return true;
        }
    }
    return false;
}

/* getDefaultPriorityClass: the lowest-valued globalDefault class, first listed on a tie. */
static bool default_class(adm_attrs_t *attrs, class_t *out)
{
    size_t n = 0;
    yyjson_val *const *all = adm_lookup_list(attrs, GROUP, "PriorityClass", &n);
    bool found = false;

    for (size_t i = 0; i < n; i++) {
        class_t c;

        if (!yyjson_is_true(adm_json_get(all[i], "globalDefault"))) {
            continue;
        }
        c = class_read(all[i]);
        if (!found || out->value > c.value) {
            *out = c;
            found = true;
        }
    }
    return found;
}

/* On update, what a client dropped comes back from the old pod. */
static int admit_update(adm_attrs_t *attrs, adm_status_t *st, yyjson_val *spec)
{
    yyjson_val *old_spec = adm_json_get(attrs->req->old_object, "spec");
    static const char *const keys[] = {"priority", "preemptionPolicy"};

    if (attrs->req->old_object == NULL || !yyjson_is_obj(attrs->req->old_object)) {
        return adm_status_bad_request(st, attrs->arena,
                                      "resource was marked with kind Pod but was unable to be converted");
    }
    for (size_t i = 0; i < 2; i++) {
        yyjson_val *old = adm_json_get(old_spec, keys[i]);
        yyjson_val *now = adm_json_get(spec, keys[i]);
        yyjson_mut_doc *doc;

        if ((now != NULL && !yyjson_is_null(now)) || old == NULL || yyjson_is_null(old)) {
            continue;
        }
        spec = adm_attrs_ensure(attrs, YYJSON_TYPE_OBJ, "spec", NULL);
        doc = adm_attrs_values_doc(attrs);
        if (spec == NULL || doc == NULL ||
            adm_attrs_edit_key(attrs, ADM_EDIT_ADD, spec, keys[i], yyjson_val_mut_copy(doc, old)) != ADM_OK) {
            return adm_status_nomem(st);
        }
        spec = adm_json_get(adm_attrs_object(attrs), "spec");
    }
    return ADM_OK;
}

/* The pod's three fields are read one by one: an earlier plugin's change would otherwise cost a
   view of the whole pod (adm_attrs_get). */
static int admit_create(adm_attrs_t *attrs, adm_status_t *st)
{
    const char *named = yyjson_get_str(adm_attrs_get(attrs, "spec", "priorityClassName", NULL));
    yyjson_val *given = adm_attrs_get(attrs, "spec", "priority", NULL);
    yyjson_val *given_policy = adm_attrs_get(attrs, "spec", "preemptionPolicy", NULL);
    const char *name = named != NULL ? named : "";
    class_t c = {"", 0, "PreemptLowerPriority"};
    yyjson_val *spec;
    yyjson_mut_doc *doc;
    bool set_name = false;
    int rc;

    if (name[0] == '\0') {
        if (default_class(attrs, &c)) {
            set_name = true;
        } else {
            c.name = "";
            c.value = 0;
            c.policy = "PreemptLowerPriority";
        }
    } else if (!class_find(attrs, name, &c)) {
        return adm_status_forbidden(st, attrs, "no PriorityClass with name %s was found", name);
    }
    if (yyjson_is_int(given) && yyjson_get_sint(given) != c.value) {
        return adm_status_forbidden(
            st, attrs,
            "the integer value of priority (%" PRId64 ") must not be provided in pod spec; "
            "priority admission controller computed %" PRId32 " from the given PriorityClass name",
            yyjson_get_sint(given), c.value);
    }
    if (c.policy != NULL && yyjson_is_str(given_policy) &&
        strcmp(yyjson_get_str(given_policy), c.policy) != 0) {
        return adm_status_forbidden(
            st, attrs,
            "the string value of PreemptionPolicy (%s) must not be provided in pod spec; "
            "priority admission controller computed %s from the given PriorityClass name",
            yyjson_get_str(given_policy), c.policy);
    }
    /* the pod already says what the class gives: no copy of the object, which later readers would pay for */
    if (!set_name && yyjson_is_int(given) && (c.policy == NULL || yyjson_is_str(given_policy))) {
        return ADM_OK;
    }
    spec = adm_attrs_ensure(attrs, YYJSON_TYPE_OBJ, "spec", NULL);
    doc = adm_attrs_values_doc(attrs);
    if (spec == NULL || doc == NULL) {
        return adm_status_nomem(st);
    }
    /* each removed and appended again, where the mutable form put it */
    rc = set_name ? adm_attrs_edit_key(attrs, ADM_EDIT_ADD, spec, "priorityClassName",
                                       yyjson_mut_strcpy(doc, c.name))
                  : ADM_OK;
    if (rc == ADM_OK) {
        rc = adm_attrs_edit_key(attrs, ADM_EDIT_ADD, spec, "priority", yyjson_mut_int(doc, c.value));
    }
    if (rc == ADM_OK && c.policy != NULL) {
        rc = adm_attrs_edit_key(attrs, ADM_EDIT_ADD, spec, "preemptionPolicy",
                                yyjson_mut_strcpy(doc, c.policy));
    }
    return rc == ADM_OK ? ADM_OK : adm_status_nomem(st);
}

static int admit(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    const adm_review_request_t *req = attrs->req;
    yyjson_val *pod;

    (void)state;
    if (req->sub_resource[0] != '\0' || !adm_attrs_is(attrs, "", "pods") ||
        (req->operation != ADM_OP_CREATE && req->operation != ADM_OP_UPDATE)) {
        return ADM_OK;
    }
    if (req->operation == ADM_OP_CREATE) {
        if (!adm_attrs_has_object(attrs) || !adm_attrs_kind_is(attrs, "", "Pod")) {
            return adm_status_bad_request(st, attrs->arena,
                                          "resource was marked with kind Pod but was unable to be converted");
        }
        return admit_create(attrs, st);
    }
    pod = adm_attrs_object(attrs);
    if (pod == NULL || !adm_attrs_kind_is(attrs, "", "Pod")) {
        return adm_status_bad_request(st, attrs->arena,
                                      "resource was marked with kind Pod but was unable to be converted");
    }
    return admit_update(attrs, st, adm_json_get(pod, "spec"));
}

static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    const adm_review_request_t *req = attrs->req;
    yyjson_val *pc;
    class_t def;

    (void)state;
    if (req->sub_resource[0] != '\0' || !adm_attrs_is(attrs, GROUP, "priorityclasses") ||
        (req->operation != ADM_OP_CREATE && req->operation != ADM_OP_UPDATE)) {
        return ADM_OK;
    }
    pc = adm_attrs_object(attrs);
    if (pc == NULL || !adm_attrs_kind_is(attrs, GROUP, "PriorityClass")) {
        return adm_status_bad_request(
            st, attrs->arena, "resource was marked with kind PriorityClass but was unable to be converted");
    }
    if (!yyjson_is_true(adm_json_get(pc, "globalDefault")) || !default_class(attrs, &def)) {
        return ADM_OK;
    }
    if (req->operation == ADM_OP_CREATE ||
        strcmp(def.name, adm_json_str(adm_json_get(pc, "metadata"), "name")) != 0) {
        return adm_status_forbidden(
            st, attrs, "PriorityClass %s is already marked as default. Only one default can exist", def.name);
    }
    return ADM_OK;
}

static const char *const reads[] = {"scheduling.k8s.io/PriorityClass", NULL};

const adm_plugin_t adm_plugin_priority = {
    .name = "Priority",
    .operations = ADM_OPS_CREATE | ADM_OPS_UPDATE | ADM_OPS_DELETE,
    .reads = reads,
    .admit = admit,
    .validate = validate,
};
