package dev.sessionpolicy;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Test envelopes made here, signed with the published test-only keys of spec/conformance/keys
 * ({@code a}, {@code b}, {@code c}): the header and payload in canonical form, or as given, and
 * the ES256 signature as r || s.
 */
final class Envelopes {
    private Envelopes() {}

    static final long NOW = 1_780_000_000_000L; // 2026-05-28
    static final long DAY = 86_400_000L;

    static String pem(String name, String kind) throws Exception {
        return new String(Files.readAllBytes(Vectors.dir().resolve("keys").resolve(name + "." + kind + ".pem")), StandardCharsets.UTF_8);
    }

    static TrustedKey key(String name) throws Exception {
        return TrustedKey.fromPem(pem(name, "pub"));
    }

    static PrivateKey privateKey(String name) throws Exception {
        String text = pem(name, "key").replace("-----BEGIN PRIVATE KEY-----", "").replace("-----END PRIVATE KEY-----", "").replaceAll("\\s", "");
        return KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(text)));
    }

    static String b64(byte[] bytes) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    static String b64(String text) {
        return b64(text.getBytes(StandardCharsets.UTF_8));
    }

    /** The 64-byte r || s ES256 signature of {@code data} with key {@code name}. */
    static byte[] sign(String name, byte[] data) throws Exception {
        Signature s = Signature.getInstance("SHA256withECDSA");
        s.initSign(privateKey(name));
        s.update(data);
        return raw(s.sign());
    }

    /** DER SEQUENCE { INTEGER r, INTEGER s } to r || s. */
    static byte[] raw(byte[] der) {
        int at = 2; // SEQUENCE, short length (at most 72 bytes)
        byte[] out = new byte[64];
        for (int part = 0; part < 2; part++) {
            int len = der[at + 1];
            BigInteger v = new BigInteger(1, Arrays.copyOfRange(der, at + 2, at + 2 + len));
            byte[] b = v.toByteArray();
            int skip = b.length > 32 ? b.length - 32 : 0;
            System.arraycopy(b, skip, out, part * 32 + 32 - (b.length - skip), b.length - skip);
            at += 2 + len;
        }
        return out;
    }

    /** The canonical header naming key {@code name}. */
    static String header(String name) throws Exception {
        return header(key(name).id(), "ES256", "sessionpolicy-machine+jws");
    }

    static String header(String kid, String alg, String typ) {
        Map<String, Object> h = new LinkedHashMap<>();
        h.put("alg", alg);
        h.put("kid", kid);
        h.put("typ", typ);
        return Canonical.write(h);
    }

    /** A payload's members, editable before {@link #write}. */
    static Map<String, Object> payload(String machine, long serial, long issuedAt, long expiresAt) throws Exception {
        PolicyMachine m = PolicyMachine.fromDocument(machine);
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("format", "sessionpolicy-envelope/1");
        p.put("policy", m.name());
        p.put("serial", serial);
        p.put("issued_at", issuedAt);
        p.put("expires_at", expiresAt);
        p.put("digest", m.digest());
        p.put("machine", machine);
        return p;
    }

    static String write(Map<String, Object> payload) {
        return Canonical.write(payload);
    }

    /** The compact envelope of {@code header} and {@code payload} (JSON texts), signed with key {@code signer}. */
    static String envelope(String signer, String header, String payload) throws Exception {
        String signed = b64(header) + "." + b64(payload);
        return signed + "." + b64(sign(signer, signed.getBytes(StandardCharsets.US_ASCII)));
    }

    /** A valid envelope of {@code machine}, signed with key {@code a}, issued a day before {@link #NOW} for 30 days. */
    static String envelope(String machine, long serial) throws Exception {
        return envelope("a", header("a"), write(payload(machine, serial, NOW - DAY, NOW + 29 * DAY)));
    }

    static byte[] bytes(String envelope) {
        return envelope.getBytes(StandardCharsets.UTF_8);
    }

    /** The shipped machine document of {@code policy}, without the final line feed. */
    static String machine(String policy) throws Exception {
        String s = new String(Vectors.machine(policy), StandardCharsets.UTF_8);
        return s.endsWith("\n") ? s.substring(0, s.length() - 1) : s;
    }

    /** Another machine of the same policy (its description changed), with its own digest. */
    static String otherMachine(String policy, String description) throws Exception {
        return MachineDocumentTest.edited(machine(policy), m -> m.put("description", description));
    }
}
