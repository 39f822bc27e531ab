package dev.sessionpolicy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The generated machine documents (spec/conformance/generated-documents.jsonl): each a shipped
 * machine with JSON Patch operations applied ({@code add}, {@code remove}, {@code replace},
 * {@code copy}), its digest written anew when the line says {@code fix}, written canonically and
 * loaded: refused with the Swift reader's code, or accepted with its digest.
 */
class GeneratedDocumentsTest {
    static List<String> tokens(String pointer) {
        if (pointer.isEmpty()) return Collections.emptyList();
        List<String> out = new ArrayList<>();
        for (String t : pointer.substring(1).split("/", -1)) out.add(t.replace("~1", "/").replace("~0", "~"));
        return out;
    }

    @SuppressWarnings("unchecked")
    static Object at(Object doc, List<String> path) {
        Object v = doc;
        for (String t : path) {
            if (v instanceof List) v = ((List<Object>) v).get(Integer.parseInt(t));
            else if (v instanceof Map && ((Map<String, Object>) v).containsKey(t)) v = ((Map<String, Object>) v).get(t);
            else throw new IllegalArgumentException("no value at " + path);
        }
        return v;
    }

    /** A deep copy of a value of {@code Canonical.fromNode}. */
    @SuppressWarnings("unchecked")
    static Object copy(Object v) {
        if (v instanceof List) {
            List<Object> out = new ArrayList<>();
            for (Object x : (List<Object>) v) out.add(copy(x));
            return out;
        }
        if (v instanceof Map) {
            Map<String, Object> out = new java.util.LinkedHashMap<>();
            for (Map.Entry<String, Object> e : ((Map<String, Object>) v).entrySet()) out.put(e.getKey(), copy(e.getValue()));
            return out;
        }
        return v;
    }

    /** {@code doc} with the operations {@code ops} applied. */
    @SuppressWarnings("unchecked")
    static Object apply(Object doc, List<Object> ops) {
        for (Object o : ops) {
            Map<String, Object> op = (Map<String, Object>) o;
            String name = (String) op.get("op");
            List<String> path = tokens((String) op.get("path"));
            Object value = name.equals("copy") ? copy(at(doc, tokens((String) op.get("from")))) : copy(op.get("value"));
            if (path.isEmpty()) {
                doc = value;
                continue;
            }
            Object parent = at(doc, path.subList(0, path.size() - 1));
            String key = path.get(path.size() - 1);
            if (parent instanceof List) {
                List<Object> list = (List<Object>) parent;
                int i = key.equals("-") ? list.size() : Integer.parseInt(key);
                if (name.equals("remove")) list.remove(i);
                else if (name.equals("replace")) list.set(i, value);
                else list.add(i, value);
            } else if (name.equals("remove")) {
                ((Map<String, Object>) parent).remove(key);
            } else {
                ((Map<String, Object>) parent).put(key, value);
            }
        }
        return doc;
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyGeneratedDocumentIsReadAsTheSwiftEngineReadsIt() throws Exception {
        Path dir = Vectors.dir();
        Map<String, JsonNode> bases = new HashMap<>();
        List<String> failures = new ArrayList<>();
        int passed = 0;
        for (String text : Files.readAllLines(dir.resolve("generated-documents.jsonl"), StandardCharsets.UTF_8)) {
            if (text.isEmpty()) continue;
            Map<String, Object> line = (Map<String, Object>) Canonical.fromNode(JsonSyntax.parse(text.getBytes(StandardCharsets.UTF_8)));
            String machine = (String) line.get("machine");
            if (!bases.containsKey(machine)) {
                bases.put(machine, JsonSyntax.parse(Files.readAllBytes(dir.resolve("machines").resolve(machine + ".json"))));
            }
            Object doc = apply(Canonical.fromNode(bases.get(machine)), (List<Object>) line.get("ops"));
            if ("fix".equals(line.get("digest")) && doc instanceof Map && ((Map<String, Object>) doc).containsKey("digest")) {
                ((Map<String, Object>) doc).put("digest", Canonical.digest((Map<String, Object>) doc));
            }
            String got;
            try {
                got = "accepted " + PolicyMachine.fromDocument(Canonical.write(doc)).digest();
            } catch (SessionPolicyException e) {
                got = e.code();
            }
            String want = line.containsKey("refuse") ? (String) line.get("refuse")
                : line.containsKey("accept") ? "accepted " + line.get("accept") : "no result recorded";
            if (got.equals(want)) passed++;
            else failures.add(line.get("id") + ": got " + got + ", want " + want);
        }
        System.out.println("generated documents: " + passed + " passed, " + failures.size() + " failed");
        assertEquals(Collections.emptyList(), failures.subList(0, Math.min(20, failures.size())),
            failures.size() + " generated documents read otherwise than by the Swift engine");
        assertTrue(passed >= 500, "generated-documents.jsonl holds only " + passed + " documents");
    }
}
