import ArgumentParser
import Configuration
import SessionPolicyServer

/// The options of `policyctl-serve` that set configuration keys: one per key of
/// `ServerConfiguration.keys` that has an option, made from the table when the command runs.
///
/// Why not swift-configuration's `CommandLineArgumentsProvider`, as Hummingbird's project
/// template does: it has no `--help`, takes a misspelled option as one more key instead of
/// refusing it (exit 64), spells every option after its key (`--es256-public-key` sets
/// `es256.public.key.file`, `--pool` sets `pools`) and splits a value at commas (a pool secret
/// may hold one); and it needs a package trait of swift-configuration that the server does not
/// enable. Declaring an `@Option` for each key would spell every key once more.
///
/// So the options are derived: ArgumentParser learns a command's options by reflecting a default
/// instance (`Mirror(reflecting:)`), and a `Mirror` honours `CustomReflectable`. `customMirror`
/// lists one `Option` (or `Flag`, for a boolean key) per key, named and typed by the table, and
/// `init(from:)` decodes them by the same labels. ArgumentParser keeps its help, its usage errors
/// (exit 64) and its checks of whole numbers and numbers. `ConfigurationOptionsTests` holds
/// every key's option to the table.
struct ConfigurationOptions: ParsableArguments, CustomReflectable {
    /// The keys given on the command line, as `ServerConfiguration.load(commandLine:...)` takes them.
    private(set) var values: [String: ConfigContent] = [:]

    /// The keys that have an option.
    static var keys: [ServerConfiguration.Key] { ServerConfiguration.keys.filter { $0.option != nil } }

    init() {}

    init(from decoder: any Decoder) throws {
        let options = try decoder.container(keyedBy: Label.self)
        for key in Self.keys {
            let label = Label(stringValue: key.name)
            let content: ConfigContent?
            switch key.type {
            case .string: content = try options.decode(Option<String?>.self, forKey: label).wrappedValue.map { .string($0) }
            case .int: content = try options.decode(Option<Int?>.self, forKey: label).wrappedValue.map { .int($0) }
            case .double: content = try options.decode(Option<Double?>.self, forKey: label).wrappedValue.map { .double($0) }
            case .bool: content = try options.decode(Flag<Bool>.self, forKey: label).wrappedValue ? .bool(true) : nil
            case .list:
                let values = try options.decode(Option<[String]>.self, forKey: label).wrappedValue
                content = values.isEmpty ? nil : .stringArray(values)
            }
            if let content { values[key.name] = content }
        }
    }

    var customMirror: Mirror {
        Mirror(self, children: Self.keys.map { key -> Mirror.Child in (key.name, Self.argument(key)) }, displayStyle: .struct)
    }

    /// The ArgumentParser property wrapper of `key`, as `@Option` would declare it.
    static func argument(_ key: ServerConfiguration.Key) -> Any {
        let name = NameSpecification.customLong(String(key.option?.dropFirst(2) ?? ""))
        let help = ArgumentHelp(helpText(key))
        switch key.type {
        case .string: return Option<String?>(name: name, help: help)
        case .int: return Option<Int?>(name: name, help: help)
        case .double: return Option<Double?>(name: name, help: help)
        case .bool: return Flag(wrappedValue: false, name: name, help: help)
        case .list: return Option<[String]>(wrappedValue: [], name: name, parsing: .singleValue, help: help)
        }
    }

    /// An option's help: the key's help, its environment variable in brackets, its default.
    static func helpText(_ key: ServerConfiguration.Key) -> String {
        switch key.type {
        case .bool: "\(key.help) [\(key.environmentVariable)=true]."
        case .list: "\(key.help); repeat for several [\(key.environmentVariable), comma-separated]."
        default: "\(key.help) [\(key.environmentVariable)]" + (key.defaultValue.map { " (default: \($0))" } ?? "") + "."
        }
    }

    /// The keys set only in the environment or the file, for the command's discussion.
    static var keysWithoutOption: String {
        ServerConfiguration.keys.filter { $0.option == nil }.map { "`\($0.name)` [\($0.environmentVariable)]" }
            .joined(separator: ", ")
    }

    struct Label: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
