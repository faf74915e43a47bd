/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Watch streams and list pages as kube-apiserver sends them: events framed whatever the read
 * boundaries (one byte at a time, several per read, braces and quotes inside strings), each event
 * type decoded, ERROR Status events recognised as "expired" (410, Expired, Gone), bad events
 * refused with client-go's words, list pages with continue tokens and null items, Status bodies
 * with retryAfterSeconds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/cluster/watch_decode.h"

static const char stream[] =
    "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Namespace\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":"
    "\"a\","
    "\"resourceVersion\":\"10\",\"labels\":{\"x\":\"}{\\\"\"}}}}\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"b\",\"namespace\":\"ns\","
    "\"resourceVersion\":\"11\"},"
    "\"spec\":{\"l\":[1,[2],{\"q\":\"]\"}]}}}\n"
    "  {\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Namespace\",\"metadata\":{\"resourceVersion\":\"12\"}}}"
    "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"13\"}}}\r\n"
    "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
    "\"message\":\"too old resource version: 1 (13)\",\"reason\":\"Expired\",\"code\":410}}\n";

static size_t frame_all(size_t step, adm_watch_event_t *evs, size_t max, adm_arena_t *a)
{
    adm_watch_framer_t f;
    size_t off = 0, n = 0, len = strlen(stream);
    char err[256];

    adm_watch_framer_init(&f);
    while (off < len) {
        size_t chunk = len - off < step ? len - off : step, pos = 0;

        while (pos < chunk) {
            const char *ev = NULL;
            size_t ev_len = 0, used = 0;
            adm_frame_result_t r =
                adm_watch_framer_feed(&f, stream + off + pos, chunk - pos, &used, &ev, &ev_len);

            assert_int_not_equal(r, ADM_FRAME_ERROR);
            pos += used;
            if (r == ADM_FRAME_EVENT) {
                assert_true(n < max);
                if (adm_watch_event_decode(a, ev, ev_len, &evs[n], err, sizeof(err)) != 0) {
                    fail_msg("event %zu: %s", n, err);
                }
                n++;
            }
        }
        off += chunk;
    }
    adm_watch_framer_free(&f);
    return n;
}

static void test_stream_any_split(void **state)
{
    adm_arena_t *a = adm_arena_create(4096);
    size_t steps[] = {1, 2, 3, 7, 64, 100000};

    (void)state;
    for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
        adm_watch_event_t evs[8];
        size_t n = frame_all(steps[s], evs, 8, a);

        assert_int_equal(n, 5);
        assert_int_equal(evs[0].type, ADM_WATCH_ADDED);
        assert_string_equal(evs[0].name, "a");
        assert_string_equal(evs[0].namespace_, "");
        assert_string_equal(evs[0].resource_version, "10");
        assert_int_equal(evs[1].type, ADM_WATCH_MODIFIED);
        assert_string_equal(evs[1].namespace_, "ns");
        assert_int_equal(evs[2].type, ADM_WATCH_BOOKMARK);
        assert_null(evs[2].name);
        assert_string_equal(evs[2].resource_version, "12");
        assert_int_equal(evs[3].type, ADM_WATCH_DELETED);
        assert_int_equal(evs[4].type, ADM_WATCH_ERROR);
        assert_int_equal(evs[4].code, 410);
        assert_string_equal(evs[4].reason, "Expired");
        assert_string_equal(evs[4].message, "too old resource version: 1 (13)");
        assert_true(adm_watch_event_expired(&evs[4]));
        assert_false(adm_watch_event_expired(&evs[0]));
        adm_arena_reset(a);
    }
    adm_arena_destroy(a);
}

static void test_expired_variants(void **state)
{
    adm_arena_t *a = adm_arena_create(4096);
    adm_watch_event_t ev;
    char err[256];
    static const char gone[] = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"reason\":\"Gone\"}}";
    static const char other[] = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":500,"
                                "\"reason\":\"InternalError\"}}";

    (void)state;
    assert_int_equal(adm_watch_event_decode(a, gone, strlen(gone), &ev, err, sizeof(err)), 0);
    assert_true(adm_watch_event_expired(&ev));
    assert_int_equal(adm_watch_event_decode(a, other, strlen(other), &ev, err, sizeof(err)), 0);
    assert_false(adm_watch_event_expired(&ev));
    assert_int_equal(ev.code, 500);
    adm_arena_destroy(a);
}

