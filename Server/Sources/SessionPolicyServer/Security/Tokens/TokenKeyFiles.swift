import Foundation
import Logging

/// Reading the token key files again (SIGHUP), so static keys rotate without a restart: add the
/// new key beside the old one in the file (a secret per line, or PEM blocks one after another)
/// and send SIGHUP to every server; switch the issuer to the new key; after the longest token
/// lifetime, remove the old key and send SIGHUP again. A file that cannot be read or holds a bad
/// key leaves every key as it was (logged at `error`).
enum TokenKeyFiles {
    static func reload(
        _ configuration: ServerConfiguration, verifier: TokenVerifier, serviceVerifier: TokenVerifier, logger: Logger
    ) async {
        let files = configuration.keyFiles
        guard files != ServerConfiguration.KeyFiles() else { return }
        do {
            func read(_ path: String?, _ what: String, trimmed: Bool) throws(ConfigurationError) -> String? {
                guard let path else { return nil }
                let text = try ServerConfiguration.read(path, what: what)
                return trimmed ? text.trimmingCharacters(in: .whitespacesAndNewlines) : text
            }
            let user = (
                try read(files.hs256Secret, "HS256 secret", trimmed: true) ?? configuration.hs256Secret,
                try read(files.es256PublicKey, "ES256 public key", trimmed: false) ?? configuration.es256PublicKeyPEM
            )
            let service = (
                try read(files.serviceHS256Secret, "service HS256 secret", trimmed: true) ?? configuration.serviceHS256Secret,
                try read(files.serviceES256PublicKey, "service ES256 public key", trimmed: false)
                    ?? configuration.serviceES256PublicKeyPEM
            )
            try ServerConfiguration.checkServiceKeysApart(user: user, service: service)
            let userKeys = try await TokenVerifier.makeStaticKeys(hs256Secret: user.0, es256PublicKeyPEM: user.1)
            let serviceKeys = try await TokenVerifier.makeStaticKeys(hs256Secret: service.0, es256PublicKeyPEM: service.1)
            verifier.replaceStaticKeys(userKeys)
            serviceVerifier.replaceStaticKeys(serviceKeys)
            logger.info(
                "token key files read again",
                metadata: ["user_keys": "\(userKeys.keys.count)", "service_keys": "\(serviceKeys.keys.count)"])
        } catch {
            logger.error("token key files not reloaded; the keys stay as they were", metadata: ["error": "\(error)"])
        }
    }
}
