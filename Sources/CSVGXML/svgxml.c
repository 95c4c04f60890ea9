// SPDX-License-Identifier: GPL-3.0-or-later
#include "svgxml.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct msx_doc {
    xmlDocPtr doc;
    xmlNodePtr *nodes;
    long *parents;
    size_t count;
    /// Attributes of each node, numbered at parse time; removed ones become NULL.
    xmlAttrPtr **attributes;
    size_t *attribute_counts;
    /// Nodes taken out of the tree, freed with the document.
    xmlNodePtr *removed;
    size_t removed_count;
    /// Namespace declarations taken off their elements, freed with the document.
    xmlNsPtr dropped_namespaces;
};

static const size_t max_nodes = (size_t)1 << 22;

static int append(msx_doc *d, xmlNodePtr node, long parent, size_t *capacity) {
    if (d->count == max_nodes) return -1;
    if (d->count == *capacity) {
        size_t next = *capacity ? *capacity * 2 : 256;
        xmlNodePtr *nodes = realloc(d->nodes, next * sizeof *nodes);
        if (!nodes) return -1;
        d->nodes = nodes;
        long *parents = realloc(d->parents, next * sizeof *parents);
        if (!parents) return -1;
        d->parents = parents;
        *capacity = next;
    }
    d->nodes[d->count] = node;
    d->parents[d->count] = parent;
    d->count++;
    return 0;
}

/// Document order without recursion: descend into elements only (an entity reference's children are the DTD's).
static int walk(msx_doc *d) {
    size_t capacity = 0;
    long parent = -1;
    xmlNodePtr node = d->doc->children;
    while (node) {
        if (append(d, node, parent, &capacity) != 0) return -1;
        if (node->type == XML_ELEMENT_NODE && node->children) {
            parent = (long)d->count - 1;
            node = node->children;
            continue;
        }
        while (node && !node->next) {
            if (parent < 0) return 0;
            node = d->nodes[parent];
            parent = d->parents[parent];
        }
        if (node) node = node->next;
    }
    return 0;
}

static int number_attributes(msx_doc *d) {
    d->attributes = calloc(d->count ? d->count : 1, sizeof *d->attributes);
    d->attribute_counts = calloc(d->count ? d->count : 1, sizeof *d->attribute_counts);
    if (!d->attributes || !d->attribute_counts) return -1;
    for (size_t i = 0; i < d->count; i++) {
        xmlNodePtr node = d->nodes[i];
        if (node->type != XML_ELEMENT_NODE) continue;
        size_t n = 0;
        for (xmlAttrPtr a = node->properties; a; a = a->next) n++;
        if (!n) continue;
        d->attributes[i] = malloc(n * sizeof(xmlAttrPtr));
        if (!d->attributes[i]) return -1;
        n = 0;
        for (xmlAttrPtr a = node->properties; a; a = a->next) d->attributes[i][n++] = a;
        d->attribute_counts[i] = n;
    }
    return 0;
}

msx_doc *msx_parse(const uint8_t *bytes, size_t size, char *error, size_t error_size, int *line) {
    static const int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
    if (error_size) error[0] = 0;
    *line = 0;
    if (size > (size_t)INT32_MAX) return NULL;
    xmlParserCtxtPtr context = xmlNewParserCtxt();
    if (!context) return NULL;
    xmlDocPtr doc = xmlCtxtReadMemory(context, (const char *)bytes, (int)size, NULL, NULL, options);
    if (!doc) {
        xmlErrorPtr e = xmlCtxtGetLastError(context);
        if (e && e->message && error_size) {
            strncpy(error, e->message, error_size - 1);
            error[error_size - 1] = 0;
        }
        if (e) *line = e->line;
        xmlFreeParserCtxt(context);
        return NULL;
    }
    xmlFreeParserCtxt(context);
    msx_doc *d = calloc(1, sizeof *d);
    if (!d) { xmlFreeDoc(doc); return NULL; }
    d->doc = doc;
    if (walk(d) != 0 || number_attributes(d) != 0) {
        if (error_size) snprintf(error, error_size, "more than %zu nodes", max_nodes);
        msx_free(d);
        return NULL;
    }
    return d;
}