static void test_bad_events(void **state)
{
    static const struct {
        const char *text;
        const char *expect;
    } cases[] = {
        {"{\"type\":\"SYNC\",\"object\":{}}", "got invalid watch event type: SYNC"},
        {"{\"object\":{}}", "got invalid watch event type: (none)"},
        {"{\"type\":\"ADDED\",\"object\":[]}", "watch event ADDED: object is not a JSON object"},
        {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}",
         "watch event ADDED: object has no metadata.resourceVersion"},
        {"{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"resourceVersion\":\"1\"}}}",
         "watch event MODIFIED: object has no metadata.name"},
        {"{\"type\":\"ADDED\",", "watch event: unexpected end of JSON input"},
        {"[1]", "watch event: not a JSON object"},
    };
    adm_arena_t *a = adm_arena_create(4096);

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        adm_watch_event_t ev;
        char err[256] = "";

        assert_int_equal(
            adm_watch_event_decode(a, cases[i].text, strlen(cases[i].text), &ev, err, sizeof(err)),
            ADM_EPARSE);
        assert_string_equal(err, cases[i].expect);
    }
    adm_arena_destroy(a);
}

static void test_framer_errors(void **state)
{
    adm_watch_framer_t f;
    const char *ev;
    size_t ev_len, used;
    char big[300];

    (void)state;
    adm_watch_framer_init(&f);
    assert_int_equal(adm_watch_framer_feed(&f, "  x{}", 5, &used, &ev, &ev_len), ADM_FRAME_ERROR);
    adm_watch_framer_free(&f);
    adm_watch_framer_init(&f);
    f.max = 256;
    memset(big, 'a', sizeof(big));
    big[0] = '{';
    big[1] = '"';
    assert_int_equal(adm_watch_framer_feed(&f, big, 200, &used, &ev, &ev_len), ADM_FRAME_NEED_MORE);
    assert_int_equal(adm_watch_framer_feed(&f, big + 200, 100, &used, &ev, &ev_len), ADM_FRAME_ERROR);
    adm_watch_framer_free(&f);
}

static void test_list_page(void **state)
{
    static const char page1[] =
        "{\"kind\":\"NamespaceList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"42\","
        "\"continue\":\"tok\",\"remainingItemCount\":3},\"items\":[{\"metadata\":{\"name\":\"a\"}}]}";
    static const char last[] =
        "{\"kind\":\"NamespaceList\",\"metadata\":{\"resourceVersion\":\"43\"},\"items\":null}";
    static const char noname[] = "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[{\"metadata\":{}}]}";
    static const char norv[] = "{\"metadata\":{},\"items\":[]}";
    adm_arena_t *a = adm_arena_create(4096);
    adm_list_page_t p;
    char err[256];

    (void)state;
    assert_int_equal(adm_list_page_decode(a, page1, strlen(page1), &p, err, sizeof(err)), 0);
    assert_string_equal(p.resource_version, "42");
    assert_string_equal(p.continue_token, "tok");
    assert_int_equal(p.remaining_items, 3);
    assert_int_equal(yyjson_arr_size(p.items), 1);
    assert_int_equal(adm_list_page_decode(a, last, strlen(last), &p, err, sizeof(err)), 0);
    assert_string_equal(p.continue_token, "");
    assert_int_equal(p.remaining_items, -1);
    assert_null(p.items);
    assert_int_equal(adm_list_page_decode(a, noname, strlen(noname), &p, err, sizeof(err)), ADM_EPARSE);
    assert_string_equal(err, "list: items[0] has no metadata.name");
    assert_int_equal(adm_list_page_decode(a, norv, strlen(norv), &p, err, sizeof(err)), ADM_EPARSE);
    assert_string_equal(err, "list: no metadata.resourceVersion");
    adm_arena_destroy(a);
}

static void test_status(void **state)
{
    static const char st[] =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"slow "
        "down\",\"reason\":\"TooManyRequests\",\"details\":{\"retryAfterSeconds\":3},\"code\":429}";
    adm_arena_t *a = adm_arena_create(4096);
    const char *reason, *message;
    uint64_t ra;

    (void)state;
    assert_int_equal(adm_status_decode(a, st, strlen(st), &reason, &message, &ra), 0);
    assert_string_equal(reason, "TooManyRequests");
    assert_string_equal(message, "slow down");
    assert_int_equal(ra, 3);
    assert_int_equal(adm_status_decode(a, "{}", 2, &reason, &message, &ra), ADM_EPARSE);
    assert_int_equal(adm_status_decode(a, "<html>", 6, &reason, &message, &ra), ADM_EPARSE);
    adm_arena_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_any_split), cmocka_unit_test(test_expired_variants),
        cmocka_unit_test(test_bad_events),       cmocka_unit_test(test_framer_errors),
        cmocka_unit_test(test_list_page),        cmocka_unit_test(test_status),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
