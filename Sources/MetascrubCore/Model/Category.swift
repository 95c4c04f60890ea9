// SPDX-License-Identifier: GPL-3.0-or-later

/// What kind of information a metadata item carries. Policies decide per category.
public enum Category: String, Sendable, Codable, CaseIterable, Comparable {
    /// GPS positions, place names, location keys in videos.
    case location
    /// Camera or phone make, model, serial numbers, lens, firmware, capture settings.
    case device
    /// People: authors, owners, copyright holders, faces and their names, account e-mails.
    case identity
    /// Capture, modification and digitisation times and time zones.
    case time
    /// Software, encoders and edit history.
    case software
    /// Free text: titles, descriptions, comments, keywords.
    case content
    /// Thumbnails, previews, trailers, secondary images, depth and gain maps, motion-photo videos.
    case embedded
    /// C2PA/JUMBF provenance manifests.
    case provenance
    /// What the image needs to display correctly: ICC profile, orientation, colour transforms.
    case rendering
    /// Container structure a decoder needs (JFIF header, dimensions, codec configuration).
    case structure

    public static func < (lhs: Category, rhs: Category) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// One line for help texts, SARIF rules and the policy manual.
    public var summary: String {
        switch self {
        case .location: "GPS positions, place names and location keys"
        case .device: "camera/phone make, model, serial numbers, lens, firmware and capture settings"
        case .identity: "authors, owners, copyright holders, people and faces"
        case .time: "capture, modification and digitisation times and time zones"
        case .software: "software, encoders and edit history"
        case .content: "titles, descriptions, comments and keywords"
        case .embedded: "thumbnails, previews, trailers, secondary images, depth maps, motion-photo videos"
        case .provenance: "C2PA/JUMBF provenance manifests"
        case .rendering: "ICC profile, orientation and colour transforms the image needs to display correctly"
        case .structure: "container structure a decoder needs"
        }
    }
}
