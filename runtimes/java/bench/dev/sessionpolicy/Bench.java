package dev.sessionpolicy;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The evaluation benchmark (not a test): for every shipped machine, the event mix of the Swift
 * benchmark (Benchmarks/Benchmarks/Evaluation/Evaluation.swift), built from the machine's own
 * limits as the Swift benchmark builds it from the policy's; a warm-up, then rounds of many
 * evaluations. Prints the median nanoseconds per evaluation of each case and overall, for the
 * Outcome-returning form and the in-place form, and the bytes allocated per evaluation
 * ({@code com.sun.management.ThreadMXBean.getThreadAllocatedBytes}).
 *
 * <pre>java -cp build/sessionpolicy.jar:build/bench-classes dev.sessionpolicy.Bench SPEC_DIR [ROUNDS] [PER_ROUND]</pre>
 */
public final class Bench {
    static final long DAY = 86_400;
    static final Timestamp NOW = Timestamp.parse("2026-03-01T09:00:00Z");
    static volatile long sink;

    static final class Case {
        final String policy;
        final String name;
        final SessionState state;
        final Event event;

        Case(String policy, String name, SessionState state, Event event) {
            this.policy = policy;
            this.name = name;
            this.state = state;
            this.event = event;
        }
    }

    static Timestamp ago(long seconds) {
        return Timestamp.ofEpochMilli(NOW.epochMilli() - seconds * 1000);
    }

    static Event.Builder withDevice(Event.Builder b) {
        return b.user("alice").deviceId("phone-1").keystore(Keystore.HARDWARE).integrity(Integrity.OK);
    }

    static SessionState resting(long within, AuthMode mode, MachineState state) {
        return SessionState.builder().state(state).user("alice").device("phone-1").authMode(mode).lastIdpLogin(ago(within))
                .lastOnline(ago(within / 2)).lastActivity(ago(within / 4)).highestTime(ago(within / 4)).build();
    }

    /** The cases of Evaluation.swift's {@code cases(for:)}, for one machine. */
    static List<Case> cases(String policy, PolicyMachine m) {
        List<Long> limits = new ArrayList<>();
        for (String kind : new String[] {"session_max_exceeded", "idle_exceeded", "offline_window_exceeded"}) {
            long s = m.limitSeconds(kind);
            if (s >= 0) limits.add(s);
        }
        long shortest = limits.isEmpty() ? 4 * DAY : limits.stream().mapToLong(Long::longValue).min().getAsLong();
        long within = Math.max(4, shortest / 2);
        Event launch = withDevice(Event.builder(EventKind.LAUNCH, NOW).network(Network.OFFLINE)).build();
        List<Case> list = new ArrayList<>();
        list.add(new Case(policy, "launch-none-allow", resting(within, AuthMode.NONE, MachineState.SUSPENDED), launch));
        list.add(new Case(policy, "launch-biometric-require", resting(within, AuthMode.BIOMETRIC, MachineState.SUSPENDED), launch));
        if (!limits.isEmpty()) {
            long past = limits.stream().mapToLong(Long::longValue).max().getAsLong() + DAY;
            SessionState expired = SessionState.builder().state(MachineState.SUSPENDED).user("alice").device("phone-1")
                    .authMode(AuthMode.BIOMETRIC).lastIdpLogin(ago(past)).lastOnline(ago(past)).lastActivity(ago(past))
                    .highestTime(ago(past)).build();
            list.add(new Case(policy, "launch-expired", expired, launch));
        } else {
            System.err.println("note: " + policy + " sets no session max, idle limit or offline window: no launch-expired case");
        }
        list.add(new Case(policy, "biometric-succeeded-allow", resting(within, AuthMode.BIOMETRIC, MachineState.AWAITING_BIOMETRIC),
                withDevice(Event.builder(EventKind.BIOMETRIC_SUCCEEDED, NOW)).build()));
        list.add(new Case(policy, "background", resting(within, AuthMode.BIOMETRIC, MachineState.ACTIVE),
                withDevice(Event.builder(EventKind.BACKGROUND, NOW)).build()));
        return list;
    }

    static boolean expected(String name, Decision d) {
        switch (name) {
            case "launch-none-allow":
            case "biometric-succeeded-allow":
                return d == Decision.ALLOW;
            case "launch-biometric-require":
                return d == Decision.REQUIRE_BIOMETRIC;
            case "launch-expired":
                return d == Decision.IDP_LOGIN || d == Decision.WIPE;
            default:
                return d == null;
        }
    }

    static long outcomeLoop(PolicyMachine m, Case c, int n) {
        long x = 0;
        for (int i = 0; i < n; i++) x += m.evaluate(c.state, c.event).transition();
        return x;
    }