void msx_free(msx_doc *d) {
    if (!d) return;
    for (size_t i = 0; i < d->removed_count; i++) xmlFreeNode(d->removed[i]);
    if (d->dropped_namespaces) xmlFreeNsList(d->dropped_namespaces);
    if (d->attributes) for (size_t i = 0; i < d->count; i++) free(d->attributes[i]);
    free(d->attributes);
    free(d->attribute_counts);
    free(d->removed);
    free(d->nodes);
    free(d->parents);
    xmlFreeDoc(d->doc);
    free(d);
}

size_t msx_node_count(const msx_doc *d) { return d->count; }
int msx_node_type(const msx_doc *d, size_t i) { return i < d->count ? (int)d->nodes[i]->type : 0; }
long msx_node_parent(const msx_doc *d, size_t i) { return i < d->count ? d->parents[i] : -1; }
const char *msx_node_name(const msx_doc *d, size_t i) {
    return i < d->count && d->nodes[i]->name ? (const char *)d->nodes[i]->name : "";
}
const char *msx_node_namespace(const msx_doc *d, size_t i) {
    return i < d->count && d->nodes[i]->type == XML_ELEMENT_NODE && d->nodes[i]->ns ? (const char *)d->nodes[i]->ns->href : NULL;
}
const char *msx_node_prefix(const msx_doc *d, size_t i) {
    return i < d->count && d->nodes[i]->type == XML_ELEMENT_NODE && d->nodes[i]->ns ? (const char *)d->nodes[i]->ns->prefix : NULL;
}

static char *copy(xmlChar *text) {
    if (!text) return strdup("");
    char *out = strdup((const char *)text);
    xmlFree(text);
    return out;
}

char *msx_node_content(const msx_doc *d, size_t i) {
    if (i >= d->count) return strdup("");
    xmlNodePtr node = d->nodes[i];
    // An entity reference's content would be its expansion: never expanded here.
    if (node->type == XML_ENTITY_REF_NODE || node->type == XML_DTD_NODE) return strdup("");
    return copy(xmlNodeGetContent(node));
}

static xmlAttrPtr attribute(const msx_doc *d, size_t i, size_t a) {
    return i < d->count && a < d->attribute_counts[i] ? d->attributes[i][a] : NULL;
}

size_t msx_attribute_count(const msx_doc *d, size_t i) { return i < d->count ? d->attribute_counts[i] : 0; }
const char *msx_attribute_name(const msx_doc *d, size_t i, size_t a) {
    xmlAttrPtr attr = attribute(d, i, a);
    return attr && attr->name ? (const char *)attr->name : "";
}
const char *msx_attribute_namespace(const msx_doc *d, size_t i, size_t a) {
    xmlAttrPtr attr = attribute(d, i, a);
    return attr && attr->ns ? (const char *)attr->ns->href : NULL;
}
const char *msx_attribute_prefix(const msx_doc *d, size_t i, size_t a) {
    xmlAttrPtr attr = attribute(d, i, a);
    return attr && attr->ns ? (const char *)attr->ns->prefix : NULL;
}
char *msx_attribute_value(const msx_doc *d, size_t i, size_t a) {
    xmlAttrPtr attr = attribute(d, i, a);
    // Entity references inside the value stay references (inLine 1 would expand them).
    return attr ? copy(xmlNodeListGetRawString(d->doc, attr->children, 0)) : strdup("");
}

char *msx_attribute_text(const msx_doc *d, size_t i, size_t a) {
    xmlAttrPtr attr = attribute(d, i, a);
    return attr ? copy(xmlNodeListGetString(d->doc, attr->children, 1)) : strdup("");
}

int msx_set_node_content(msx_doc *d, size_t i, const char *value) {
    if (i >= d->count) return -1;
    xmlNodePtr node = d->nodes[i];
    if (node->type != XML_TEXT_NODE && node->type != XML_CDATA_SECTION_NODE) return -1;
    xmlNodeSetContent(node, (const xmlChar *)value);
    return 0;
}

