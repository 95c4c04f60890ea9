// SPDX-License-Identifier: GPL-3.0-or-later

/// A four-character code: box types, brands, item types, reference types.
public struct FourCC: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let value: UInt32

    public init(_ value: UInt32) { self.value = value }

    /// From four Latin-1 characters ("©xyz" works); anything else gives 0.
    public init(_ text: String) {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count == 4, scalars.allSatisfy({ $0.value < 256 }) else {
            self.value = 0
            return
        }
        self.value = scalars.reduce(0) { $0 << 8 | $1.value }
    }

    public init(stringLiteral text: String) { self.init(text) }

    /// From the first four bytes of `bytes` (which must hold at least four).
    public init<C: Collection>(bytes: C) where C.Element == UInt8 {
        self.value = bytes.prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    public var bytes: [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    /// Whether all four bytes are printable (Latin-1 `©` included): real box types are, junk rarely is.
    public var isPrintable: Bool {
        bytes.allSatisfy { (0x20...0x7E).contains($0) || $0 == 0xA9 }
    }

    /// The code as text; unprintable bytes as `.` so it is safe in paths and messages.
    public var description: String {
        String(bytes.map { (0x20...0x7E).contains($0) || $0 == 0xA9 ? Character(Unicode.Scalar($0)) : "." })
    }
}
