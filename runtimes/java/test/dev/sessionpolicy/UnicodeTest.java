package dev.sessionpolicy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Names are compared scalar by scalar (docs/machine-format.md, "String equality"), so no answer
 * depends on the Unicode tables of the JVM (Unicode 10 on JDK 11, 13 on JDK 17, the device's
 * ICU on Android). The conformance vectors show the answers on this JVM; these tests show that
 * the library cannot reach a table that would make them differ on another: none of its classes
 * refers to {@code java.text} (the Normalizer) or to a Unicode property of {@code Character}.
 */
class UnicodeTest {
    /** The library's compiled classes (the jar or the folder the tests run it from). */
    static List<byte[]> libraryClasses() throws Exception {
        Path where = Paths.get(PolicyMachine.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<byte[]> out = new ArrayList<>();
        if (Files.isDirectory(where)) {
            try (Stream<Path> files = Files.walk(where)) {
                for (Path p : files.filter(f -> f.toString().endsWith(".class")).collect(Collectors.toList())) {
                    out.add(Files.readAllBytes(p));
                }
            }
        } else {
            try (java.util.zip.ZipFile jar = new java.util.zip.ZipFile(where.toFile())) {
                for (java.util.zip.ZipEntry e : java.util.Collections.list(jar.entries())) {
                    if (!e.getName().endsWith(".class")) continue;
                    out.add(jar.getInputStream(e).readAllBytes());
                }
            }
        }
        return out;
    }

    /** Whether {@code haystack} holds the ASCII bytes of {@code needle} (a constant-pool entry). */
    static boolean holds(byte[] haystack, String needle) {
        byte[] n = needle.getBytes(StandardCharsets.ISO_8859_1);
        outer:
        for (int i = 0; i + n.length <= haystack.length; i++) {
            for (int j = 0; j < n.length; j++) {
                if (haystack[i + j] != n[j]) continue outer;
            }
            return true;
        }
        return false;
    }

    /** Whether {@code c} holds {@code name} as a whole constant (tag 1, length, the bytes). */
    static boolean holdsConstant(byte[] c, String name) {
        byte[] n = name.getBytes(StandardCharsets.US_ASCII);
        byte[] entry = new byte[n.length + 3];
        entry[0] = 1;
        entry[1] = (byte) (n.length >> 8);
        entry[2] = (byte) n.length;
        System.arraycopy(n, 0, entry, 3, n.length);
        return holds(c, new String(entry, StandardCharsets.ISO_8859_1));
    }

    @Test
    void noClassReadsTheJvmsUnicodeTables() throws Exception {
        List<byte[]> classes = libraryClasses();
        assertTrue(classes.size() > 10, "found " + classes.size() + " classes of the library");
        // Method names of java.lang.Character whose answer is the JVM's Unicode version.
        String[] properties = {"getType", "isLetter", "isDigit", "isWhitespace", "isSpaceChar", "isAlphabetic",
            "isUpperCase", "isLowerCase", "toUpperCase", "toLowerCase", "getNumericValue", "isIdeographic", "isDefined"};
        for (byte[] c : classes) {
            assertFalse(holds(c, "java/text/"), "a class refers to java.text (the Normalizer, a Collator)");
            assertFalse(holds(c, "java/util/regex"), "a class uses regular expressions (\\p{...} reads Unicode tables)");
            for (String p : properties) {
                assertFalse(holdsConstant(c, p), "a class refers to a method `" + p + "` (Character's Unicode properties)");
            }
        }
    }

    static final String STATE = "{\"auth_mode\":\"none\",\"biometric_locked\":false,\"device\":\"phone-1\","
            + "\"failures\":{\"biometric\":0,\"idp_login\":0,\"offline_login\":0},\"highest_time\":\"2026-03-01T09:00:00Z\","
            + "\"last_activity\":\"2026-03-01T09:00:00Z\",\"last_idp_login\":\"2026-03-01T09:00:00Z\","
            + "\"last_online\":\"2026-03-01T09:00:00Z\",\"read_only\":false,\"state\":\"suspended\",\"user\":\"%s\"}";
    static final String LAUNCH = "{\"type\":\"launch\",\"time\":\"2026-03-01T10:00:00Z\",\"network\":\"online\","
            + "\"user\":\"%s\",\"device\":{\"id\":\"phone-1\"}%s}";

    /** The reproducer of issue 32: U+1AC1 (Unicode 14) and a cedilla, in both orders. */
    @Test
    void aUserWithAMarkOfUnicode14InAnotherOrderIsAnotherUser() throws Exception {
        PolicyMachine spendiq = PolicyMachine.fromDocument(Vectors.machine("spendiq"));
        SessionState s = SessionState.fromJson(String.format(STATE, "e\\u0327\\u1ac1"));
        Outcome same = spendiq.evaluate(s, Event.fromJson(String.format(LAUNCH, "e\\u0327\\u1ac1", "")));
        assertEquals(Decision.ALLOW, same.decision(), same.toJson());
        Outcome other = spendiq.evaluate(s, Event.fromJson(String.format(LAUNCH, "e\\u1ac1\\u0327", "")));
        assertEquals(Decision.WIPE, other.decision(), other.toJson());
        assertEquals("different_user", other.reason());
    }

    @Test
    void twoSpellingsOfOneKeyAreTwoKeysAndOneSpellingTwiceIsADuplicate() throws Exception {
        Event e = Event.fromJson(String.format(LAUNCH, "alice", ",\"attributes\":{\"\\u00e9\":\"1\",\"e\\u0301\":\"2\"}"));
        assertEquals(2, e.attributes().size());
        SessionPolicyException x = assertThrows(SessionPolicyException.class,
                () -> Event.fromJson(String.format(LAUNCH, "alice", ",\"attributes\":{\"\\u00e9\":\"1\",\"\u00e9\":\"2\"}")));
        assertEquals("duplicate-key", x.diagnostics().get(0).code());
    }

    @Test
    void textComparesScalarsAndKnowsAFixedListOfWhiteSpace() {
        assertFalse(Text.same("zo\u00eb", "zoe\u0308"));
        assertFalse(Text.same("\u212aate", "Kate"));
        assertFalse(Text.same("\ud55c", "\u1112\u1161\u11ab"));
        assertTrue(Text.same("a\ud803\udefd\u0301", "a\ud803\udefd\u0301"));
        assertFalse(Text.isWhitespaceOrNewline(0x180E)); // Zs before Unicode 6.3, Cf since
        assertTrue(Text.isWhitespaceOrNewline(0x3000));
        assertTrue(Text.isWhitespaceOrNewline(0x85));
        assertFalse(Text.isName(" alice"));
        assertTrue(Text.isName("\u180ealice"));
    }
}
