/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the route of a webhook Service (cluster/service_route.c), which reads the
 * Service and EndpointSlice objects an API server sends: the input is JSON
 * {"service": {...}, "slices": [{...}, ...]} (anything else is read as a Service alone), the port
 * from the first byte. Never a crash, a leak or undefined behaviour, and the route it gives is
 * consistent (a count within the cap, texts terminated).
 */
#include "adm/cluster/service_route.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    yyjson_val *slices[64], *root, *service, *list, *v;
    adm_service_route_t r;
    yyjson_doc *doc;
    size_t n = 0, i, max;
    uint16_t port;
    char words[2048];

    if (size < 1) {
        return 0;
    }
    port = (uint16_t)(data[0] == 0 ? 443 : data[0]);
    doc = yyjson_read((const char *)data + 1, size - 1, 0);
    root = yyjson_doc_get_root(doc);
    service = yyjson_obj_get(root, "service");
    list = yyjson_obj_get(root, "slices");
    if (service == NULL && list == NULL) {
        service = root;
    }
    yyjson_arr_foreach(list, i, max, v)
    {
        if (n < sizeof(slices) / sizeof(slices[0])) {
            slices[n++] = v;
        }
    }
    adm_service_route("hook", port, service, slices, n, &r);
    if (r.n > ADM_ROUTE_ADDRS_MAX || memchr(r.reason, '\0', sizeof(r.reason)) == NULL) {
        abort();
    }
    adm_service_route_describe(&r, words, sizeof(words));
    yyjson_doc_free(doc);
    return 0;
}
