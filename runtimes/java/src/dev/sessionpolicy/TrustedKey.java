package dev.sessionpolicy;

import androidx.annotation.NonNull;
import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;
import java.util.Base64;

/**
 * A public key an app pins to verify signed machines (docs/envelope.md, "Keys"): an ECDSA P-256
 * key, read from a PEM {@code PUBLIC KEY} (a SubjectPublicKeyInfo with the point uncompressed,
 * 91 bytes of DER, as {@code openssl pkey -pubout} writes it). Its {@link #id()} is the
 * lowercase hex SHA-256 of those 91 bytes, which an envelope's {@code kid} names. Immutable.
 */
public final class TrustedKey {
    /** The DER of a P-256 SubjectPublicKeyInfo up to the point: id-ecPublicKey, prime256v1, a 66-byte BIT STRING. */
    private static final byte[] P256_SPKI_PREFIX = hex("3059301306072a8648ce3d020106082a8648ce3d030107034200");
    static final int DER_LENGTH = 91;

    /** The curve's prime p, and b of y² = x³ − 3x + b (SEC 2, secp256r1). */
    private static final BigInteger P = new BigInteger("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff", 16);
    private static final BigInteger B = new BigInteger("5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b", 16);

    private static final String BEGIN = "-----BEGIN PUBLIC KEY-----";
    private static final String END = "-----END PUBLIC KEY-----";

    private final String id;
    private final PublicKey key;

    private TrustedKey(String id, PublicKey key) {
        this.id = id;
        this.key = key;
    }

    /**
     * Reads a P-256 public key from PEM, strictly (docs/envelope.md, "Keys"): exactly one block,
     * {@code -----BEGIN PUBLIC KEY-----}, the base64 of the DER (RFC 4648 §4, in lines of any
     * length), {@code -----END PUBLIC KEY-----}, with nothing but white space before and after
     * it. Between the two lines white space is ignored, and the rest must be the one base64 text
     * of the DER: {@code =} padding as its length needs and the unused low bits of its last
     * character zero. White space is what the Swift reader trims (Foundation's
     * {@code whitespacesAndNewlines}: U+0009 to U+000D, U+0020, U+0085 and Unicode's space,
     * line and paragraph separators). Refuses, with {@code invalid-key}, text that is not such a
     * PEM (text around the block, two blocks), and any key but an uncompressed P-256 point on the
     * curve: another curve, RSA, a compressed point, a private key ({@code PRIVATE KEY},
     * {@code EC PRIVATE KEY}).
     *
     * @throws SessionPolicyException {@code invalid-key}
     */
    public static @NonNull TrustedKey fromPem(@NonNull String pem) throws SessionPolicyException {
        int from = 0;
        int to = pem.length();
        while (from < to && Text.isWhitespaceOrNewline(pem.charAt(from))) from++;
        while (to > from && Text.isWhitespaceOrNewline(pem.charAt(to - 1))) to--;
        String text = pem.substring(from, to);
        if (!text.startsWith(BEGIN)) {
            if (text.startsWith("-----BEGIN ")) {
                int end = text.indexOf("-----", 11);
                String label = end < 0 ? "?" : text.substring(11, end);
                throw invalid("the PEM holds a `" + label + "`, not a `PUBLIC KEY`");
            }
            throw invalid("the key is not PEM: it does not start with `" + BEGIN + "`");
        }
        if (!text.endsWith(END) || text.length() < BEGIN.length() + END.length()) {
            throw invalid("the PEM does not end with `" + END + "`");
        }
        String body = text.substring(BEGIN.length(), text.length() - END.length());
        StringBuilder base64 = new StringBuilder(body.length());
        for (int i = 0; i < body.length(); i++) {
            char c = body.charAt(i);
            if (Text.isWhitespaceOrNewline(c)) continue;
            if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' || c == '=')) {
                throw invalid("the PEM's body is not base64 (it holds `" + c + "`)");
            }
            base64.append(c);
        }
        byte[] der;
        try {
            der = Base64.getDecoder().decode(base64.toString());
        } catch (IllegalArgumentException e) {
            throw invalid("the PEM's body is not base64: " + e.getMessage());
        }
        // Strict: the body is the one base64 text of its bytes (padded, unused bits zero).
        if (!Base64.getEncoder().encodeToString(der).equals(base64.toString())) {
            throw invalid("the PEM's body is not canonical base64 (padding or unused bits)");
        }
        return fromDer(der);
    }

    /** A key from its 91 bytes of SubjectPublicKeyInfo DER; see {@link #fromPem(String)}. */
    static TrustedKey fromDer(byte[] der) throws SessionPolicyException {
        if (der.length != DER_LENGTH || !Arrays.equals(Arrays.copyOf(der, P256_SPKI_PREFIX.length), P256_SPKI_PREFIX)) {
            throw invalid("the key is not an ECDSA P-256 public key with an uncompressed point (" + der.length + " bytes of DER; "
                    + DER_LENGTH + " expected, starting with the P-256 SubjectPublicKeyInfo header)");
        }
        if (der[P256_SPKI_PREFIX.length] != 0x04) throw invalid("the key's point is not uncompressed (its first byte is not 0x04)");
        int at = P256_SPKI_PREFIX.length + 1;
        BigInteger x = new BigInteger(1, Arrays.copyOfRange(der, at, at + 32));
        BigInteger y = new BigInteger(1, Arrays.copyOfRange(der, at + 32, at + 64));
        // On the curve: y² = x³ − 3x + b (mod p), x and y below p. Checked here rather than left to
        // the provider, which need not check it when it builds the key.
        BigInteger rhs = x.pow(3).subtract(x.multiply(BigInteger.valueOf(3))).add(B).mod(P);
        if (x.compareTo(P) >= 0 || y.compareTo(P) >= 0 || !y.multiply(y).mod(P).equals(rhs)) {
            throw invalid("the key's point is not on the P-256 curve");
        }
        PublicKey key;
        try {
            key = KeyFactory.getInstance("EC").generatePublic(new X509EncodedKeySpec(der));
        } catch (GeneralSecurityException e) {
            throw invalid("the key is refused by the platform: " + e.getMessage());
        }
        return new TrustedKey(Canonical.sha256Hex(der), key);
    }

    private static SessionPolicyException invalid(String message) {
        return JsonSyntax.error("invalid-key", message, "pin the PEM that `openssl pkey -in KEY -pubout` writes for a P-256 key", 1, 1);
    }

    /** The key id: the lowercase hex SHA-256 of the key's 91 bytes of DER (an envelope's {@code kid}). */
    public @NonNull String id() {
        return id;
    }

    PublicKey publicKey() {
        return key;
    }

    /** Keys are equal when their DER is, that is when their ids are. */
    @Override
    public boolean equals(Object o) {
        return o instanceof TrustedKey && ((TrustedKey) o).id.equals(id);
    }

    @Override
    public int hashCode() {
        return id.hashCode();
    }

    @Override
    public String toString() {
        return "TrustedKey(" + id + ")";
    }

    private static byte[] hex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return out;
    }
}
