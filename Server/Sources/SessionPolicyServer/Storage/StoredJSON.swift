import Foundation
import SessionPolicy
import SessionPolicyJSON

/// The JSON both stores keep in their text columns (compact, sorted keys).
enum StoredJSON {
    /// A session state as stored: the fast writer, byte for byte what `encode` writes.
    static func encode(_ state: SessionState) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        FastJSON.append(state, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// A stored session state: the fast reader, or Foundation's for anything it does not take.
    static func decode(_ type: SessionState.Type, _ text: String) throws -> SessionState {
        var text = text
        return try text.withUTF8 { try decodeState(UnsafeRawBufferPointer($0)) }
    }

    /// A stored session state from its UTF-8 bytes (as a store's C interface hands them over).
    static func decodeState(_ bytes: UnsafeRawBufferPointer) throws -> SessionState {
        if let state = FastJSON.sessionState(bytes) { return state }
        do {
            return try JSONDecoder().decode(SessionState.self, from: Data(bytes))
        } catch {
            throw StoreError("a stored session state does not decode: \(error)")
        }
    }

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
