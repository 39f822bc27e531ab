// The Java MachineUpdater against envelopes fetched from a running policyctl-serve
// (runtimes/server-update.sh starts the server, fetches them, compiles this with --release 11
// against build/sessionpolicy.jar, and runs it):
//   java -cp sessionpolicy.jar:. ServerUpdate ENVELOPE-1 ENVELOPE-2 A.PUB.PEM B.PUB.PEM NOW-MS
// ENVELOPE-1 is the served envelope of policies/spendiq.yaml, ENVELOPE-2 the one served after the
// policy file changed; A.PUB.PEM is the server's signing key, B.PUB.PEM another key. Exits 1 with
// the failed check on stderr; prints "java: updated from the server: N checks passed".

import dev.sessionpolicy.Event;
import dev.sessionpolicy.EventKind;
import dev.sessionpolicy.MachineUpdater;
import dev.sessionpolicy.Network;
import dev.sessionpolicy.Outcome;
import dev.sessionpolicy.PolicyMachine;
import dev.sessionpolicy.SessionState;
import dev.sessionpolicy.SignedMachine;
import dev.sessionpolicy.Timestamp;
import dev.sessionpolicy.TrustedKey;
import dev.sessionpolicy.UpdateResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Base64;
import java.util.List;

public final class ServerUpdate {
    private static int passed = 0;

    private static void check(String what, boolean ok, Object detail) {
        if (!ok) {
            System.err.println("java: FAILED: " + what + " (" + detail + ")");
            System.exit(1);
        }
        passed++;
    }

    private static String show(UpdateResult r) {
        return r.kind() == UpdateResult.Kind.REFUSED ? "refused " + r.code() + ": " + r.message() : r.kind().toString();
    }

