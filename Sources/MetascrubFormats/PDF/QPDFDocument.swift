// SPDX-License-Identifier: GPL-3.0-or-later
import CQPDF
import MetascrubCore
#if canImport(Glibc)
import Glibc
#endif

/// Where a dictionary sits in a PDF: an indirect object (nil: the trailer) and the keys and array indices that
/// lead from it. Object numbers are the file's own, so a place is only meaningful in the document it came from.
struct PDFPlace: Hashable, Sendable, CustomStringConvertible {
    enum Step: Hashable, Sendable { case key(String), index(Int) }
    var object: PDFRef?
    var steps: [Step] = []

    func appending(_ step: Step) -> PDFPlace { PDFPlace(object: object, steps: steps + [step]) }

    var description: String {
        let head = object.map { "obj \($0.id) \($0.generation)" } ?? "trailer"
        return ([head] + steps.map { step in
            switch step {
            case .key(let key): key
            case .index(let index): "[\(index)]"
            }
        }).joined(separator: " ")
    }
}

struct PDFRef: Hashable, Sendable {
    var id: Int32
    var generation: Int32
}

/// One document opened by QPDF from memory. Every call goes through the C API, whose errors are recorded on the
/// document (never thrown as C++ exceptions across the boundary): `check` turns the last one into a typed error.
/// Not `Sendable`: one thread uses a document from open to close, inside one scan or one clean.
final class QPDFDocument {
    typealias Handle = qpdf_oh

    /// The whole file is handed to QPDF in memory: larger documents are refused before parsing.
    static let sizeLimit: Int64 = 512 << 20
    private var data: qpdf_data?
    /// The file's bytes, alive while QPDF reads from them (it does not copy the buffer).
    let bytes: [UInt8]
    let size: Int64

