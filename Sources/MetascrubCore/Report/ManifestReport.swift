// SPDX-License-Identifier: GPL-3.0-or-later

/// One C2PA manifest as a report shows it: who made and signed it, what it says was done, and whether its hard
/// binding matched the file before the clean and matches the output after it. The generator, signer and actions
/// are values (a person's or a device's name): they are filled in only under `--show-values`.
public struct ManifestReport: Sendable, Codable, Equatable {
    /// Whether a manifest's hard binding (its signed hash over the file's bytes) matches the file.
    public enum Binding: String, Sendable, Codable {
        case valid, invalid
        /// Not checked: an algorithm or binding metascrub does not compute, or a store that did not parse.
        case unchecked
        /// The output carries no manifest: the clean removed it.
        case removed
    }

    public struct Signer: Sendable, Codable, Equatable {
        public var commonName: String?
        public var organization: String?

        public init(commonName: String?, organization: String?) {
            self.commonName = commonName
            self.organization = organization
        }

        enum CodingKeys: String, CodingKey { case commonName = "common_name", organization }
    }

    /// Index of the manifest's item in the file's findings.
    public var finding: Int
    /// The file's own manifest (the last in the store); the others describe ingredients.
    public var active: Bool
    public var claimGenerator: String?
    public var signer: Signer?
    public var actions: [String]?
    /// The active manifest's hard binding on the original file, and on the output (clean only).
    public var bindingBefore: Binding?
    public var bindingAfter: Binding?
    /// Why a binding was not checked.
    public var bindingDetail: String?

    public init(finding: Int, active: Bool, claimGenerator: String? = nil, signer: Signer? = nil,
                actions: [String]? = nil, bindingBefore: Binding? = nil, bindingDetail: String? = nil) {
        self.finding = finding
        self.active = active
        self.claimGenerator = claimGenerator
        self.signer = signer
        self.actions = actions
        self.bindingBefore = bindingBefore
        self.bindingDetail = bindingDetail
    }

    /// The same manifest without the values that name people or devices.
    public var withoutValues: ManifestReport {
        var stripped = self
        stripped.claimGenerator = nil
        stripped.signer = nil
        stripped.actions = nil
        return stripped
    }

    enum CodingKeys: String, CodingKey {
        case finding, active, claimGenerator = "claim_generator", signer, actions
        case bindingBefore = "binding_before", bindingAfter = "binding_after", bindingDetail = "binding_detail"
    }
}