    private static String read(String path) throws Exception {
        return new String(Files.readAllBytes(Paths.get(path)), StandardCharsets.UTF_8);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** The digest of the machine document inside an envelope's payload, read independently of the updater. */
    private static String machineDigest(String envelope) throws Exception {
        String payload = new String(Base64.getUrlDecoder().decode(envelope.trim().split("\\.", -1)[1]), StandardCharsets.UTF_8);
        // The payload is JSON; the machine member is a JSON string. Find it with the runtime's own
        // reader: the machine document is the value of "machine".
        String machine = jsonString(payload, "machine");
        return PolicyMachine.fromDocument(machine).digest();
    }

    /** The value of a top-level string member of a flat JSON object (enough for the payload: its strings are JSON strings). */
    private static String jsonString(String json, String name) {
        String key = "\"" + name + "\":";
        int at = json.indexOf(key);
        if (at < 0) throw new IllegalArgumentException("no member " + name);
        int i = at + key.length();
        while (Character.isWhitespace(json.charAt(i))) i++;
        if (json.charAt(i) != '"') throw new IllegalArgumentException(name + " is not a string");
        StringBuilder out = new StringBuilder();
        for (i++; json.charAt(i) != '"'; i++) {
            char c = json.charAt(i);
            if (c != '\\') {
                out.append(c);
                continue;
            }
            char e = json.charAt(++i);
            switch (e) {
                case 'n': out.append('\n'); break;
                case 't': out.append('\t'); break;
                case 'r': out.append('\r'); break;
                case 'b': out.append('\b'); break;
                case 'f': out.append('\f'); break;
                case 'u': out.append((char) Integer.parseInt(json.substring(i + 1, i + 5), 16)); i += 4; break;
                default: out.append(e);
            }
        }
        return out.toString();
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: ServerUpdate ENVELOPE-1 ENVELOPE-2 A.PUB.PEM B.PUB.PEM NOW-MS");
            System.exit(2);
        }
        String envelope1 = read(args[0]);
        String envelope2 = read(args[1]);
        TrustedKey keyA = TrustedKey.fromPem(read(args[2]));
        TrustedKey keyB = TrustedKey.fromPem(read(args[3]));
        long now = Long.parseLong(args[4]);

        MachineUpdater updater = new MachineUpdater("spendiq", List.of(keyA));

        // 1. The served envelope installs: the machine inside, policy spendiq.
        UpdateResult r = updater.offer(bytes(envelope1), now);
        check("envelope-1 installs", r.kind() == UpdateResult.Kind.INSTALLED, show(r));
        SignedMachine first = updater.current();
        String digest1 = machineDigest(envelope1);
        check("envelope-1 installs its machine (digest, policy spendiq)",
                first != null && first.digest().equals(digest1) && first.machine().digest().equals(digest1)
                        && first.policy().equals("spendiq"),
                first + ", the machine's " + digest1);

        // 2. The same envelope again: unchanged.
        r = updater.offer(bytes(envelope1), now);
        check("envelope-1 again is unchanged", r.kind() == UpdateResult.Kind.UNCHANGED, show(r));

        // 3 to 5. Bad variants: refused with their code; the held machine stays.
        String[] parts = envelope1.trim().split("\\.", -1);
        char[] payload = parts[1].toCharArray();
        int mid = payload.length / 2;
        payload[mid] = payload[mid] == 'A' ? 'B' : 'A';
        String[][] bad = {
            {"one payload character changed", parts[0] + "." + new String(payload) + "." + parts[2], "bad-signature"},
            {"the signature stripped", parts[0] + "." + parts[1] + ".", "signature-missing"},
            {"truncated to half", envelope1.substring(0, envelope1.length() / 2), "envelope-malformed"},
        };
        for (String[] b : bad) {
            r = updater.offer(bytes(b[1]), now);
            SignedMachine held = updater.current();
            check(b[0] + ": refused " + b[2] + ", the held machine stays",
                    r.kind() == UpdateResult.Kind.REFUSED && b[2].equals(r.code()) && held != null
                            && held.digest().equals(first.digest()),
                    show(r) + "; held " + (held == null ? "nothing" : held.digest()));
        }

        // 6. An updater pinned to key b only: unpinned-key, nothing held.
        MachineUpdater other = new MachineUpdater("spendiq", List.of(keyB));
        r = other.offer(bytes(envelope1), now);
        check("pinned to key b only: refused unpinned-key",
                r.kind() == UpdateResult.Kind.REFUSED && "unpinned-key".equals(r.code()) && other.current() == null, show(r));

        // 7. The changed policy's envelope installs: a larger serial, another machine.
        r = updater.offer(bytes(envelope2), now);
        check("envelope-2 installs", r.kind() == UpdateResult.Kind.INSTALLED, show(r));
        SignedMachine second = updater.current();
        check("envelope-2 has a larger serial and another machine (its own digest)",
                second != null && second.serial() > first.serial() && !second.digest().equals(first.digest())
                        && second.digest().equals(machineDigest(envelope2)),
                "serial " + first.serial() + " -> " + (second == null ? "-" : second.serial() + ", digest " + second.digest()));

        // 8. Envelope-1 again: a rollback; envelope-2's machine stays.
        r = updater.offer(bytes(envelope1), now);
        SignedMachine held = updater.current();
        check("envelope-1 after envelope-2: refused rollback, envelope-2 stays",
                r.kind() == UpdateResult.Kind.REFUSED && "rollback".equals(r.code()) && held != null
                        && held.digest().equals(second.digest()),
                show(r) + "; held " + (held == null ? "nothing" : held.digest()));

        // 9. The held machine decides: a launch online on a fresh session.
        Outcome outcome = null;
        String error = "";
        try {
            Event launch = Event.builder(EventKind.LAUNCH, Timestamp.ofEpochMilli(now)).network(Network.ONLINE).build();
            outcome = held.machine().evaluate(SessionState.signedOut(), launch);
        } catch (RuntimeException e) {
            error = e.toString();
        }
        check("the held machine evaluates a launch", outcome != null && outcome.decision() != null && !outcome.reason().isEmpty(),
                outcome == null ? error : outcome.decision() + " " + outcome.reason());

        System.out.println("java: updated from the server: " + passed + " checks passed (serial " + first.serial() + " -> "
                + second.serial() + ", " + first.digest().substring(0, 19) + " -> " + second.digest().substring(0, 19)
                + "; launch: " + outcome.decision() + " " + outcome.reason() + ")");
    }
}
