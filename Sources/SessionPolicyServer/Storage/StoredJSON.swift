import Foundation
import SessionPolicy

/// The JSON both stores keep in their text columns (compact, sorted keys).
enum StoredJSON {
    static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(text.utf8))
        } catch {
            throw StoreError("a stored \(T.self) does not decode: \(error)")
        }
    }
}
