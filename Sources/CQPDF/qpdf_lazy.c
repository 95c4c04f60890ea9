// SPDX-License-Identifier: GPL-3.0-or-later
// libqpdf through dlopen on first use, like libheif (CHeif/heif_lazy.c): these definitions stand in for the QPDF
// C API functions metascrub calls, with qpdf-c.h's own prototypes, so the Swift code calls QPDF as documented;
// each resolves its symbol when called. Without libqpdf.so.29 every call answers like a QPDF failure (an error
// code, NULL, 0) and `cqpdf_available` says why, never a crash. qpdf_init returning NULL stops callers first.
#include "lazy_library.h"
#include <stddef.h>
#include "cqpdf.h"

static struct lazy_library libqpdf = LAZY_LIBRARY("libqpdf.so.29");

static void *resolve(const char *name) { return lazy_library_symbol(&libqpdf, name); }

int cqpdf_available(void) { return resolve("qpdf_init") != NULL; }

// The document: reading from memory, errors and warnings, the trailer and catalog, the pages.
FORWARD(qpdf_data, qpdf_init, (void), (), NULL)
FORWARD_VOID(qpdf_cleanup, (qpdf_data* a0), (a0))
FORWARD_VOID(qpdf_silence_errors, (qpdf_data a0), (a0))
FORWARD_VOID(qpdf_set_suppress_warnings, (qpdf_data a0, QPDF_BOOL a1), (a0, a1))
FORWARD_VOID(qpdf_set_attempt_recovery, (qpdf_data a0, QPDF_BOOL a1), (a0, a1))
FORWARD(QPDF_ERROR_CODE, qpdf_read_memory, (qpdf_data a0, char const* a1, char const* a2, unsigned long long a3, char const* a4), (a0, a1, a2, a3, a4), QPDF_ERRORS)
FORWARD(QPDF_BOOL, qpdf_has_error, (qpdf_data a0), (a0), QPDF_TRUE)
FORWARD(qpdf_error, qpdf_get_error, (qpdf_data a0), (a0), NULL)
FORWARD(char const*, qpdf_get_error_full_text, (qpdf_data a0, qpdf_error a1), (a0, a1), NULL)
FORWARD(char const*, qpdf_get_error_message_detail, (qpdf_data a0, qpdf_error a1), (a0, a1), NULL)
FORWARD(unsigned long long, qpdf_get_error_file_position, (qpdf_data a0, qpdf_error a1), (a0, a1), 0)
FORWARD(QPDF_BOOL, qpdf_more_warnings, (qpdf_data a0), (a0), QPDF_FALSE)
FORWARD(qpdf_error, qpdf_next_warning, (qpdf_data a0), (a0), NULL)
FORWARD(QPDF_BOOL, qpdf_is_encrypted, (qpdf_data a0), (a0), QPDF_FALSE)
FORWARD(qpdf_oh, qpdf_get_trailer, (qpdf_data a0), (a0), 0)
FORWARD(qpdf_oh, qpdf_get_root, (qpdf_data a0), (a0), 0)
FORWARD(int, qpdf_get_num_pages, (qpdf_data a0), (a0), -1)
FORWARD(qpdf_oh, qpdf_get_page_n, (qpdf_data a0, size_t a1), (a0, a1), 0)
FORWARD(QPDF_ERROR_CODE, qpdf_oh_get_page_content_data, (qpdf_data a0, qpdf_oh a1, unsigned char** a2, size_t* a3), (a0, a1, a2, a3), QPDF_ERRORS)

