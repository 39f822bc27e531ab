package dev.sessionpolicy;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.Signature;
import java.security.interfaces.ECPublicKey;
import java.security.spec.ECPoint;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * Replaces the machine an app decides with by signed machines it fetches
 * ({@code sessionpolicy-envelope/1}, docs/envelope.md): verifies each envelope against the
 * pinned keys, in the specification's order of checks, and installs its machine only when every
 * check passes. The fetch is the app's; the updater takes bytes and returns an
 * {@link UpdateResult}.
 *
 * <p>The guarantee: it never installs a machine that is not verified with a pinned key, never
 * installs an envelope whose serial is not larger than the one it holds (another machine with
 * such a serial is {@code rollback}, the same machine {@code unchanged}), and after a refusal it
 * keeps deciding with the last good machine ({@link #current()} is unchanged). Nothing in an
 * envelope can turn verification off: there is one algorithm (ES256), the keys are the ones
 * given here, and at least one is required.
 *
 * <pre>{@code
 * MachineUpdater updater = new MachineUpdater("spendiq", Collections.singletonList(TrustedKey.fromPem(PINNED_PEM)));
 * updater.restore(storedEnvelope);                      // at start: the envelope stored last time
 * UpdateResult r = updater.offer(fetchedBytes, System.currentTimeMillis());
 * if (r.kind() == UpdateResult.Kind.INSTALLED) store(r.machine().envelope());
 * PolicyMachine machine = updater.current().machine();
 * }</pre>
 *
 * <p>Thread-safe: {@link #offer} and {@link #restore} are serialized, and {@link #current()}
 * may be read from any thread.
 */
public final class MachineUpdater {
    /** The clock tolerance unless the app sets another: 10 minutes. */
    public static final long DEFAULT_TOLERANCE_MILLIS = 600_000L;
    /** The largest envelope read: 4 MiB (check 1). */
    public static final int MAX_ENVELOPE_BYTES = 4 * 1024 * 1024;

    static final String FORMAT = "sessionpolicy-envelope/1";
    static final String TYPE = "sessionpolicy-machine+jws";
    static final String ALGORITHM = "ES256";
    static final long MAX_SERIAL = (1L << 53) - 1;
    /** 9999-12-31T23:59:59.999Z in milliseconds since the Unix epoch. */
    static final long MAX_TIME = 253_402_300_799_999L;
    static final List<String> HEADER_KEYS = Arrays.asList("alg", "kid", "typ");
    static final List<String> PAYLOAD_KEYS = Arrays.asList("format", "policy", "serial", "issued_at", "expires_at", "digest", "machine");
    /** The order n of P-256's base point: a signature's r and s are from 1 to n − 1. */
    private static final BigInteger ORDER = new BigInteger("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551", 16);

    private final String policy;
    private final List<TrustedKey> keys;
    private final long toleranceMillis;
    private volatile SignedMachine current;

    /**
     * An updater for {@code policy} with the default clock tolerance (10 minutes); see
     * {@link #MachineUpdater(String, List, long)}.
     */
    public MachineUpdater(@NonNull String policy, @NonNull List<TrustedKey> keys) {
        this(policy, keys, DEFAULT_TOLERANCE_MILLIS);
    }

    /**
     * An updater for the machines of {@code policy} (the name an envelope's {@code policy} and
     * its machine's {@code name} must have), verified with one of {@code keys}, and a tolerance
     * for the device's clock in milliseconds. It holds no machine until an envelope is restored
     * or offered and installed.
     *
     * @throws IllegalArgumentException when {@code keys} is empty (an updater always verifies:
     *     there is no unsigned mode) or {@code toleranceMillis} is negative; a programming error,
     *     not a refused input
     * @throws NullPointerException when {@code policy}, {@code keys} or one of the keys is null
     */
    public MachineUpdater(@NonNull String policy, @NonNull List<TrustedKey> keys, long toleranceMillis) {
        if (policy == null) throw new NullPointerException("policy");
        if (keys.isEmpty()) throw new IllegalArgumentException("an updater needs at least one pinned key: every envelope is verified");
        if (toleranceMillis < 0) throw new IllegalArgumentException("the clock tolerance cannot be negative: " + toleranceMillis);
        List<TrustedKey> copy = new ArrayList<>(keys.size());
        for (TrustedKey k : keys) {
            if (k == null) throw new NullPointerException("a pinned key is null");
            copy.add(k);
        }
        this.policy = policy;
        this.keys = Collections.unmodifiableList(copy);
        this.toleranceMillis = toleranceMillis;
    }

    /**
     * Restores the envelope stored when its machine was installed (at start, or the envelope the
     * app ships with its binary when nothing is stored): every check but the times (checks 1 to
     * 12, 15 and 16), since it was valid when installed and the app keeps deciding with the last
     * good machine however old it is. When the updater already holds a machine, check 17 applies
     * too, as for {@link #offer}: a larger serial is installed, the same digest with a serial not
     * larger is {@code unchanged}, another machine with a serial not larger is {@code rollback}.
     */
    public synchronized @NonNull UpdateResult restore(@NonNull byte[] envelope) {
        return update(envelope, false, 0);
    }

    /**
     * Offers an envelope the app fetched: every check (1 to 17), with {@code nowMillis} the
     * device's clock in milliseconds since the Unix epoch (the updater reads no clock).
     * {@link UpdateResult.Kind#INSTALLED}: nothing was held or its serial is larger than the one
     * held (the same machine too: the serial held moves up, so that no envelope signed before it
     * can come back); the updater decides with its machine from now on and the app stores
     * {@link SignedMachine#envelope()}. {@link UpdateResult.Kind#UNCHANGED}: it carries the
     * machine held with a serial not larger. {@link UpdateResult.Kind#REFUSED}: nothing changes.
     */
    public synchronized @NonNull UpdateResult offer(@NonNull byte[] envelope, long nowMillis) {
        return update(envelope, true, nowMillis);
    }

    /** The machine installed last, or {@code null} when none has been restored or installed yet. */
    public @Nullable SignedMachine current() {
        return current;
    }

    /** The policy this updater takes machines of. */
    public @NonNull String policy() {
        return policy;
    }

    /**
     * The ids of the pinned keys, in the order given: what a fetch sends the server as {@code
     * ?keys=ID,ID} so that it signs with a key this app pins (docs/signed-machines.md).
     */
    public @NonNull List<String> keyIds() {
        List<String> ids = new java.util.ArrayList<>();
        for (TrustedKey k : keys) ids.add(k.id());
        return java.util.Collections.unmodifiableList(ids);
    }

    private UpdateResult update(byte[] envelope, boolean checkTimes, long now) {
        SignedMachine m;
        try {
            m = read(envelope, checkTimes, now);
        } catch (Refusal r) {
            return UpdateResult.refused(r.code, r.getMessage());
        }
        // 17: against the envelope held, a larger serial installs, whatever its machine (the same
        // machine signed later moves the serial held up); a serial not larger is unchanged with
        // the same digest and a rollback with another.
        SignedMachine held = current;
        if (held != null && m.serial() <= held.serial()) {
            if (m.digest().equals(held.digest())) return UpdateResult.unchanged();
            return UpdateResult.refused("rollback", "serial " + m.serial() + " (" + m.digest() + ") is not larger than the held serial "
                    + held.serial() + ", and its machine is another (" + held.digest() + ")");
        }
        current = m;
        return UpdateResult.installed(m);
    }

    /** Checks 1 to 16 (13 and 14 only when {@code checkTimes}), in order: the envelope's machine, or the first refusal. */
    private SignedMachine read(byte[] bytes, boolean checkTimes, long now) throws Refusal {
        // 1. the size
        if (bytes.length > MAX_ENVELOPE_BYTES) {
            throw new Refusal("envelope-too-large", "the envelope is " + bytes.length + " bytes, more than the limit of " + MAX_ENVELOPE_BYTES);
        }
        // 2. three base64url segments, ASCII white space around them removed
        int start = 0;
        int end = bytes.length;
        while (start < end && isSpace(bytes[start])) start++;
        while (end > start && isSpace(bytes[end - 1])) end--;
        int dot1 = -1;
        int dot2 = -1;
        int dots = 0;
        for (int i = start; i < end; i++) {
            if (bytes[i] != '.') continue;
            dots++;
            if (dots == 1) dot1 = i;
            else if (dots == 2) dot2 = i;
        }
        if (dots != 2) throw malformed("the envelope has " + (dots + 1) + " segments separated by `.`, not three");
        checkSegment(bytes, start, dot1, "header");
        checkSegment(bytes, dot1 + 1, dot2, "payload");
        checkSegment(bytes, dot2 + 1, end, "signature");
        if (dot1 == start) throw malformed("the header segment is empty");
        if (dot2 == dot1 + 1) throw malformed("the payload segment is empty");

        // 3. the header: a JSON object of exactly alg, kid and typ, all strings
        JsonNode header = json(decode(bytes, start, dot1), "header");
        checkMembers(header, "the header", HEADER_KEYS);
        for (String k : HEADER_KEYS) {
            if (!header.get(k).isString()) throw malformed("the header's `" + k + "` is not a string");
        }
        String typ = header.get("typ").text;
        String alg = header.get("alg").text;
        String kid = header.get("kid").text;
        // 4. the type (`typ`, `alg`, `kid` and `format` are compared byte for byte)
        if (!typ.equals(TYPE)) throw new Refusal("unsupported-envelope", "the envelope's type is `" + typ + "`, not `" + TYPE + "`");
        // 5. the algorithm: ES256 only
        if (!alg.equals(ALGORITHM)) throw new Refusal("unsupported-algorithm", "the algorithm is `" + alg + "`; only `" + ALGORITHM + "` is accepted");
        // 6. a signature
        if (dot2 + 1 == end) throw new Refusal("signature-missing", "the envelope's signature segment is empty");
        // 7. a pinned key
        TrustedKey key = null;
        for (TrustedKey k : keys) {
            if (k.id().equals(kid)) {
                key = k;
                break;
            }
        }
        // `unpinned-key` (`unknown-key` is a machine document's code)
        if (key == null) throw new Refusal("unpinned-key", "the envelope is signed with key `" + kid + "`, which is not pinned");
        // 8. the signature, over the ASCII bytes header "." payload as they are in the envelope
        byte[] signature = decode(bytes, dot2 + 1, end);
        String problem = verify(key, bytes, start, dot2, signature);
        if (problem != null) throw new Refusal("bad-signature", problem);

        // 9. the payload: a JSON object with a string `format`
        JsonNode payload = json(decode(bytes, dot1 + 1, dot2), "payload");
        if (payload.kind != JsonNode.MAPPING) throw malformed("the payload is not a JSON object but " + payload.shapeName());
        JsonNode format = payload.get("format");
        if (format == null) throw malformed("the payload has no `format`");
        if (!format.isString()) throw malformed("the payload's `format` is not a string");
        // 10. the format
        if (!format.text.equals(FORMAT)) {
            throw new Refusal("unsupported-envelope", "the payload's format is `" + format.text + "`, not `" + FORMAT + "`");
        }
        // 11. exactly the seven members, of their types and within their bounds
        checkMembers(payload, "the payload", PAYLOAD_KEYS);
        JsonNode policyNode = payload.get("policy");
        if (!policyNode.isString() || policyNode.text.isEmpty()) throw malformed("the payload's `policy` is not a non-empty string");
        String name = policyNode.text;
        long serial = integer(payload, "serial", 1, MAX_SERIAL);
        long issuedAt = integer(payload, "issued_at", 0, MAX_TIME);
        long expiresAt = integer(payload, "expires_at", 0, MAX_TIME);
        if (expiresAt <= issuedAt) throw malformed("the payload's `expires_at` (" + expiresAt + ") is not later than its `issued_at` (" + issuedAt + ")");
        JsonNode digestNode = payload.get("digest");
        if (!digestNode.isString() || !isDigest(digestNode.text)) {
            throw malformed("the payload's `digest` is not `sha256:` and 64 lowercase hexadecimal digits");
        }
        String digest = digestNode.text;
        JsonNode machineNode = payload.get("machine");
        if (!machineNode.isString()) throw malformed("the payload's `machine` is not a string (the machine document's text)");
        // 12. the policy expected (names compared as the machine reader compares them: scalar by scalar)
        if (!Text.same(name, policy)) throw new Refusal("wrong-policy", "the envelope is for policy `" + name + "`, not `" + policy + "`");
        if (checkTimes) {
            // 13. signed no later than now, within the tolerance
            if (issuedAt - toleranceMillis > now) {
                throw new Refusal("not-yet-valid", "the envelope is issued at " + issuedAt + ", later than now (" + now + ") and the tolerance ("
                        + toleranceMillis + " ms)");
            }
            // 14. not expired, within the tolerance
            long latest = toleranceMillis > Long.MAX_VALUE - expiresAt ? Long.MAX_VALUE : expiresAt + toleranceMillis;
            if (latest < now) {
                throw new Refusal("expired", "the envelope expired at " + expiresAt + ", before now (" + now + ") and the tolerance ("
                        + toleranceMillis + " ms)");
            }
        }
        // 15. a machine document this runtime accepts
        PolicyMachine machine;
        try {
            machine = PolicyMachine.fromDocument(machineNode.text.getBytes(StandardCharsets.UTF_8));
        } catch (SessionPolicyException e) {
            Diagnostic d = e.diagnostics().get(0);
            throw new Refusal("machine-refused", "the machine document is refused: " + d.code() + ": " + d.message());
        }
        // 16. the machine the payload names
        if (!machine.digest().equals(digest)) {
            throw new Refusal("machine-mismatch", "the machine's digest is " + machine.digest() + ", the payload's " + digest);
        }
        if (!Text.same(machine.name(), name)) {
            throw new Refusal("machine-mismatch", "the machine's name is `" + machine.name() + "`, the payload's policy `" + name + "`");
        }
        // The envelope's bytes exactly as given, white space around included (a copy: the caller's array may change).
        return new SignedMachine(machine, name, serial, issuedAt, expiresAt, digest, key.id(), bytes.clone());
    }

    // ---- the parts of the checks ----

    private static boolean isSpace(byte c) {
        return c == ' ' || c == '\t' || c == '\r' || c == '\n';
    }

    /** The value of a base64url character, or -1. */
    private static int value(int c) {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '-') return 62;
        if (c == '_') return 63;
        return -1;
    }

    /**
     * Step 2 for one segment: only base64url characters (no padding), a length that is not 1 more
     * than a multiple of 4, and the unused low bits of the last character zero.
     */
    private static void checkSegment(byte[] b, int from, int to, String what) throws Refusal {
        for (int i = from; i < to; i++) {
            if (value(b[i] & 0xFF) < 0) {
                int c = b[i] & 0xFF;
                String shown = c >= 0x21 && c < 0x7F ? "`" + (char) c + "`" : String.format("byte 0x%02X", c);
                throw malformed("the " + what + " segment holds " + shown + ", which is not a base64url character (A-Z, a-z, 0-9, -, _; no padding)");
            }
        }
        int n = to - from;
        if (n % 4 == 1) throw malformed("the " + what + " segment is " + n + " characters long, which no base64url text is");
        int unused = n % 4 == 2 ? 0x0F : n % 4 == 3 ? 0x03 : 0;
        if (unused != 0 && (value(b[to - 1] & 0xFF) & unused) != 0) {
            throw malformed("the " + what + " segment's last character has unused bits set: it is not the base64url of any bytes");
        }
    }

    /** The bytes of a segment {@link #checkSegment} accepted. */
    private static byte[] decode(byte[] b, int from, int to) {
        int n = to - from;
        byte[] out = new byte[n * 3 / 4];
        int bits = 0;
        int count = 0;
        int o = 0;
        for (int i = from; i < to; i++) {
            bits = bits << 6 | value(b[i] & 0xFF);
            count += 6;
            if (count >= 8) {
                count -= 8;
                out[o++] = (byte) (bits >> count);
                bits &= (1 << count) - 1;
            }
        }
        return o == out.length ? out : Arrays.copyOf(out, o);
    }

    /**
     * Steps 3 and 9: strict JSON by the machine document's syntax rules, within the envelope's own
     * limits (4 MiB, 64 values, 8 levels); anything else is malformed.
     */
    private static JsonNode json(byte[] bytes, String what) throws Refusal {
        JsonNode root;
        try {
            root = JsonSyntax.parse(bytes, JsonSyntax.Limits.ENVELOPE);
        } catch (SessionPolicyException e) {
            Diagnostic d = e.diagnostics().get(0);
            throw malformed("the " + what + " is not JSON as the reader takes it: " + d.code() + ": " + d.message());
        }
        if (root == null) throw malformed("the " + what + " is empty");
        return root;
    }

    /** An object with exactly {@code names} as members (the reader already refused a key twice). */
    private static void checkMembers(JsonNode n, String what, List<String> names) throws Refusal {
        if (n.kind != JsonNode.MAPPING) throw malformed(what + " is not a JSON object but " + n.shapeName());
        for (JsonNode k : n.keys) {
            boolean known = false;
            for (String name : names) known |= Text.same(name, k.text);
            if (!known) throw malformed(what + " has an unknown member `" + k.text + "`; it has exactly " + String.join(", ", names));
        }
        for (String name : names) {
            if (n.get(name) == null) throw malformed(what + " has no `" + name + "`");
        }
    }

    /** A member that is a JSON number with no fraction or exponent, from {@code min} to {@code max}. */
    private static long integer(JsonNode payload, String key, long min, long max) throws Refusal {
        JsonNode n = payload.get(key);
        if (n.kind != JsonNode.SCALAR || !n.plain || !Text.isInteger(n.text)) {
            throw malformed("the payload's `" + key + "` is not an integer (a JSON number with no fraction or exponent)");
        }
        long v = Text.integerValue(n.text);
        if (v < min || v > max) throw malformed("the payload's `" + key + "` is " + v + ", outside " + min + " to " + max);
        return v;
    }

    private static boolean isDigest(String s) {
        if (s.length() != 71 || !s.startsWith("sha256:")) return false;
        for (int i = 7; i < 71; i++) {
            char c = s.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
        }
        return true;
    }

    /**
     * Step 8: null when {@code signature} (r then s, 32 bytes each) verifies over {@code b[from, to)} with {@code key}, else why
     * not. Package-private for {@code WycheproofTest}.
     */
    static String verify(TrustedKey key, byte[] b, int from, int to, byte[] signature) {
        if (signature.length != 64) return "the signature is " + signature.length + " bytes, not 64 (r then s)";
        BigInteger r = new BigInteger(1, Arrays.copyOfRange(signature, 0, 32));
        BigInteger s = new BigInteger(1, Arrays.copyOfRange(signature, 32, 64));
        if (r.signum() == 0 || s.signum() == 0 || r.compareTo(ORDER) >= 0 || s.compareTo(ORDER) >= 0) {
            return "the signature's r or s is not from 1 to the curve order - 1";
        }
        try {
            Signature verifier = Signature.getInstance("SHA256withECDSA");
            verifier.initVerify(key.publicKey());
            verifier.update(b, from, to - from);
            if (verifier.verify(der(signature))) return null;
            // The JDK refuses a valid signature whose point has an x-coordinate of n or more (then
            // r = x - n, below p - n): only such an r is checked again, in plain arithmetic
            // (P256; Wycheproof tcId 115 and 257, spec/wycheproof).
            if (r.compareTo(P256.P.subtract(P256.N)) < 0) {
                ECPoint q = ((ECPublicKey) key.publicKey()).getW();
                MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
                sha256.update(b, from, to - from);
                if (P256.verify(q.getAffineX(), q.getAffineY(), sha256.digest(), r, s)) return null;
            }
        } catch (GeneralSecurityException | ClassCastException e) {
            return "the signature does not verify: " + e.getMessage();
        }
        return "the signature does not verify with key " + key.id();
    }

    /** The 64-byte r || s signature as the DER SEQUENCE { INTEGER r, INTEGER s } that Signature takes. */
    static byte[] der(byte[] raw) {
        byte[] r = derInteger(raw, 0);
        byte[] s = derInteger(raw, 32);
        byte[] out = new byte[2 + r.length + s.length];
        out[0] = 0x30;
        out[1] = (byte) (r.length + s.length);
        System.arraycopy(r, 0, out, 2, r.length);
        System.arraycopy(s, 0, out, 2 + r.length, s.length);
        return out;
    }

    /** The DER INTEGER of the unsigned big-endian 32 bytes at {@code raw[at]}: no leading zeros, a 0 first when the high bit is set. */
    private static byte[] derInteger(byte[] raw, int at) {
        int i = at;
        while (i < at + 31 && raw[i] == 0) i++;
        int n = at + 32 - i;
        boolean pad = (raw[i] & 0x80) != 0;
        byte[] out = new byte[2 + (pad ? 1 : 0) + n];
        out[0] = 0x02;
        out[1] = (byte) (n + (pad ? 1 : 0));
        System.arraycopy(raw, i, out, pad ? 3 : 2, n);
        return out;
    }

    private static Refusal malformed(String message) {
        return new Refusal("envelope-malformed", message);
    }

    /** A failed check: its code and message (no stack trace: a refusal is an expected result). */
    private static final class Refusal extends Exception {
        private static final long serialVersionUID = 1L;

        final String code;

        Refusal(String code, String message) {
            super(message, null, false, false);
            this.code = code;
        }
    }
}