    init(_ input: any ByteSource) throws {
        guard cqpdf_available() != 0 else {
            throw MetascrubError.library(name: "libqpdf", message: "libqpdf.so.29 could not be loaded (Debian: libqpdf29)")
        }
        bytes = try input.readAll(limit: Self.sizeLimit)
        size = input.size
        guard let data = qpdf_init() else { throw MetascrubError.library(name: "libqpdf", message: "qpdf_init failed") }
        self.data = data
        qpdf_silence_errors(data)
        qpdf_set_suppress_warnings(data, QPDF_TRUE)
        let status = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { qpdf_read_memory(data, "pdf", $0.baseAddress, UInt64($0.count), "") }
        }
        if status & QPDF_ERRORS != 0 { throw error(path: "document") }
        // The first warning that names a byte says most ("xref not found" rather than "file is damaged").
        while qpdf_more_warnings(data) != 0, let warning = qpdf_next_warning(data) {
            let typed = Self.typed(data, warning, path: "document")
            if repaired == nil || (repaired?.offset ?? 0) == 0 && (typed.offset ?? 0) > 0 { repaired = typed }
        }
        if qpdf_is_encrypted(data) != 0 {
            throw MetascrubError.unsupported(format: "PDF", reason: "the document is encrypted; metascrub does not decrypt PDFs")
        }
    }

    deinit {
        // An error left unread makes qpdf_cleanup print it: it has been thrown or ignored on purpose by now.
        if let data, qpdf_has_error(data) != 0 { _ = qpdf_get_error(data) }
        qpdf_cleanup(&data)
    }

    private var q: qpdf_data { data! }

    /// The error QPDF recorded, as a typed error at `path` and the byte QPDF names.
    func error(path: String) -> MetascrubError {
        guard let error = qpdf_get_error(q) else { return .malformed(format: "PDF", path: path, offset: 0, reason: "unknown QPDF error") }
        return Self.typed(q, error, path: path)
    }

    private static func typed(_ q: qpdf_data, _ error: qpdf_error, path: String) -> MetascrubError {
        let detail = qpdf_get_error_message_detail(q, error).map { String(cString: $0) }
        let full = qpdf_get_error_full_text(q, error).map { String(cString: $0) }
        let text = detail.flatMap { $0.isEmpty ? nil : $0 } ?? full ?? "QPDF error"
        return .malformed(format: "PDF", path: path, offset: Int64(clamping: qpdf_get_error_file_position(q, error)), reason: text)
    }

    /// What QPDF had to repair while reading (a cross-reference table rebuilt, a stream length recovered): the
    /// first such warning, or nil for a sound file.
    private(set) var repaired: MetascrubError?

    /// Throws the error QPDF recorded during the last calls, if any.
    func check(_ path: @autoclosure () -> String) throws {
        if qpdf_has_error(q) != 0 { throw error(path: path()) }
    }

    var trailer: Handle { qpdf_get_trailer(q) }
    var root: Handle { qpdf_get_root(q) }
    var pageCount: Int { Int(qpdf_get_num_pages(q)) }
    func page(_ index: Int) -> Handle { qpdf_get_page_n(q, index) }

    func type(_ oh: Handle) -> qpdf_object_type_e { qpdf_oh_get_type_code(q, oh) }
    func isDictionary(_ oh: Handle) -> Bool { type(oh) == ot_dictionary }
    func isStream(_ oh: Handle) -> Bool { type(oh) == ot_stream }

    /// The object's number when it is indirect.
    func ref(_ oh: Handle) -> PDFRef? {
        guard qpdf_oh_is_indirect(q, oh) != 0 else { return nil }
        return PDFRef(id: qpdf_oh_get_object_id(q, oh), generation: qpdf_oh_get_generation(q, oh))
    }

    /// A dictionary's keys (a stream's dictionary's for a stream), in QPDF's order (sorted).
    func keys(_ oh: Handle) -> [String] {
        let dict = isStream(oh) ? qpdf_oh_get_dict(q, oh) : oh
        guard isDictionary(dict) else { return [] }
        var keys: [String] = []
        qpdf_oh_begin_dict_key_iter(q, dict)
        while qpdf_oh_dict_more_keys(q) != 0, let key = qpdf_oh_dict_next_key(q) { keys.append(String(cString: key)) }
        return keys
    }

    func get(_ oh: Handle, _ key: String) -> Handle {
        qpdf_oh_get_key(q, isStream(oh) ? qpdf_oh_get_dict(q, oh) : oh, key)
    }

    func has(_ oh: Handle, _ key: String) -> Bool {
        qpdf_oh_has_key(q, isStream(oh) ? qpdf_oh_get_dict(q, oh) : oh, key) != 0
    }

    func remove(_ oh: Handle, _ key: String) { qpdf_oh_remove_key(q, isStream(oh) ? qpdf_oh_get_dict(q, oh) : oh, key) }

    func replace(_ oh: Handle, _ key: String, _ value: Handle) {
        qpdf_oh_replace_key(q, isStream(oh) ? qpdf_oh_get_dict(q, oh) : oh, key, value)
    }

    func count(_ array: Handle) -> Int { type(array) == ot_array ? Int(qpdf_oh_get_array_n_items(q, array)) : 0 }
    func item(_ array: Handle, _ index: Int) -> Handle { qpdf_oh_get_array_item(q, array, Int32(index)) }
    func erase(_ array: Handle, _ index: Int) { qpdf_oh_erase_item(q, array, Int32(index)) }

    func name(_ oh: Handle) -> String? { type(oh) == ot_name ? qpdf_oh_get_name(q, oh).map { String(cString: $0) } : nil }

    /// A string's text (PDFDocEncoding or UTF-16 with its byte order mark, as UTF-8), a name, or the object as PDF.
    func text(_ oh: Handle) -> String {
        switch type(oh) {
        case ot_string: qpdf_oh_get_utf8_value(q, oh).map { String(cString: $0) } ?? ""
        case ot_name: name(oh) ?? ""
        default: String(decoding: unparsed(oh), as: UTF8.self)
        }
    }

    /// The object as PDF syntax (a stream as its reference).
    func unparsed(_ oh: Handle) -> [UInt8] {
        guard let text = qpdf_oh_unparse_binary(q, oh) else { return [] }
        return Array(UnsafeBufferPointer(start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self),
                                         count: qpdf_get_last_string_length(q)))
    }

    /// A stream's data, decoded through its general-purpose filters (Flate, LZW, ASCII…) when `decoded`, as
    /// stored otherwise; nil when it cannot be (an image codec QPDF does not decode, a damaged stream).
    func streamData(_ oh: Handle, decoded: Bool) -> [UInt8]? {
        var buffer: UnsafeMutablePointer<UInt8>?
        var length = 0
        var filtered: QPDF_BOOL = QPDF_FALSE
        let status = qpdf_oh_get_stream_data(q, oh, decoded ? qpdf_dl_generalized : qpdf_dl_none, &filtered, &buffer, &length)
        defer { free(buffer) }
        guard status & QPDF_ERRORS == 0, qpdf_has_error(q) == 0, let buffer, !decoded || filtered != 0 else { return nil }
        return Array(UnsafeBufferPointer(start: buffer, count: length))
    }

    /// A page's content streams, concatenated and decoded.
    func pageContent(_ page: Handle) -> [UInt8]? {
        var buffer: UnsafeMutablePointer<UInt8>?
        var length = 0
        let status = qpdf_oh_get_page_content_data(q, page, &buffer, &length)
        defer { free(buffer) }
        guard status & QPDF_ERRORS == 0 else { return nil }
        guard let buffer, length > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: buffer, count: length))
    }

    /// Replaces a stream's data with `bytes`, stored unfiltered.
    func replaceData(_ oh: Handle, _ bytes: [UInt8]) {
        let none = qpdf_oh_new_null(q)
        bytes.withUnsafeBufferPointer { qpdf_oh_replace_stream_data(q, oh, $0.baseAddress, $0.count, none, none) }
    }

    func integer(_ value: Int) -> Handle { qpdf_oh_new_integer(q, Int64(value)) }
    func dictionary() -> Handle { qpdf_oh_new_dictionary(q) }

    /// The object at `place`, or nil when the path no longer leads anywhere.
    func resolve(_ place: PDFPlace) -> Handle? {
        var oh: Handle
        if let ref = place.object { oh = qpdf_get_object_by_id(q, ref.id, ref.generation) } else { oh = trailer }
        for step in place.steps {
            switch step {
            case .key(let key):
                guard has(oh, key) else { return nil }
                oh = get(oh, key)
            case .index(let index):
                guard index < count(oh) else { return nil }
                oh = item(oh, index)
            }
        }
        let kind = type(oh)
        return kind == ot_null || kind == ot_uninitialized ? nil : oh
    }

    /// The document written fresh: every object once, only those still referenced, no incremental update, no
    /// object streams (so every dictionary is plain text the residue proof can search), stream data copied as
    /// stored, and an /ID computed from the content when the trailer has none (so cleaning is a fixed point).
    func written() throws -> [UInt8] {
        guard qpdf_init_write_memory(q) & QPDF_ERRORS == 0 else { throw error(path: "writing") }
        qpdf_set_object_stream_mode(q, qpdf_o_disable)
        qpdf_set_stream_data_mode(q, qpdf_s_preserve)
        qpdf_set_preserve_unreferenced_objects(q, QPDF_FALSE)
        qpdf_set_linearization(q, QPDF_FALSE)
        qpdf_set_deterministic_ID(q, QPDF_TRUE)
        guard qpdf_write(q) & QPDF_ERRORS == 0 else { throw error(path: "writing") }
        guard let buffer = qpdf_get_buffer(q) else { throw error(path: "writing") }
        return Array(UnsafeBufferPointer(start: buffer, count: qpdf_get_buffer_length(q)))
    }
}
