// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// A scanner that walks one file into an item collector and its format's layout: the shape the container
/// scanners share, so a handler's `scan` is one line (`try Scanner.scan(input, options: options)`).
protocol LayoutScanner {
    associatedtype Layout: Sendable
    var found: ItemCollector { get }
    var layout: Layout { get }
    init(input: any ByteSource, options: ScanOptions)
    mutating func run() throws
}

extension LayoutScanner {
    static func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<Layout> {
        var scanner = Self(input: input, options: options)
        try scanner.run()
        return scanner.found.result(scanner.layout)
    }
}
