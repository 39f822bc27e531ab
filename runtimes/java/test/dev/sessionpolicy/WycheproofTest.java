package dev.sessionpolicy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The envelope's signature check ({@code MachineUpdater.verify}, the JDK's SHA256withECDSA over a key
 * read as a pinned key is) against Project Wycheproof's ECDSA P-256 / SHA-256 vectors for signatures
 * encoded as r || s (IEEE P1363), the encoding of an envelope's signature (docs/envelope.md):
 * spec/wycheproof/ecdsa_secp256r1_sha256_p1363_test.json, every vector. A {@code valid} one must
 * verify, an {@code invalid} one must not; an {@code acceptable} one (the file has none) may do either.
 */
class WycheproofTest {
    static byte[] hex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return out;
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyVectorGetsItsExpectedResult() throws Exception {
        byte[] bytes = Files.readAllBytes(
            VocabularyTest.spec().resolve("wycheproof").resolve("ecdsa_secp256r1_sha256_p1363_test.json"));
        Map<String, Object> suite = (Map<String, Object>) Canonical.fromNode(JsonSyntax.parse(bytes));
        int passed = 0;
        int acceptable = 0;
        List<String> failures = new ArrayList<>();
        for (Object g : (List<Object>) suite.get("testGroups")) {
            Map<String, Object> group = (Map<String, Object>) g;
            assertEquals("SHA-256", group.get("sha"));
            TrustedKey key = TrustedKey.fromDer(hex((String) group.get("publicKeyDer")));
            for (Object v : (List<Object>) group.get("tests")) {
                Map<String, Object> t = (Map<String, Object>) v;
                byte[] msg = hex((String) t.get("msg"));
                boolean verified = MachineUpdater.verify(key, msg, 0, msg.length, hex((String) t.get("sig"))) == null;
                String result = (String) t.get("result");
                if (result.equals("acceptable")) acceptable++;
                else if (verified == result.equals("valid")) passed++;
                else failures.add("tcId " + t.get("tcId") + " (" + t.get("comment") + "): " + result + ", but "
                    + (verified ? "verified" : "refused"));
            }
        }
        System.out.println("wycheproof vectors: " + passed + " passed, " + failures.size() + " failed, " + acceptable + " acceptable");
        assertEquals(Collections.emptyList(), failures);
        long total = ((Number) suite.get("numberOfTests")).longValue();
        assertEquals(total, passed + acceptable);
        assertTrue(total >= 250, "only " + total + " vectors");
    }

    /**
     * {@code P256.verify}, which {@code MachineUpdater.verify} asks only when the JDK refused a signature
     * with a small r, is a whole verifier: every vector of 64 bytes gets its expected result from it too.
     */
    @Test
    @SuppressWarnings("unchecked")
    void thePlainArithmeticVerifierAlone() throws Exception {
        byte[] bytes = Files.readAllBytes(
            VocabularyTest.spec().resolve("wycheproof").resolve("ecdsa_secp256r1_sha256_p1363_test.json"));
        Map<String, Object> suite = (Map<String, Object>) Canonical.fromNode(JsonSyntax.parse(bytes));
        List<String> failures = new ArrayList<>();
        int checked = 0;
        java.security.MessageDigest sha256 = java.security.MessageDigest.getInstance("SHA-256");
        for (Object g : (List<Object>) suite.get("testGroups")) {
            Map<String, Object> group = (Map<String, Object>) g;
            byte[] point = hex((String) group.get("publicKeyDer"));
            java.math.BigInteger x = new java.math.BigInteger(1, java.util.Arrays.copyOfRange(point, 27, 59));
            java.math.BigInteger y = new java.math.BigInteger(1, java.util.Arrays.copyOfRange(point, 59, 91));
            for (Object v : (List<Object>) group.get("tests")) {
                Map<String, Object> t = (Map<String, Object>) v;
                byte[] sig = hex((String) t.get("sig"));
                if (sig.length != 64 || t.get("result").equals("acceptable")) continue;
                checked++;
                boolean verified = P256.verify(x, y, sha256.digest(hex((String) t.get("msg"))),
                    new java.math.BigInteger(1, java.util.Arrays.copyOfRange(sig, 0, 32)),
                    new java.math.BigInteger(1, java.util.Arrays.copyOfRange(sig, 32, 64)));
                if (verified != t.get("result").equals("valid")) failures.add("tcId " + t.get("tcId") + " (" + t.get("comment") + ")");
            }
        }
        assertEquals(Collections.emptyList(), failures);
        assertTrue(checked >= 200, "only " + checked + " vectors of 64 bytes");
    }
}