// Objects: types, dictionaries, arrays, strings, streams.
FORWARD_VOID(qpdf_oh_release_all, (qpdf_data a0), (a0))
FORWARD(enum qpdf_object_type_e, qpdf_oh_get_type_code, (qpdf_data a0, qpdf_oh a1), (a0, a1), ot_uninitialized)
FORWARD(QPDF_BOOL, qpdf_oh_is_indirect, (qpdf_data a0, qpdf_oh a1), (a0, a1), QPDF_FALSE)
FORWARD(int, qpdf_oh_get_object_id, (qpdf_data a0, qpdf_oh a1), (a0, a1), 0)
FORWARD(int, qpdf_oh_get_generation, (qpdf_data a0, qpdf_oh a1), (a0, a1), 0)
FORWARD(qpdf_oh, qpdf_get_object_by_id, (qpdf_data a0, int a1, int a2), (a0, a1, a2), 0)
FORWARD_VOID(qpdf_oh_begin_dict_key_iter, (qpdf_data a0, qpdf_oh a1), (a0, a1))
FORWARD(QPDF_BOOL, qpdf_oh_dict_more_keys, (qpdf_data a0), (a0), QPDF_FALSE)
FORWARD(char const*, qpdf_oh_dict_next_key, (qpdf_data a0), (a0), NULL)
FORWARD(QPDF_BOOL, qpdf_oh_has_key, (qpdf_data a0, qpdf_oh a1, char const* a2), (a0, a1, a2), QPDF_FALSE)
FORWARD(qpdf_oh, qpdf_oh_get_key, (qpdf_data a0, qpdf_oh a1, char const* a2), (a0, a1, a2), 0)
FORWARD_VOID(qpdf_oh_remove_key, (qpdf_data a0, qpdf_oh a1, char const* a2), (a0, a1, a2))
FORWARD_VOID(qpdf_oh_replace_key, (qpdf_data a0, qpdf_oh a1, char const* a2, qpdf_oh a3), (a0, a1, a2, a3))
FORWARD(qpdf_oh, qpdf_oh_get_dict, (qpdf_data a0, qpdf_oh a1), (a0, a1), 0)
FORWARD(int, qpdf_oh_get_array_n_items, (qpdf_data a0, qpdf_oh a1), (a0, a1), 0)
FORWARD(qpdf_oh, qpdf_oh_get_array_item, (qpdf_data a0, qpdf_oh a1, int a2), (a0, a1, a2), 0)
FORWARD_VOID(qpdf_oh_erase_item, (qpdf_data a0, qpdf_oh a1, int a2), (a0, a1, a2))
FORWARD(char const*, qpdf_oh_get_name, (qpdf_data a0, qpdf_oh a1), (a0, a1), NULL)
FORWARD(char const*, qpdf_oh_get_utf8_value, (qpdf_data a0, qpdf_oh a1), (a0, a1), NULL)
FORWARD(char const*, qpdf_oh_get_binary_string_value, (qpdf_data a0, qpdf_oh a1, size_t* a2), (a0, a1, a2), NULL)
FORWARD(char const*, qpdf_oh_unparse_binary, (qpdf_data a0, qpdf_oh a1), (a0, a1), NULL)
FORWARD(size_t, qpdf_get_last_string_length, (qpdf_data a0), (a0), 0)
FORWARD(qpdf_oh, qpdf_oh_new_integer, (qpdf_data a0, long long a1), (a0, a1), 0)
FORWARD(qpdf_oh, qpdf_oh_new_dictionary, (qpdf_data a0), (a0), 0)
FORWARD(QPDF_ERROR_CODE, qpdf_oh_get_stream_data, (qpdf_data a0, qpdf_oh a1, enum qpdf_stream_decode_level_e a2, QPDF_BOOL* a3, unsigned char** a4, size_t* a5), (a0, a1, a2, a3, a4, a5), QPDF_ERRORS)
FORWARD_VOID(qpdf_oh_replace_stream_data, (qpdf_data a0, qpdf_oh a1, unsigned char const* a2, size_t a3, qpdf_oh a4, qpdf_oh a5), (a0, a1, a2, a3, a4, a5))
FORWARD(qpdf_oh, qpdf_oh_new_null, (qpdf_data a0), (a0), 0)

// Writing a fresh file: no incremental update, unreferenced objects dropped, deterministic /ID.
FORWARD(QPDF_ERROR_CODE, qpdf_init_write_memory, (qpdf_data a0), (a0), QPDF_ERRORS)
FORWARD_VOID(qpdf_set_object_stream_mode, (qpdf_data a0, enum qpdf_object_stream_e a1), (a0, a1))
FORWARD_VOID(qpdf_set_stream_data_mode, (qpdf_data a0, enum qpdf_stream_data_e a1), (a0, a1))
FORWARD_VOID(qpdf_set_preserve_unreferenced_objects, (qpdf_data a0, QPDF_BOOL a1), (a0, a1))
FORWARD_VOID(qpdf_set_deterministic_ID, (qpdf_data a0, QPDF_BOOL a1), (a0, a1))
FORWARD_VOID(qpdf_set_linearization, (qpdf_data a0, QPDF_BOOL a1), (a0, a1))
FORWARD(QPDF_ERROR_CODE, qpdf_write, (qpdf_data a0), (a0), QPDF_ERRORS)
FORWARD(size_t, qpdf_get_buffer_length, (qpdf_data a0), (a0), 0)
FORWARD(unsigned char const*, qpdf_get_buffer, (qpdf_data a0), (a0), NULL)