int msx_set_attribute_value(msx_doc *d, size_t i, size_t a, const char *value) {
    xmlAttrPtr attr = attribute(d, i, a);
    if (!attr) return -1;
    xmlAttrPtr set = xmlSetNsProp(d->nodes[i], attr->ns, attr->name, (const xmlChar *)value);
    if (!set) return -1;
    d->attributes[i][a] = set;
    return 0;
}

int msx_remove_attribute(msx_doc *d, size_t i, size_t a) {
    xmlAttrPtr attr = attribute(d, i, a);
    if (!attr) return -1;
    d->attributes[i][a] = NULL;
    return xmlRemoveProp(attr);
}

int msx_remove_node(msx_doc *d, size_t i) {
    if (i >= d->count) return -1;
    xmlNodePtr *removed = realloc(d->removed, (d->removed_count + 1) * sizeof *removed);
    if (!removed) return -1;
    d->removed = removed;
    xmlUnlinkNode(d->nodes[i]);
    d->removed[d->removed_count++] = d->nodes[i];
    return 0;
}

static int used(xmlNsPtr ns, xmlNsPtr *list, size_t count) {
    for (size_t i = 0; i < count; i++) if (list[i] == ns) return 1;
    return 0;
}

static int kept_namespace(const xmlChar *href) {
    return xmlStrEqual(href, (const xmlChar *)"http://www.w3.org/2000/svg")
        || xmlStrEqual(href, (const xmlChar *)"http://www.w3.org/1999/xlink");
}

static int add(xmlNsPtr **list, size_t *count, size_t *capacity, xmlNsPtr ns) {
    if (*count == *capacity) {
        xmlNsPtr *grown = realloc(*list, (*capacity *= 2) * sizeof **list);
        if (!grown) { free(*list); return -1; }
        *list = grown;
    }
    (*list)[(*count)++] = ns;
    return 0;
}

int msx_drop_unused_namespaces(msx_doc *d) {
    // Every namespace still named by an element or attribute in the tree.
    size_t count = 0, capacity = 64;
    xmlNsPtr *list = malloc(capacity * sizeof *list);
    if (!list) return -1;
    for (size_t i = 0; i < d->count; i++) {
        xmlNodePtr node = d->nodes[i];
        if (node->type != XML_ELEMENT_NODE || !node->doc) continue;
        // A removed node (or one inside it) no longer reaches the document.
        xmlNodePtr up = node;
        while (up->parent) up = up->parent;
        if (up->type != XML_DOCUMENT_NODE) continue;
        if (node->ns && !used(node->ns, list, count) && add(&list, &count, &capacity, node->ns) != 0) return -1;
        for (xmlAttrPtr a = node->properties; a; a = a->next) {
            if (a->ns && !used(a->ns, list, count) && add(&list, &count, &capacity, a->ns) != 0) return -1;
        }
    }
    for (size_t i = 0; i < d->count; i++) {
        xmlNodePtr node = d->nodes[i];
        if (node->type != XML_ELEMENT_NODE) continue;
        xmlNsPtr *link = &node->nsDef;
        while (*link) {
            xmlNsPtr ns = *link;
            if (ns->prefix && !kept_namespace(ns->href) && !used(ns, list, count)) {
                *link = ns->next;
                ns->next = d->dropped_namespaces;
                d->dropped_namespaces = ns;
            } else {
                link = &ns->next;
            }
        }
    }
    free(list);
    return 0;
}

uint8_t *msx_serialise(msx_doc *d, size_t *size) {
    xmlChar *memory = NULL;
    int length = 0;
    xmlDocDumpMemoryEnc(d->doc, &memory, &length, "UTF-8");
    if (!memory || length < 0) return NULL;
    uint8_t *out = malloc((size_t)length + 1);
    if (out) {
        memcpy(out, memory, (size_t)length);
        *size = (size_t)length;
    }
    xmlFree(memory);
    return out;
}

void msx_string_free(void *memory) { free(memory); }
