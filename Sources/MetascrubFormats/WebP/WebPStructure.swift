// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The chunk list of a WebP file (RIFF "WEBP", Google's container specification), read by the one RIFF walker
/// (`IFFForm`: sizes checked against the RIFF size and the file size), plus WebP's own rule: an image chunk.
struct WebPStructure {
    typealias Chunk = IFFForm.Chunk

    var chunks: [Chunk] = []
    /// End of the RIFF form as its size field says.
    var riffEnd: Int64
    var fileSize: Int64
    /// Bytes after the image that are no chunk (a damaged file): the form is taken to end where they start.
    var damage: MetascrubError?

    var trailer: Range<Int64>? { riffEnd < fileSize ? riffEnd..<fileSize : nil }

    static func parse(_ source: any ByteSource, tolerateDamage: Bool = false) throws -> WebPStructure {
        let form = try IFFForm.parse(source, format: "WebP", forms: ["WEBP"], kinds: [.riff],
                                     garbageAfter: tolerateDamage ? ["VP8 ", "VP8L", "ANMF"] : [])
        guard form.chunks.contains(where: { ["VP8 ", "VP8L", "ANMF"].contains($0.id) }) else {
            throw MetascrubError.malformed(format: "WebP", path: "RIFF form", offset: 12, reason: "no image chunk (VP8, VP8L or ANMF)")
        }
        return WebPStructure(chunks: form.chunks, riffEnd: form.formEnd, fileSize: form.fileSize, damage: form.damage)
    }
}
