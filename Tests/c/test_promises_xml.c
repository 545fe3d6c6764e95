/* XML trees and XML events: NULL rows of the sections and their documented codes.
 * (The audit of the headers' promises, issue 14: see promises.h.) */
#include "promises.h"
#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------------------------------ */
/* XML events                                                                                  */
/* ------------------------------------------------------------------------------------------ */

static int count_start(void *u, const char *name, const char *ns, const char *prefix,
                       const char *const *attributes, size_t count, size_t depth) {
    (void)name; (void)ns; (void)prefix; (void)attributes; (void)count; (void)depth;
    ((int *)u)[0]++;
    return 0;
}
static int count_end(void *u, const char *name, const char *ns, size_t depth) {
    (void)name; (void)ns; (void)depth;
    ((int *)u)[1]++;
    return 0;
}

static void test_xml_events_keep_their_promises(void) {
    hc_xml_callbacks cbs = {HC_XML_CALLBACKS_VERSION, count_start, NULL, count_end, NULL};
    static const uint8_t doc[] = "<a><b/><c/></a>";
    /* NULL handles and required pointers; opts, userdata and every callback may be NULL. */
    NULL_PTR(hc_handler_xml_events_new(NULL, NULL, NULL));
    NULL_CODE(hc_xml_events_parse(NULL, 3, NULL, &cbs, NULL));
    NULL_CODE(hc_xml_events_parse(doc, sizeof doc - 1, NULL, NULL, NULL));
    hc_xml_callbacks none = {HC_XML_CALLBACKS_VERSION, NULL, NULL, NULL, NULL};
    OPTIONAL_OK(hc_xml_events_parse(doc, sizeof doc - 1, NULL, &none, NULL));
    /* Another version: HC_EINVALID_ARG, and NULL from the constructor. */
    hc_xml_callbacks later = cbs;
    later.version = HC_XML_CALLBACKS_VERSION + 1;
    CHECK_CODE(hc_xml_events_parse(doc, sizeof doc - 1, NULL, &later, NULL), HC_EINVALID_ARG);
    CHECK(hc_handler_xml_events_new(NULL, &later, NULL) == NULL);
    CHECK(hc_error_code(hc_error_last()) == HC_EINVALID_ARG);

    /* "callbacks (copied)", "opts ... (copied)": both changed or freed before the send. */
    int counts[2] = {0, 0};
    hc_xml_options *o = hc_xml_options_new();
    CHECK_CODE(hc_xml_options_set(o, HC_XML_MAX_DEPTH, 1), HC_OK);
    hc_xml_callbacks mine = cbs;
    hc_handler *h = hc_handler_xml_events_new(o, &mine, counts);
    CHECK(h != NULL);
    hc_xml_options_free(o);
    memset(&mine, 0, sizeof mine);
    hc_response *resp = NULL;
    CHECK_CODE(hc_test_send(client, "GET", "/xml/doc?doc=%3Ca%3E%3Cb%2F%3E%3C%2Fa%3E", h, &resp), HC_EDECODE);
    CHECK(counts[0] == 1 && counts[1] == 0);                 /* the root, then the depth limit */
    counts[0] = counts[1] = 0;
    hc_handler *plain = hc_handler_xml_events_new(NULL, &cbs, counts);
    CHECK_CODE(hc_test_send(client, "GET", "/xml/doc?doc=%3Ca%3E%3Cb%2F%3E%3C%2Fa%3E", plain, &resp), HC_OK);
    CHECK(counts[0] == 2 && counts[1] == 2);
    /* "The response has no content": the other sections' getters say so. */
    CHECK(hc_response_xml(resp) == NULL && hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    hc_response_free(resp);
    hc_handler_free(plain);
    hc_handler_free(h);
}


/* ------------------------------------------------------------------------------------------ */
/* XML (audited at the end of issue 16's work)                                                 */
/* ------------------------------------------------------------------------------------------ */

static int count_elements(void *userdata, size_t path_index, const hc_xml *element) {
    (void)path_index; (void)element;
    (*(int *)userdata)++;
    return 0;
}

static void test_xml_trees_keep_their_promises(void) {
    static const uint8_t doc[] = "<a x=\"1\"><b>t</b><b/></a>";
    hc_xml_options *o = hc_xml_options_new();
    cover("hc_xml_options_new(");
    CHECK(o != NULL);
    hc_xml *root = NULL;
    CHECK_CODE(hc_xml_parse(doc, sizeof doc - 1, NULL, &root), HC_OK);   /* opts may be NULL */
    const hc_xml *child = hc_xml_child_at(root, 0);
    CHECK(child != NULL);
    const char *paths[] = {"a/b"};
    int64_t v = 0;
    const char *s = NULL;
    uint8_t *out = NULL;
    size_t n = 0;
    hc_xml *made = NULL;
    int seen = 0;

    FREE_NULL(hc_xml_options_free(NULL));
    NULL_CODE(hc_xml_options_set(NULL, HC_XML_MAX_DEPTH, 4));
    NULL_CODE(hc_xml_options_get(NULL, HC_XML_MAX_DEPTH, &v));
    NULL_CODE(hc_xml_options_get(o, HC_XML_MAX_DEPTH, NULL));
    hc_handler *h = hc_handler_xml_new(NULL);                            /* opts may be NULL */
    cover("hc_handler_xml_new(");
    CHECK(h != NULL);
    hc_handler_free(h);
    NULL_PTR(hc_handler_xml_elements_new(NULL, 1, NULL, count_elements, &seen));
    NULL_PTR(hc_handler_xml_elements_new(paths, 1, NULL, NULL, &seen));
    NULL_PTR(hc_response_xml(NULL));
    NULL_CODE(hc_response_xml_elements(NULL, &n, NULL));
    NULL_CODE(hc_xml_parse(NULL, 3, NULL, &made));
    NULL_CODE(hc_xml_parse(doc, sizeof doc - 1, NULL, NULL));
    FREE_NULL(hc_xml_free(NULL));
    FREE_NULL(hc_xml_free((hc_xml *)child));                              /* borrowed: nothing */
    NULL_VALUE(hc_xml_kind(NULL), HC_XML_INVALID);
    NULL_PTR(hc_xml_name(NULL));
    NULL_PTR(hc_xml_namespace(NULL));
    NULL_PTR(hc_xml_prefix(NULL));
    NULL_VALUE(hc_xml_attribute_count(NULL), 0);
    NULL_CODE(hc_xml_attribute_at(NULL, 0, &s, NULL, NULL));
    OPTIONAL_OK(hc_xml_attribute_at(root, 0, NULL, NULL, NULL));         /* each out optional */
    NULL_PTR(hc_xml_attribute(NULL, "x", NULL));
    NULL_PTR(hc_xml_attribute(root, NULL, NULL));
    CHECK(hc_xml_attribute(root, "x", NULL) != NULL);                    /* namespace NULL: none */
    NULL_VALUE(hc_xml_child_count(NULL), 0);
    NULL_PTR(hc_xml_child_at(NULL, 0));
    NULL_PTR(hc_xml_first(NULL, "b"));
    NULL_PTR(hc_xml_first(root, NULL));
    NULL_CODE(hc_xml_text(NULL, &s, &n));
    OPTIONAL_OK(hc_xml_text(child, NULL, NULL));                         /* each out optional */
    NULL_CODE(hc_xml_serialize(NULL, 0, &out, &n));
    NULL_CODE(hc_xml_serialize(root, 0, NULL, &n));

    /* "opts copied" and the elements handler's optional outs, on a real send. */
    CHECK_CODE(hc_xml_options_set(o, HC_XML_ELEMENTS_LIMIT, 1), HC_OK);
    hc_handler *el = hc_handler_xml_elements_new(paths, 1, o, count_elements, &seen);
    hc_xml_options_free(o);
    CHECK(el != NULL);
    hc_response *resp = NULL;
    CHECK_CODE(hc_test_send(client, "GET", "/xml/doc?doc=%3Ca%3E%3Cb%2F%3E%3Cb%2F%3E%3C%2Fa%3E", el, &resp), HC_OK);
    CHECK(seen == 1);                                                    /* the limit, copied */
    OPTIONAL_OK(hc_response_xml_elements(resp, NULL, NULL));
    int early = 0;
    CHECK_CODE(hc_response_xml_elements(resp, &n, &early), HC_OK);
    CHECK(n == 1 && early == 1);
    hc_response_free(resp);
    hc_handler_free(el);
    hc_xml_free(root);
}

PROMISES_MAIN(test_xml_events_keep_their_promises,
              test_xml_trees_keep_their_promises)