    static long inPlaceLoop(PolicyMachine m, Case c, MutableSessionState held, int n) {
        long x = 0;
        for (int i = 0; i < n; i++) {
            held.set(c.state);
            x += m.evaluate(held, c.event).transition();
        }
        return x;
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    public static void main(String[] args) throws Exception {
        Path spec = Paths.get(args.length > 0 ? args[0] : "../../spec/conformance");
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 21;
        int perRound = args.length > 2 ? Integer.parseInt(args[2]) : 200_000;
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        threads.setThreadAllocatedMemoryEnabled(true);
        long me = Thread.currentThread().getId();

        List<Case> all = new ArrayList<>();
        List<PolicyMachine> machines = new ArrayList<>();
        List<Path> files;
        try (Stream<Path> s = Files.list(spec.resolve("machines"))) {
            files = s.filter(p -> p.toString().endsWith(".json")).sorted().collect(Collectors.toList());
        }
        for (Path p : files) {
            PolicyMachine m = PolicyMachine.fromDocument(Files.readAllBytes(p));
            String policy = p.getFileName().toString().replace(".json", "");
            for (Case c : cases(policy, m)) {
                Outcome o = m.evaluate(c.state, c.event);
                if (!expected(c.name, o.decision())) {
                    System.err.println("note: " + policy + "/" + c.name + " skipped: the policy decides " + o.decision() + " (" + o.reason() + ")");
                    continue;
                }
                all.add(c);
                machines.add(m);
            }
        }
        System.out.printf("SessionPolicy Java runtime, evaluation benchmark: %d cases, %d rounds of %,d evaluations each (after warm-up)%n",
                all.size(), rounds, perRound);
        System.out.printf("%s %s, %s%n", System.getProperty("java.vm.name"), System.getProperty("java.version"), System.getProperty("os.arch"));
        // Warm-up: every case in both forms, so that the JIT sees the whole mix before measuring.
        for (int w = 0; w < 3; w++) {
            for (int i = 0; i < all.size(); i++) {
                sink += outcomeLoop(machines.get(i), all.get(i), perRound / 2);
                sink += inPlaceLoop(machines.get(i), all.get(i), new MutableSessionState(), perRound / 2);
            }
        }
        System.out.printf("%-52s %14s %12s %14s %12s%n", "case", "outcome ns", "bytes/eval", "in-place ns", "bytes/eval");
        List<Double> outcomeAll = new ArrayList<>();
        List<Double> inPlaceAll = new ArrayList<>();
        double maxInPlaceBytes = 0;
        double maxOutcomeBytes = 0;
        for (int i = 0; i < all.size(); i++) {
            Case c = all.get(i);
            PolicyMachine m = machines.get(i);
            MutableSessionState held = new MutableSessionState();
            double[] outcomeNs = new double[rounds];
            double[] inPlaceNs = new double[rounds];
            long outcomeBytes = 0;
            long inPlaceBytes = 0;
            for (int r = 0; r < rounds; r++) {
                long a0 = threads.getThreadAllocatedBytes(me);
                long t0 = System.nanoTime();
                sink += outcomeLoop(m, c, perRound);
                long t1 = System.nanoTime();
                long a1 = threads.getThreadAllocatedBytes(me);
                sink += inPlaceLoop(m, c, held, perRound);
                long t2 = System.nanoTime();
                long a2 = threads.getThreadAllocatedBytes(me);
                outcomeNs[r] = (t1 - t0) / (double) perRound;
                inPlaceNs[r] = (t2 - t1) / (double) perRound;
                outcomeBytes += a1 - a0;
                inPlaceBytes += a2 - a1;
                outcomeAll.add(outcomeNs[r]);
                inPlaceAll.add(inPlaceNs[r]);
            }
            double ob = outcomeBytes / (double) rounds / perRound;
            double ib = inPlaceBytes / (double) rounds / perRound;
            maxOutcomeBytes = Math.max(maxOutcomeBytes, ob);
            maxInPlaceBytes = Math.max(maxInPlaceBytes, ib);
            System.out.printf("%-52s %14.1f %12.1f %14.1f %12.2f%n", c.policy + "/" + c.name, median(outcomeNs), ob, median(inPlaceNs), ib);
        }
        System.out.printf("%-52s %14.1f %12.1f %14.1f %12.2f%n", "overall (median of every round; largest bytes/eval)",
                median(outcomeAll.stream().mapToDouble(Double::doubleValue).toArray()), maxOutcomeBytes,
                median(inPlaceAll.stream().mapToDouble(Double::doubleValue).toArray()), maxInPlaceBytes);
        System.out.println("(outcome: evaluate(SessionState, Event) -> Outcome; in-place: MutableSessionState.set(state), then "
                + "evaluate(MutableSessionState, Event) -> Verdict; sink " + (sink & 1) + ")");
    }
}
