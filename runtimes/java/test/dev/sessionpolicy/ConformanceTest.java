package dev.sessionpolicy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The conformance suite (spec/conformance/README.md): for every machine and every vector,
 * read the state and the event, evaluate, and compare the outcome's JSON with the vector's
 * {@code want} bytes exactly, or check that reading is refused with the vector's code.
 */
class ConformanceTest {
    static final AtomicInteger PASSED = new AtomicInteger();
    static final AtomicInteger FAILED = new AtomicInteger();

    @TestFactory
    Stream<DynamicTest> everyVectorOfEveryMachine() throws IOException {
        List<Path> machines = Vectors.machines();
        assertTrue(machines.size() >= 7, "the shipped machines are missing: " + machines);
        return machines.stream().map(path -> {
            String policy = path.getFileName().toString().replace(".json", "");
            return DynamicTest.dynamicTest(policy, () -> run(policy));
        });
    }

    static void run(String policy) throws Exception {
        PolicyMachine machine = PolicyMachine.fromDocument(Vectors.machine(policy));
        assertEquals(policy, machine.name());
        List<String> failures = new ArrayList<>();
        int passed = 0;
        List<String> lines = Vectors.lines(policy);
        for (String line : lines) {
            String id = Vectors.text(Vectors.member(line, "id"));
            String result = check(machine, line);
            if (result == null) {
                passed++;
            } else {
                failures.add(id + ": " + result);
            }
        }
        PASSED.addAndGet(passed);
        FAILED.addAndGet(failures.size());
        if (!failures.isEmpty()) {
            fail(policy + ": " + failures.size() + " of " + lines.size() + " vectors failed; first: \n  "
                    + String.join("\n  ", failures.subList(0, Math.min(5, failures.size()))));
        }
        assertTrue(passed > 900, policy + ": only " + passed + " vectors");
    }

    /** spec/conformance/documents.jsonl: each machine document refused with its code, or accepted with its digest. */
    @TestFactory
    Stream<DynamicTest> everyDocumentVector() throws IOException {
        List<DynamicTest> tests = new ArrayList<>();
        for (String line : Files.readAllLines(Vectors.dir().resolve("documents.jsonl"), StandardCharsets.UTF_8)) {
            if (line.isEmpty()) continue;
            tests.add(DynamicTest.dynamicTest(Vectors.text(Vectors.member(line, "id")), () -> {
                JsonNode v = JsonSyntax.parse(line.getBytes(StandardCharsets.UTF_8));
                String refuse = v.get("refuse") == null ? null : v.get("refuse").text;
                String want = refuse != null ? refuse : "accepted " + v.get("accept").text;
                String got;
                try {
                    got = "accepted " + PolicyMachine.fromDocument(v.get("document").text).digest();
                } catch (SessionPolicyException e) {
                    got = e.code();
                }
                if (got.equals(want)) {
                    PASSED.incrementAndGet();
                } else {
                    FAILED.incrementAndGet();
                    fail("want " + want + ", got " + got);
                }
            }));
        }
        assertTrue(tests.size() >= 30, "documents.jsonl holds only " + tests.size() + " vectors");
        return tests.stream();
    }

    /** Null when the vector passes, else what went wrong. */
    static String check(PolicyMachine machine, String line) {
        String stateJson = Vectors.member(line, "state");
        String eventJson = Vectors.member(line, "event");
        String refuse = Vectors.text(Vectors.member(line, "refuse"));
        String want = Vectors.member(line, "want");
        if (stateJson == null || eventJson == null || (refuse == null) == (want == null)) return "malformed vector";
        if (refuse != null) {
            try {
                SessionState.fromJson(stateJson);
                Event.fromJson(eventJson);
                return "expected refusal `" + refuse + "`, read both";
            } catch (SessionPolicyException e) {
                return e.code().equals(refuse) ? null : "expected refusal `" + refuse + "`, got `" + e.code() + "`: " + e.getMessage();
            }
        }
        try {
            SessionState state = SessionState.fromJson(stateJson);
            Event event = Event.fromJson(eventJson);
            // The state and event write back to the bytes they were read from.
            if (!state.toJson().equals(stateJson)) return "state writes back as " + state.toJson();
            if (!event.toJson().equals(eventJson)) return "event writes back as " + event.toJson();
            String got = machine.evaluate(state, event).toJson();
            if (!got.equals(want)) return "\n    want " + want + "\n    got  " + got;
            // The in-place form decides the same, and leaves the same state.
            MutableSessionState held = new MutableSessionState(state);
            Verdict v = machine.evaluate(held, event);
            String inPlace = new Outcome(v, held.toState()).toJson();
            if (!inPlace.equals(want)) return "in place:\n    want " + want + "\n    got  " + inPlace;
            return null;
        } catch (SessionPolicyException e) {
            return "refused: " + e.getMessage();
        }
    }

    @AfterAll
    static void summary() throws IOException {
        String line = PASSED.get() + " passed, " + FAILED.get() + " failed";
        String file = System.getProperty("conformance.summary");
        if (file != null && !file.isEmpty()) Files.write(Paths.get(file), (line + "\n").getBytes(StandardCharsets.UTF_8));
        System.out.println("conformance vectors: " + line);
    }
}
