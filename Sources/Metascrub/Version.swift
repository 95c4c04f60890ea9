// SPDX-License-Identifier: GPL-3.0-or-later

public enum MetascrubVersion {
    public static let current = "0.1.0"
}
