package dev.sessionpolicy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The runtime's names against spec/vocabulary.json, in both directions: a name this runtime knows
 * that the file lacks, or one the file has that this runtime lacks, fails with a sentence naming it.
 */
class VocabularyTest {
    static Path spec() {
        return Vectors.dir().toAbsolutePath().getParent();
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> vocabulary() throws Exception {
        byte[] bytes = Files.readAllBytes(spec().resolve("vocabulary.json"));
        return (Map<String, Object>) Canonical.fromNode(JsonSyntax.parse(bytes));
    }

    static List<String> wire(Enum<?>[] values) {
        List<String> out = new ArrayList<>();
        for (Enum<?> v : values) out.add(v.toString());
        return out;
    }

    /** This runtime's names of each set of the file ({@code reasons} are checked apart). */
    static Map<String, List<String>> runtime() {
        Map<String, List<String>> m = new LinkedHashMap<>();
        m.put("attribute_types", Arrays.asList(Attribute.KINDS));
        m.put("auth_modes", wire(AuthMode.values()));
        m.put("comparisons", Arrays.asList(Condition.COMPARISONS));
        m.put("condition_ops", Arrays.asList(Condition.OPS));
        m.put("decisions", wire(Decision.values()));
        m.put("document_codes", MachineReader.REFUSAL_CODES);
        m.put("effects", Arrays.asList(Action.EFFECTS));
        m.put("events", wire(EventKind.values()));
        m.put("facts", Arrays.asList(Condition.FACTS));
        m.put("failure_paths", Arrays.asList(Guard.PATHS));
        m.put("guards", Arrays.asList(Guard.NAMES));
        m.put("integrities", wire(Integrity.values()));
        m.put("keystores", wire(Keystore.values()));
        m.put("networks", wire(Network.values()));
        m.put("notices", wire(Notice.values()));
        m.put("refresh_causes", wire(RefreshFailureCause.values()));
        m.put("scopes", wire(Scope.values()));
        m.put("states", wire(MachineState.values()));
        m.put("switches", Arrays.asList(Guard.SWITCHES));
        return m;
    }

    static String quoted(List<String> names) {
        return names.stream().map(n -> "`" + n + "`").collect(Collectors.joining(", "));
    }

    /** The differences between the runtime's names and the file's set, as sentences. */
    static List<String> differences(String set, List<String> names, List<String> file) {
        List<String> problems = new ArrayList<>();
        List<String> lacking = names.stream().filter(n -> !file.contains(n)).collect(Collectors.toList());
        List<String> missing = file.stream().filter(n -> !names.contains(n)).collect(Collectors.toList());
        if (!lacking.isEmpty()) problems.add(set + ": the Java runtime knows " + quoted(lacking) + ", which spec/vocabulary.json lacks");
        if (!missing.isEmpty()) problems.add(set + ": spec/vocabulary.json has " + quoted(missing) + ", which the Java runtime lacks");
        if (new TreeSet<>(names).size() != names.size()) problems.add(set + ": the Java runtime lists a name twice");
        return problems;
    }

    @Test
    @SuppressWarnings("unchecked")
    void everySetIsSortedAndDistinct() throws Exception {
        for (Map.Entry<String, Object> e : vocabulary().entrySet()) {
            if (e.getKey().startsWith("$")) continue;
            List<String> names = (List<String>) e.getValue();
            List<String> sorted = new ArrayList<>(new TreeSet<>(names));
            assertEquals(sorted, names, e.getKey() + " is not sorted, or holds a name twice");
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void runtimeNamesAreTheVocabulary() throws Exception {
        Map<String, Object> file = vocabulary();
        Set<String> sets = new TreeSet<>(file.keySet());
        sets.removeIf(k -> k.startsWith("$") || k.equals("reasons"));
        Map<String, List<String>> runtime = runtime();
        assertEquals(sets, new TreeSet<>(runtime.keySet()), "the sets the test holds are not the sets of spec/vocabulary.json");
        List<String> problems = new ArrayList<>();
        for (String set : sets) problems.addAll(differences(set, runtime.get(set), (List<String>) file.get(set)));
        assertEquals(Collections.emptyList(), problems, String.join("\n", problems));
    }

    @Test
    void differencesAreReportedBothWays() {
        assertEquals(
            Arrays.asList(
                "notices: the Java runtime knows `a`, which spec/vocabulary.json lacks",
                "notices: spec/vocabulary.json has `c`, which the Java runtime lacks"),
            differences("notices", Arrays.asList("a", "b"), Arrays.asList("b", "c")));
    }

    static String source(String name) throws Exception {
        Path p = spec().getParent().resolve("runtimes/java/src/dev/sessionpolicy").resolve(name);
        return new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
    }

    /** Every kebab-case string literal in the JSON reader and the machine reader is a refusal code. */
    @Test
    void everyCodeTheReaderWritesIsListed() throws Exception {
        Pattern code = Pattern.compile("\"([a-z0-9]+(?:-[a-z0-9]+)+)\"");
        Set<String> unlisted = new TreeSet<>();
        for (String file : Arrays.asList("JsonSyntax.java", "MachineReader.java")) {
            Matcher m = code.matcher(source(file));
            while (m.find()) if (!MachineReader.REFUSAL_CODES.contains(m.group(1))) unlisted.add(m.group(1));
        }
        assertEquals(Collections.emptySet(), unlisted, "codes written but not in MachineReader.REFUSAL_CODES");
    }

    /**
     * The runtime has no list of reasons (a machine's transitions carry theirs) but writes two of its
     * own; those, and every built-in reason of the shipped machines, are in the vocabulary.
     */
    @Test
    @SuppressWarnings("unchecked")
    void reasonsAreInTheVocabulary() throws Exception {
        List<String> own = Arrays.asList("invalid_event", "unexpected_event");
        Matcher m = Pattern.compile("new Verdict\\(Decision\\.[A-Z_]+, \"([a-z_]+)\"").matcher(source("PolicyMachine.java"));
        Set<String> written = new TreeSet<>();
        while (m.find()) written.add(m.group(1));
        assertEquals(new TreeSet<>(own), written);
        Set<String> used = new TreeSet<>(own);
        try (java.util.stream.Stream<Path> files = Files.list(Vectors.dir().resolve("machines"))) {
            for (Path p : files.collect(Collectors.toList())) {
                Map<String, Object> doc = (Map<String, Object>) Canonical.fromNode(JsonSyntax.parse(Files.readAllBytes(p)));
                for (Object t : (List<Object>) doc.get("transitions")) {
                    Map<String, Object> transition = (Map<String, Object>) t;
                    Map<String, Object> g = (Map<String, Object>) transition.get("guard");
                    if ("switched".equals(g.get("kind"))) g = (Map<String, Object>) g.get("inner");
                    // A rule's transitions give the reason the policy's rule names.
                    if ("rule".equals(g.get("kind"))) continue;
                    used.add((String) ((Map<String, Object>) transition.get("action")).get("reason"));
                }
            }
        }
        List<String> reasons = (List<String>) vocabulary().get("reasons");
        used.removeAll(reasons);
        assertTrue(used.isEmpty(), "reasons not in spec/vocabulary.json: " + used);
    }
}
