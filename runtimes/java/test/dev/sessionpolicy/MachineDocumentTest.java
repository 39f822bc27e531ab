package dev.sessionpolicy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** Reading machine documents: every shipped one reads back to its bytes; every kind of damage is refused. */
class MachineDocumentTest {
    static String spendiq() throws Exception {
        return new String(Vectors.machine("spendiq"), StandardCharsets.UTF_8);
    }

    static String refusal(String document) {
        SessionPolicyException e = assertThrows(SessionPolicyException.class, () -> PolicyMachine.fromDocument(document));
        return e.code();
    }

    /** The document with {@code change} applied to its value and the digest recomputed, canonical. */
    @SuppressWarnings("unchecked")
    static String edited(String document, Consumer<Map<String, Object>> change) throws Exception {
        Map<String, Object> m = (Map<String, Object>) Canonical.fromNode(JsonSyntax.parse(document.getBytes(StandardCharsets.UTF_8)));
        change.accept(m);
        m.put("digest", Canonical.digest(m));
        return Canonical.write(m);
    }

    @SuppressWarnings("unchecked")
    static List<Object> transitions(Map<String, Object> m) {
        return (List<Object>) m.get("transitions");
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> transition(Map<String, Object> m, int i) {
        return (Map<String, Object>) transitions(m).get(i);
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> at(Map<String, Object> m, String key) {
        return (Map<String, Object>) m.get(key);
    }

    @Test
    void everyShippedDocumentReadsAndWritesBackToItsBytes() throws Exception {
        for (Path p : Vectors.machines()) {
            String text = new String(java.nio.file.Files.readAllBytes(p), StandardCharsets.UTF_8);
            PolicyMachine m = PolicyMachine.fromDocument(text);
            assertEquals(text.substring(0, text.length() - 1), m.document(), p.toString());
            assertTrue(text.contains("\"digest\":\"" + m.digest() + "\""), p.toString());
            assertTrue(m.digest().matches("sha256:[0-9a-f]{64}"));
        }
    }

    @Test
    void whitespaceIsNotPartOfTheDigest() throws Exception {
        String doc = spendiq();
        String spaced = "\uFEFF \n" + doc.replace(",\"name\":", ",\r\n  \"name\" : ").replace("\"states\":[", "\"states\": [ ");
        assertEquals(PolicyMachine.fromDocument(doc).digest(), PolicyMachine.fromDocument(spaced).digest());
    }

    @Test
    void aTamperedByteIsADigestMismatch() throws Exception {
        String doc = spendiq();
        assertEquals("digest-mismatch", refusal(doc.replace("signed in with the identity provider", "signed in with the identity provideR")));
        assertEquals("digest-mismatch", refusal(doc.replaceFirst("\"limit_seconds\":604800", "\"limit_seconds\":604801")));
        assertEquals("digest-mismatch", refusal(doc.replaceFirst("sha256:[0-9a-f]", "sha256:x")));
    }

    @Test
    void anotherFormatIsRefusedFirst() throws Exception {
        String doc = spendiq();
        assertEquals("unsupported-format", refusal(doc.replace("sessionpolicy-machine/1", "sessionpolicy-machine/2")));
        // Checked before the members and the digest.
        assertEquals("unsupported-format", refusal("{\"format\":\"sessionpolicy-machine/0\",\"extra\":1}"));
        assertEquals("missing-key", refusal("{\"name\":\"x\"}"));
        assertEquals("wrong-type", refusal("[1]"));
    }

    @Test
    void membersMissingOrUnknownAreRefused() throws Exception {
        String doc = spendiq();
        assertEquals("missing-key", refusal(doc.replace("\"reveal_refusal\":false,", "")));
        assertEquals("unknown-key", refusal(doc.replace("\"reveal_refusal\":false,", "\"reveal_refusal\":false,\"signature\":\"x\",")));
        assertEquals("unknown-key", refusal(edited(doc, m -> transition(m, 0).put("weight", 1L))));
        assertEquals("missing-key", refusal(edited(doc, m -> at(transition(m, 0), "action").remove("notices"))));
        assertEquals("unknown-key", refusal(edited(doc, m -> at(transition(m, 0), "guard").put("limit_seconds", 5L))));
    }

    @Test
    void wrongTypesAndUnknownNamesAreRefused() throws Exception {
        String doc = spendiq();
        assertEquals("invalid-value", refusal(edited(doc, m -> at(transition(m, 0), "action").put("target", "flying"))));
        assertEquals("invalid-value", refusal(edited(doc, m -> at(transition(m, 0), "action").put("decision", "maybe"))));
        assertEquals("invalid-value", refusal(edited(doc, m -> at(transition(m, 0), "guard").put("kind", "moon_phase"))));
        assertEquals("invalid-value", refusal(edited(doc, m -> at(transition(m, 0), "action").put("effects", list("teleport")))));
        assertEquals("wrong-type", refusal(edited(doc, m -> m.put("reveal_refusal", "false"))));
        assertEquals("wrong-type", refusal(edited(doc, m -> transition(m, 0).put("id", "0"))));
        assertEquals("invalid-value", refusal(doc.replaceFirst("\"limit_seconds\":604800", "\"limit_seconds\":604800.0")));
        assertEquals("invalid-value", refusal(edited(doc, m -> {
            for (Object t : transitions(m)) {
                Map<String, Object> g = at(castMap(t), "guard");
                if (g.containsKey("limit_seconds")) {
                    g.put("limit_seconds", -1L);
                    return;
                }
            }
        })));
    }

    @Test
    void aMachineItCannotRunAsWrittenIsInconsistent() throws Exception {
        String doc = spendiq();
        // An unknown or reordered state or event.
        assertEquals("inconsistent-machine", refusal(edited(doc, m -> Collections.swap(castList(m.get("states")), 0, 1))));
        assertEquals("inconsistent-machine", refusal(edited(doc, m -> castList(m.get("events")).add("reboot"))));
        // An id out of place.
        assertEquals("inconsistent-machine", refusal(edited(doc, m -> transition(m, 3).put("id", 4L))));
        // Groups out of order (ids renumbered, so only the order is wrong).
        assertEquals("inconsistent-machine", refusal(edited(doc, m -> {
            List<Object> ts = transitions(m);
            Object last = ts.remove(ts.size() - 1);
            ts.add(0, last);
            for (int i = 0; i < ts.size(); i++) castMap(ts.get(i)).put("id", (long) i);
        })));
        // A group without a final `always`.
        assertEquals("inconsistent-machine", refusal(edited(doc, m -> {
            for (Object t : transitions(m)) {
                Map<String, Object> g = at(castMap(t), "guard");
                if (g.get("kind").equals("always")) {
                    g.put("kind", "device_compromised");
                    return;
                }
            }
        })));
        // A rule or an attribute that does not exist.
        assertEquals("inconsistent-machine", refusal(edited(doc, m -> {
            Map<String, Object> g = at(transition(m, 0), "guard");
            g.clear();
            g.put("kind", "rule");
            g.put("rule", 0L);
        })));
        String marketsharp = new String(Vectors.machine("i360-marketsharp"), StandardCharsets.UTF_8);
        assertEquals("inconsistent-machine", refusal(edited(marketsharp, m -> castList(m.get("attributes")).clear())));
        // Members it does not keep as written: a repeated effect, a lever without a place.
        assertEquals("inconsistent-machine", refusal(edited(doc, m -> {
            Map<String, Object> a = at(transition(m, 0), "action");
            List<Object> fx = castList(a.get("effects"));
            fx.add(fx.get(0));
        })));
        assertEquals("inconsistent-machine", refusal(edited(doc, m -> at(m, "levers").put("session.idle", null))));
        // A switched guard that holds another.
        assertEquals("inconsistent-machine", refusal(edited(doc, m -> {
            for (Object t : transitions(m)) {
                Map<String, Object> g = at(castMap(t), "guard");
                if (g.get("kind").equals("switched")) {
                    Map<String, Object> copy = new java.util.LinkedHashMap<>(g);
                    g.put("inner", copy);
                    return;
                }
            }
        })));
    }

    @Test
    void textThatIsNotJsonIsRefused() throws Exception {
        String doc = spendiq();
        assertEquals("invalid-json", refusal(doc.substring(0, doc.length() / 2)));
        assertEquals("invalid-json", refusal(doc.replace("\"states\":[", "\"states\":[,")));
        assertEquals("empty-document", refusal(" \n"));
        assertEquals("duplicate-key", refusal(doc.replace("\"reveal_refusal\":false,", "\"reveal_refusal\":false,\"reveal_refusal\":false,")));
        assertEquals("invalid-utf8", new SessionPolicyExceptionProbe(new byte[] {'{', '"', (byte) 0xC3, '"', ':', '1', '}'}).code);
    }

    /** Reads raw bytes and keeps the refusal's code. */
    static final class SessionPolicyExceptionProbe {
        final String code;

        SessionPolicyExceptionProbe(byte[] bytes) {
            String c = null;
            try {
                PolicyMachine.fromDocument(bytes);
            } catch (SessionPolicyException e) {
                c = e.code();
            }
            code = c;
        }
    }

    static List<Object> list(Object... items) {
        List<Object> l = new ArrayList<>();
        Collections.addAll(l, items);
        return l;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> castMap(Object o) {
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    static List<Object> castList(Object o) {
        return (List<Object>) o;
    }
}
