import Foundation
import Logging

/// `policyctl serve`'s log lines, on standard error, one per record, in logfmt:
/// `time=... level=error label=sessionpolicy.store msg="store operation failed" error="..." operation=update_session`
/// (metadata keys sorted; values quoted when they hold spaces, quotes or `=`).
///
/// Metadata is formatted when a line is written, never when it is set: the server sets a
/// request id on every request's logger, and most requests log nothing.
struct LogfmtHandler: LogHandler {
    var label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(label: String, level: Logger.Level) {
        self.label = label
        self.logLevel = level
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { _, new in new } }
        if let extra = event.metadata { all.merge(extra) { _, new in new } }
        FileHandle.standardError.write(Data(Self.line(time: Date(), event: event, label: label, metadata: all).utf8))
    }

    /// One record as a logfmt line, newline included.
    static func line(time: Date, event: LogEvent, label: String, metadata: Logger.Metadata) -> String {
        var out = "time=\(time.formatted(.iso8601)) level=\(event.level) label=\(value(label)) msg=\(value(event.message.description))"
        for key in metadata.keys.sorted() {
            out += " \(key)=\(value(metadata[key]!.description))"
        }
        return out + "\n"
    }

    /// `text` bare when it can be, otherwise quoted with `"` and `\` escaped.
    static func value(_ text: String) -> String {
        let bare = !text.isEmpty && text.unicodeScalars.allSatisfy { $0.value > 0x20 && $0 != "\"" && $0 != "=" && $0 != "\\" }
        if bare { return text }
        var quoted = "\""
        for c in text.unicodeScalars {
            switch c {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\t": quoted += "\\t"
            default: quoted.unicodeScalars.append(c)
            }
        }
        return quoted + "\""
    }
}
