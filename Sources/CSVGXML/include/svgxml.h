// A small C API over libxml2 for the SVG handler. libxml2's own headers pull in the system ICU headers, which
// clash with the ICU module Foundation ships; Swift sees only this header, made of plain C types.
#ifndef METASCRUB_SVGXML_H
#define METASCRUB_SVGXML_H
#include <stddef.h>
#include <stdint.h>

typedef struct msx_doc msx_doc;

/// Node types, libxml2's numbers.
enum { MSX_ELEMENT = 1, MSX_TEXT = 3, MSX_CDATA = 4, MSX_ENTITY_REF = 5, MSX_PI = 7, MSX_COMMENT = 8, MSX_DTD = 14 };

/// Parses hostile XML: no network, no external DTD or entity loaded, no entity substituted, no XInclude, libxml2's
/// size and depth limits kept. NULL on error, with libxml2's message in `error` and its line in `line`.
msx_doc *msx_parse(const uint8_t *bytes, size_t size, char *error, size_t error_size, int *line);
void msx_free(msx_doc *doc);

/// Nodes in document order; an entity reference's expansion is the DTD's and is not walked.
size_t msx_node_count(const msx_doc *doc);
int msx_node_type(const msx_doc *doc, size_t node);
/// -1 for a top-level node.
long msx_node_parent(const msx_doc *doc, size_t node);
const char *msx_node_name(const msx_doc *doc, size_t node);
const char *msx_node_namespace(const msx_doc *doc, size_t node);
const char *msx_node_prefix(const msx_doc *doc, size_t node);
/// The node's text content (malloc'd; free with msx_string_free).
char *msx_node_content(const msx_doc *doc, size_t node);

size_t msx_attribute_count(const msx_doc *doc, size_t node);
const char *msx_attribute_name(const msx_doc *doc, size_t node, size_t index);
const char *msx_attribute_namespace(const msx_doc *doc, size_t node, size_t index);
const char *msx_attribute_prefix(const msx_doc *doc, size_t node, size_t index);
char *msx_attribute_value(const msx_doc *doc, size_t node, size_t index);

/// The attribute's value as an application sees it: character and internal entity references replaced.
char *msx_attribute_text(const msx_doc *doc, size_t node, size_t index);

/// Edits, by the numbers the walk gave (attributes keep their numbers until the document is freed).
int msx_set_attribute_value(msx_doc *doc, size_t node, size_t index, const char *value);
/// Replaces a text or CDATA node's content.
int msx_set_node_content(msx_doc *doc, size_t node, const char *value);
int msx_remove_attribute(msx_doc *doc, size_t node, size_t index);
/// Takes the node out of the tree; it is freed with the document.
int msx_remove_node(msx_doc *doc, size_t node);

/// Takes off every namespace declaration (other than SVG's and XLink's) that no element or attribute in the tree
/// uses any more: the editors' namespaces once their attributes are gone.
int msx_drop_unused_namespaces(msx_doc *doc);

/// The document as libxml2 writes it, UTF-8 (malloc'd; free with msx_string_free).
uint8_t *msx_serialise(msx_doc *doc, size_t *size);
void msx_string_free(void *memory);
#endif
