package dev.sessionpolicy;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The envelope vectors (spec/conformance/README.md): every line of {@code envelopes.jsonl}
 * offered (or restored) to a {@link MachineUpdater} built with its keys, policy and tolerance,
 * after the envelope its {@code after} names, with the result compared to {@code want}; and
 * every line of {@code keys.jsonl} read by {@link TrustedKey#fromPem(String)}, accepted with its
 * key id or refused with its code. Prints {@code envelope vectors: N passed, N failed} and, with
 * {@code -Denvelope.summary=FILE}, writes the counts there for test.sh.
 */
class EnvelopeConformanceTest {
    static final AtomicInteger PASSED = new AtomicInteger();
    static final AtomicInteger FAILED = new AtomicInteger();

    static List<Map<String, Object>> read(String file) throws IOException {
        Path path = Vectors.dir().resolve(file);
        if (!Files.isRegularFile(path)) {
            FAILED.incrementAndGet();
            fail(path + " is missing: the envelope vectors are written by the Swift engine (spec/conformance/README.md)");
        }
        List<Map<String, Object>> out = new ArrayList<>();
        for (String line : Files.readAllLines(path, StandardCharsets.UTF_8)) {
            if (!line.isEmpty()) out.add(Json.object(line));
        }
        return out;
    }

    @TestFactory
    Stream<DynamicTest> everyEnvelopeVector() throws IOException {
        List<Map<String, Object>> vectors = read("envelopes.jsonl");
        Map<String, Map<String, Object>> byId = new HashMap<>();
        List<DynamicTest> tests = new ArrayList<>();
        for (Map<String, Object> v : vectors) {
            String id = (String) v.get("id");
            byId.put(id, v);
            tests.add(DynamicTest.dynamicTest(id, () -> count(check(v, byId))));
        }
        if (vectors.isEmpty()) {
            FAILED.incrementAndGet();
            fail("envelopes.jsonl holds no vector");
        }
        return tests.stream();
    }

    @TestFactory
    Stream<DynamicTest> everyKeyVector() throws IOException {
        List<DynamicTest> tests = new ArrayList<>();
        for (Map<String, Object> v : read("keys.jsonl")) {
            tests.add(DynamicTest.dynamicTest((String) v.get("id"), () -> count(checkKey(v))));
        }
        if (tests.isEmpty()) {
            FAILED.incrementAndGet();
            fail("keys.jsonl holds no vector");
        }
        return tests.stream();
    }

    static void count(String problem) {
        if (problem == null) {
            PASSED.incrementAndGet();
        } else {
            FAILED.incrementAndGet();
            fail(problem);
        }
    }

    /** Null when the envelope vector passes, else what went wrong. */
    @SuppressWarnings("unchecked")
    static String check(Map<String, Object> v, Map<String, Map<String, Object>> byId) throws Exception {
        List<TrustedKey> keys = new ArrayList<>();
        for (Object name : (List<Object>) v.get("keys")) {
            keys.add(TrustedKey.fromPem(new String(Files.readAllBytes(Vectors.dir().resolve("keys").resolve(name + ".pub.pem")),
                    StandardCharsets.UTF_8)));
        }
        long now = ((Number) v.get("now")).longValue();
        MachineUpdater updater = new MachineUpdater((String) v.get("policy"), keys, ((Number) v.get("tolerance")).longValue());
        // The chain of envelopes offered first, earliest first: each must be installed.
        List<Map<String, Object>> before = new ArrayList<>();
        for (Object after = v.get("after"); after != null; after = byId.get(after).get("after")) {
            if (!byId.containsKey(after)) return "`after` names `" + after + "`, which is not an earlier line";
            if (before.size() > 100) return "`after` loops";
            before.add(0, byId.get(after));
        }
        for (Map<String, Object> earlier : before) {
            UpdateResult r = updater.offer(bytes(earlier), now);
            if (r.kind() != UpdateResult.Kind.INSTALLED) return "the envelope of `" + earlier.get("id") + "` offered first is not installed: " + r;
        }
        SignedMachine held = updater.current();
        boolean restore = Boolean.TRUE.equals(v.get("restore"));
        UpdateResult got = restore ? updater.restore(bytes(v)) : updater.offer(bytes(v), now);
        Map<String, Object> want = (Map<String, Object>) v.get("want");
        String result = (String) want.get("result");
        String wanted = Json.write(want);
        switch (result) {
            case "installed": {
                SignedMachine m = got.machine();
                if (got.kind() != UpdateResult.Kind.INSTALLED || m == null) return "want " + wanted + ", got " + got;
                if (m.serial() != ((Number) want.get("serial")).longValue() || !m.digest().equals(want.get("digest"))) {
                    return "want " + wanted + ", got serial " + m.serial() + " digest " + m.digest();
                }
                if (updater.current() != m) return "installed, but current() is not the machine installed";
                if (!m.machine().digest().equals(m.digest())) return "the machine's digest is not the envelope's";
                return null;
            }
            case "unchanged":
                if (got.kind() != UpdateResult.Kind.UNCHANGED) return "want " + wanted + ", got " + got;
                break;
            case "refused":
                if (got.kind() != UpdateResult.Kind.REFUSED || !want.get("code").equals(got.code())) return "want " + wanted + ", got " + got;
                break;
            default:
                return "malformed vector: result `" + result + "`";
        }
        if (updater.current() != held) return "the machine held changed on " + got;
        return null;
    }

    static byte[] bytes(Map<String, Object> vector) {
        return ((String) vector.get("envelope")).getBytes(StandardCharsets.UTF_8);
    }

    /** Null when the key vector passes, else what went wrong. */
    static String checkKey(Map<String, Object> v) {
        String refuse = (String) v.get("refuse");
        String keyId = (String) v.get("key_id");
        if ((refuse == null) == (keyId == null)) return "malformed vector: one of `refuse` and `key_id`";
        try {
            TrustedKey k = TrustedKey.fromPem((String) v.get("pem"));
            if (refuse != null) return "want refusal `" + refuse + "`, got key " + k.id();
            return k.id().equals(keyId) ? null : "want key id " + keyId + ", got " + k.id();
        } catch (SessionPolicyException e) {
            if (refuse != null && refuse.equals(e.code())) return null;
            return (refuse != null ? "want refusal `" + refuse + "`" : "want key id " + keyId) + ", got refusal `" + e.code() + "`: " + e.getMessage();
        }
    }

    @AfterAll
    static void summary() throws IOException {
        String line = PASSED.get() + " passed, " + FAILED.get() + " failed";
        String file = System.getProperty("envelope.summary");
        if (file != null && !file.isEmpty()) Files.write(Paths.get(file), (line + "\n").getBytes(StandardCharsets.UTF_8));
        System.out.println("envelope vectors: " + line);
    }

    /**
     * A small JSON reader for the vector files (the runtime's strict reader stops at 1 MiB, and a
     * vector line may be longer): objects (members in order), arrays, strings, integers as
     * {@link Long}, other numbers as {@link Double}, booleans and null.
     */
    static final class Json {
        private final String s;
        private int i;

        private Json(String s) {
            this.s = s;
        }

        @SuppressWarnings("unchecked")
        static Map<String, Object> object(String text) {
            Json j = new Json(text);
            Object v = j.value();
            j.space();
            if (j.i != text.length() || !(v instanceof Map)) throw new IllegalArgumentException("not one JSON object: " + text);
            return (Map<String, Object>) v;
        }

        private void space() {
            while (i < s.length() && (s.charAt(i) == ' ' || s.charAt(i) == '\t' || s.charAt(i) == '\n' || s.charAt(i) == '\r')) i++;
        }

        private Object value() {
            space();
            char c = s.charAt(i);
            if (c == '{') {
                i++;
                Map<String, Object> m = new LinkedHashMap<>();
                space();
                if (s.charAt(i) == '}') {
                    i++;
                    return m;
                }
                while (true) {
                    space();
                    String k = string();
                    space();
                    expect(':');
                    m.put(k, value());
                    space();
                    if (s.charAt(i++) == '}') return m;
                }
            }
            if (c == '[') {
                i++;
                List<Object> l = new ArrayList<>();
                space();
                if (s.charAt(i) == ']') {
                    i++;
                    return l;
                }
                while (true) {
                    l.add(value());
                    space();
                    if (s.charAt(i++) == ']') return l;
                }
            }
            if (c == '"') return string();
            if (s.startsWith("true", i)) {
                i += 4;
                return Boolean.TRUE;
            }
            if (s.startsWith("false", i)) {
                i += 5;
                return Boolean.FALSE;
            }
            if (s.startsWith("null", i)) {
                i += 4;
                return null;
            }
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
            String n = s.substring(start, i);
            if (n.isEmpty()) throw new IllegalArgumentException("unexpected `" + c + "` at " + i);
            return n.matches("-?[0-9]+") ? (Object) Long.valueOf(n) : (Object) Double.valueOf(n);
        }

        private void expect(char c) {
            if (s.charAt(i) != c) throw new IllegalArgumentException("expected `" + c + "` at " + i);
            i++;
        }

        private String string() {
            expect('"');
            StringBuilder sb = new StringBuilder();
            while (true) {
                char c = s.charAt(i++);
                if (c == '"') return sb.toString();
                if (c != '\\') {
                    sb.append(c);
                    continue;
                }
                char e = s.charAt(i++);
                switch (e) {
                    case 'b': sb.append('\b'); break;
                    case 'f': sb.append('\f'); break;
                    case 'n': sb.append('\n'); break;
                    case 'r': sb.append('\r'); break;
                    case 't': sb.append('\t'); break;
                    case 'u':
                        sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                        break;
                    default: sb.append(e);
                }
            }
        }

        /** A value written back compactly, for messages. */
        @SuppressWarnings("unchecked")
        static String write(Object v) {
            if (v instanceof Map) {
                StringBuilder sb = new StringBuilder("{");
                for (Map.Entry<String, Object> e : ((Map<String, Object>) v).entrySet()) {
                    if (sb.length() > 1) sb.append(',');
                    sb.append('"').append(e.getKey()).append("\":").append(write(e.getValue()));
                }
                return sb.append('}').toString();
            }
            return v instanceof String ? "\"" + v + "\"" : String.valueOf(v);
        }
    }
}
