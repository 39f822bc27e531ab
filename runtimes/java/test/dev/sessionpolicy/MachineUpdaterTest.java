package dev.sessionpolicy;

import static dev.sessionpolicy.Envelopes.DAY;
import static dev.sessionpolicy.Envelopes.NOW;
import static dev.sessionpolicy.Envelopes.b64;
import static dev.sessionpolicy.Envelopes.bytes;
import static dev.sessionpolicy.Envelopes.envelope;
import static dev.sessionpolicy.Envelopes.header;
import static dev.sessionpolicy.Envelopes.key;
import static dev.sessionpolicy.Envelopes.payload;
import static dev.sessionpolicy.Envelopes.sign;
import static dev.sessionpolicy.Envelopes.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The updater with envelopes made here (signed with the test keys): each check of
 * docs/envelope.md and its code, what the vectors cannot hold (an envelope over 4 MiB, an updater
 * without keys, a sequence of restore and offers), and that a refusal never changes the machine
 * held.
 */
class MachineUpdaterTest {
    static final String POLICY = "i360-salesforce";
    static String machine;
    static String newer;
    static final BigInteger ORDER = new BigInteger("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551", 16);

    @BeforeAll
    static void machines() throws Exception {
        machine = Envelopes.machine(POLICY);
        newer = Envelopes.otherMachine(POLICY, "a later revision");
    }

    static MachineUpdater updater() throws Exception {
        return new MachineUpdater(POLICY, Arrays.asList(key("a"), key("b")));
    }

    static String refusal(MachineUpdater u, String envelope) {
        UpdateResult r = u.offer(bytes(envelope), NOW);
        assertEquals(UpdateResult.Kind.REFUSED, r.kind(), r.toString());
        assertNull(r.machine());
        assertTrue(r.message() != null && !r.message().isEmpty());
        return r.code();
    }

    static String refusal(String envelope) throws Exception {
        return refusal(updater(), envelope);
    }

    static Map<String, Object> payloadOf(String m) throws Exception {
        return payload(m, 7, NOW - DAY, NOW + DAY);
    }

    static String signed(Map<String, Object> payload) throws Exception {
        return envelope("a", header("a"), write(payload));
    }

    static String signedRaw(String payloadJson) throws Exception {
        return envelope("a", header("a"), payloadJson);
    }

    /** The envelope with its signature segment replaced by the base64url of {@code signature}. */
    static String withSignature(String envelope, byte[] signature) {
        return envelope.substring(0, envelope.lastIndexOf('.') + 1) + b64(signature);
    }

    // ---- installing ----

    @Test
    void keyIdsAreThePinnedKeysIdsInOrder() throws Exception {
        MachineUpdater u = new MachineUpdater(POLICY, java.util.Arrays.asList(key("b"), key("a")));
        assertEquals(java.util.Arrays.asList(key("b").id(), key("a").id()), u.keyIds());
    }

    @Test
    void anOfferedEnvelopeIsInstalledAndItsBytesHandedBack() throws Exception {
        MachineUpdater u = updater();
        assertNull(u.current());
        String e = envelope(machine, 5);
        UpdateResult r = u.offer(bytes("\r\n " + e + "\n\t"), NOW);
        assertEquals(UpdateResult.Kind.INSTALLED, r.kind(), r.toString());
        assertNull(r.code());
        assertNull(r.message());
        SignedMachine m = r.machine();
        assertSame(m, u.current());
        assertEquals(POLICY, m.policy());
        assertEquals(5, m.serial());
        assertEquals(NOW - DAY, m.issuedAtMillis());
        assertEquals(NOW + 29 * DAY, m.expiresAtMillis());
        assertEquals(PolicyMachine.fromDocument(machine).digest(), m.digest());
        assertEquals(m.digest(), m.machine().digest());
        assertEquals(key("a").id(), m.keyId());
        assertArrayEquals(bytes("\r\n " + e + "\n\t"), m.envelope()); // exactly as given, the white space around it included

        // The stored bytes restore the same machine in a new updater.
        MachineUpdater next = updater();
        UpdateResult restored = next.restore(m.envelope());
        assertEquals(UpdateResult.Kind.INSTALLED, restored.kind());
        assertEquals(m.digest(), next.current().digest());
    }

    /** docs/envelope.md: the updater hands the envelope's bytes back exactly as it was given them, white space included. */
    @Test
    void theEnvelopesBytesAreHandedBackAsGiven() throws Exception {
        String e = envelope(machine, 5);
        for (String around : new String[] {"", "\n", " \t\r\n", "\r\n\r\n  "}) {
            byte[] given = bytes(around + e + around + "\n");
            MachineUpdater u = updater();
            SignedMachine m = u.offer(given, NOW).machine();
            assertArrayEquals(given, m.envelope(), "white space `" + around + "`");
            // A copy: changing the array given, or the one handed back, changes nothing held.
            byte[] copy = given.clone();
            Arrays.fill(given, (byte) 'x');
            assertArrayEquals(copy, m.envelope());
            m.envelope()[0] = 'y';
            assertArrayEquals(copy, m.envelope());
            // Restored, the bytes are handed back as given too.
            MachineUpdater next = updater();
            SignedMachine restored = next.restore(copy).machine();
            assertArrayEquals(copy, restored.envelope());
        }
    }

    @Test
    void theSameMachineWithASerialNotLargerIsUnchanged() throws Exception {
        MachineUpdater u = updater();
        assertEquals(UpdateResult.Kind.INSTALLED, u.offer(bytes(envelope(machine, 5)), NOW).kind());
        SignedMachine held = u.current();
        for (long serial : new long[] {5, 4, 1}) {
            UpdateResult r = u.offer(bytes(envelope(machine, serial)), NOW);
            assertEquals(UpdateResult.Kind.UNCHANGED, r.kind(), "serial " + serial);
            assertNull(r.machine());
            assertSame(held, u.current());
        }
        // Signed with the other pinned key: the same machine and serial, unchanged.
        String byB = envelope("b", header("b"), write(payload(machine, 5, NOW, NOW + DAY)));
        assertEquals(UpdateResult.Kind.UNCHANGED, u.offer(bytes(byB), NOW).kind());
        assertSame(held, u.current());
    }

    /**
     * Check 17's one rule: a larger serial installs, whatever its machine. The same machine
     * signed later moves the serial held up, so that an envelope of another machine signed
     * before it cannot come back.
     */
    @Test
    void theSameMachineWithALargerSerialIsInstalledAndTheSerialHeldMovesUp() throws Exception {
        MachineUpdater u = updater();
        assertEquals(UpdateResult.Kind.INSTALLED, u.offer(bytes(envelope(machine, 5)), NOW).kind());
        SignedMachine first = u.current();
        String later = envelope(machine, 7);
        UpdateResult r = u.offer(bytes(later), NOW);
        assertEquals(UpdateResult.Kind.INSTALLED, r.kind(), r.toString());
        assertSame(r.machine(), u.current());
        assertEquals(7, u.current().serial());
        assertEquals(first.digest(), u.current().digest());
        assertArrayEquals(bytes(later), u.current().envelope()); // the envelope to store now
        // Another machine signed between the two: serial 6 is no longer larger than the serial held.
        assertEquals("rollback", refusal(u, envelope(newer, 6)));
        assertEquals("rollback", refusal(u, envelope(newer, 7)));
        assertEquals(7, u.current().serial());
        // The same machine with the serial it had, or the one it has: unchanged.
        assertEquals(UpdateResult.Kind.UNCHANGED, u.offer(bytes(envelope(machine, 5)), NOW).kind());
        assertEquals(UpdateResult.Kind.UNCHANGED, u.offer(bytes(later), NOW).kind());
        // Signed later again, by the other pinned key: installed.
        String byB = envelope("b", header("b"), write(payload(machine, 8, NOW, NOW + DAY)));
        assertEquals(UpdateResult.Kind.INSTALLED, u.offer(bytes(byB), NOW).kind());
        assertEquals(8, u.current().serial());
        assertEquals(key("b").id(), u.current().keyId());
    }

    @Test
    void aLargerSerialIsInstalledASmallerOrEqualOneIsRollback() throws Exception {
        MachineUpdater u = updater();
        assertEquals(UpdateResult.Kind.INSTALLED, u.offer(bytes(envelope(machine, 5)), NOW).kind());
        assertEquals("rollback", refusal(u, envelope(newer, 4)));
        assertEquals("rollback", refusal(u, envelope(newer, 5))); // a serial signed twice
        UpdateResult r = u.offer(bytes(envelope(newer, 6)), NOW);
        assertEquals(UpdateResult.Kind.INSTALLED, r.kind());
        assertEquals(PolicyMachine.fromDocument(newer).digest(), u.current().digest());
        // The older machine, even with the serial it had, is never installed again.
        assertEquals("rollback", refusal(u, envelope(machine, 5)));
        assertEquals(6, u.current().serial());
    }

    @Test
    void restoreThenAnOlderSerialIsRollback() throws Exception {
        MachineUpdater u = updater();
        // Stored long ago: expired, but restored (no time checks).
        String stored = envelope("a", header("a"), write(payload(newer, 100, NOW - 400 * DAY, NOW - 300 * DAY)));
        assertEquals("expired", refusal(stored));
        UpdateResult r = u.restore(bytes(stored));
        assertEquals(UpdateResult.Kind.INSTALLED, r.kind(), r.toString());
        assertEquals(100, u.current().serial());
        assertEquals("rollback", refusal(u, envelope(machine, 99)));
        assertEquals(UpdateResult.Kind.UNCHANGED, u.offer(bytes(envelope(newer, 50)), NOW).kind());
        assertEquals(UpdateResult.Kind.INSTALLED, u.offer(bytes(envelope(machine, 101)), NOW).kind());
    }

    @Test
    void restoreRunsEveryCheckButTheTimes() throws Exception {
        String notYet = signed(payload(machine, 1, NOW + 10 * DAY, NOW + 20 * DAY));
        assertEquals("not-yet-valid", refusal(notYet));
        assertEquals(UpdateResult.Kind.INSTALLED, updater().restore(bytes(notYet)).kind());
        Map<String, Object> p = payloadOf(machine);
        p.put("policy", "spendiq");
        UpdateResult r = updater().restore(bytes(signed(p)));
        assertEquals("wrong-policy", r.code());
        String tampered = withSignature(envelope(machine, 1), new byte[64]);
        assertEquals("bad-signature", updater().restore(bytes(tampered)).code());
        // Restoring over a held machine: never older.
        MachineUpdater u = updater();
        assertEquals(UpdateResult.Kind.INSTALLED, u.offer(bytes(envelope(newer, 10)), NOW).kind());
        assertEquals("rollback", u.restore(bytes(envelope(machine, 9))).code());
        assertEquals(UpdateResult.Kind.UNCHANGED, u.restore(bytes(envelope(newer, 3))).kind());
    }

    /** Restore runs check 17 when the updater already holds a machine, as offer does. */
    @Test
    void restoreOverAHeldMachineRunsCheck17() throws Exception {
        MachineUpdater u = updater();
        assertEquals(UpdateResult.Kind.INSTALLED, u.offer(bytes(envelope(newer, 10)), NOW).kind());
        SignedMachine held = u.current();
        // An older serial, another machine: rollback, and the machine held is kept.
        UpdateResult r = u.restore(bytes(envelope(machine, 9)));
        assertEquals("rollback", r.code(), r.toString());
        assertSame(held, u.current());
        // The same serial, another machine: rollback.
        assertEquals("rollback", u.restore(bytes(envelope(machine, 10))).code());
        // An older envelope that is also expired: restore does not check the times, check 17 refuses it.
        String old = signed(payload(machine, 3, NOW - 400 * DAY, NOW - 300 * DAY));
        assertEquals("rollback", u.restore(bytes(old)).code());
        assertSame(held, u.current());
        // The same machine, a serial not larger: unchanged.
        assertEquals(UpdateResult.Kind.UNCHANGED, u.restore(bytes(envelope(newer, 10))).kind());
        assertEquals(UpdateResult.Kind.UNCHANGED, u.restore(bytes(envelope(newer, 2))).kind());
        assertSame(held, u.current());
        // A larger serial: installed, the same machine too (the serial held moves up).
        assertEquals(UpdateResult.Kind.INSTALLED, u.restore(bytes(envelope(newer, 11))).kind());
        assertEquals(11, u.current().serial());
        assertEquals(UpdateResult.Kind.INSTALLED, u.restore(bytes(envelope(machine, 12))).kind());
        assertEquals(PolicyMachine.fromDocument(machine).digest(), u.current().digest());
        // Nothing held: restore installs whatever serial.
        assertEquals(UpdateResult.Kind.INSTALLED, updater().restore(bytes(envelope(machine, 1))).kind());
    }

    @Test
    void theTimesWithinTheTolerance() throws Exception {
        long tolerance = MachineUpdater.DEFAULT_TOLERANCE_MILLIS;
        assertEquals(600_000L, tolerance);
        assertEquals(UpdateResult.Kind.INSTALLED, updater().offer(bytes(signed(payload(machine, 1, NOW + tolerance, NOW + DAY))), NOW).kind());
        assertEquals("not-yet-valid", refusal(signed(payload(machine, 1, NOW + tolerance + 1, NOW + DAY))));
        assertEquals(UpdateResult.Kind.INSTALLED, updater().offer(bytes(signed(payload(machine, 1, NOW - DAY, NOW - tolerance))), NOW).kind());
        assertEquals("expired", refusal(signed(payload(machine, 1, NOW - DAY, NOW - tolerance - 1))));
        // Another tolerance, and none.
        MachineUpdater strict = new MachineUpdater(POLICY, Collections.singletonList(key("a")), 0);
        assertEquals("expired", refusal(strict, signed(payload(machine, 1, NOW - DAY, NOW - 1))));
        assertEquals("not-yet-valid", refusal(strict, signed(payload(machine, 1, NOW + 1, NOW + DAY))));
        assertEquals(UpdateResult.Kind.INSTALLED, strict.offer(bytes(signed(payload(machine, 1, NOW, NOW + 1))), NOW).kind());
        MachineUpdater lax = new MachineUpdater(POLICY, Collections.singletonList(key("a")), Long.MAX_VALUE);
        assertEquals(UpdateResult.Kind.INSTALLED, lax.offer(bytes(signed(payload(machine, 1, NOW - 2, NOW - 1))), Long.MAX_VALUE).kind());
        assertEquals(UpdateResult.Kind.INSTALLED,
                updater().offer(bytes(signed(payload(machine, 1, NOW - DAY, NOW + 1))), NOW).kind());
    }

    // ---- the checks, in order ----

    @Test
    void anEnvelopeOver4MiBIsTooLarge() throws Exception {
        String e = envelope(machine, 1);
        byte[] big = new byte[MachineUpdater.MAX_ENVELOPE_BYTES + 1];
        Arrays.fill(big, (byte) ' ');
        System.arraycopy(bytes(e), 0, big, 0, e.length()); // valid, but padded past the limit with spaces
        MachineUpdater u = updater();
        UpdateResult r = u.offer(big, NOW);
        assertEquals("envelope-too-large", r.code());
        assertEquals("envelope-too-large", u.restore(big).code());
        assertNull(u.current());
        // Exactly 4 MiB is read (and the white space around the envelope removed).
        byte[] limit = Arrays.copyOf(big, MachineUpdater.MAX_ENVELOPE_BYTES);
        assertEquals(UpdateResult.Kind.INSTALLED, u.offer(limit, NOW).kind());
        // Garbage over the limit is too large before it is malformed.
        assertEquals("envelope-too-large", updater().offer(new byte[5 << 20], NOW).code());
    }

    /**
     * The header and payload are read within the envelope's own limits (docs/envelope.md: 4 MiB,
     * 64 values, 8 levels), not the machine document's 1 MiB: a payload over 1 MiB is read when
     * the machine it carries is within the machine document's 1 MiB (escaped in a JSON string,
     * the document grows), or when it is spread with white space.
     */
    @Test
    void aPayloadBetween1And4MiBIsRead() throws Exception {
        String big = Envelopes.otherMachine(POLICY, "x".repeat(895_000));
        int machineBytes = big.getBytes(StandardCharsets.UTF_8).length;
        assertTrue(machineBytes <= JsonSyntax.MAX_BYTES, "the machine is " + machineBytes + " bytes");
        String payload = write(payload(big, 1, NOW - DAY, NOW + DAY));
        int payloadBytes = payload.getBytes(StandardCharsets.UTF_8).length;
        assertTrue(payloadBytes > JsonSyntax.MAX_BYTES, "the payload is " + payloadBytes + " bytes");
        String e = signedRaw(payload);
        assertTrue(e.length() < MachineUpdater.MAX_ENVELOPE_BYTES);
        UpdateResult r = updater().offer(bytes(e), NOW);
        assertEquals(UpdateResult.Kind.INSTALLED, r.kind(), r.toString());
        assertEquals(PolicyMachine.fromDocument(big).digest(), r.machine().digest());

        // The shipped machine, its payload spread with 2 MiB of white space: read.
        String spread = write(payloadOf(machine)).replace(",\"serial\"", "," + " ".repeat(2 << 20) + "\"serial\"");
        assertTrue(spread.length() > 2 << 20);
        String e2 = signedRaw(spread);
        assertTrue(e2.length() < MachineUpdater.MAX_ENVELOPE_BYTES);
        r = updater().offer(bytes(e2), NOW);
        assertEquals(UpdateResult.Kind.INSTALLED, r.kind(), r.toString());

        // A machine document over 1 MiB in a payload within 4 MiB: the machine reader's own limit, machine-refused.
        Map<String, Object> tooBig = payloadOf(machine);
        tooBig.put("machine", machine.replace("\"name\":", "\"pad\":\"" + "x".repeat(1 << 20) + "\",\"name\":"));
        r = updater().offer(bytes(signed(tooBig)), NOW);
        assertEquals("machine-refused", r.code(), r.toString());
        assertTrue(r.message().contains("input-too-large"), r.message());
    }

    /** The envelope's limits on values (64) and nesting (8 levels, the root being level 1), at steps 3 and 9. */
    @Test
    void theHeaderAndPayloadHaveTheEnvelopesLimitsOnValuesAndNesting() throws Exception {
        String kid = key("a").id();
        String payload = write(payloadOf(machine));
        // A header with more than 64 values (keys, values and containers): malformed, for its values.
        StringBuilder many = new StringBuilder("{\"alg\":\"ES256\",\"kid\":\"" + kid + "\",\"typ\":\"sessionpolicy-machine+jws\",\"x\":[");
        for (int i = 0; i < 60; i++) many.append(i == 0 ? "" : ",").append(i);
        many.append("]}");
        UpdateResult r = updater().offer(bytes(envelope("a", many.toString(), payload)), NOW);
        assertEquals("envelope-malformed", r.code(), r.toString());
        assertTrue(r.message().contains("too-many-nodes"), r.message());
        // A header nested more than 8 levels: malformed, for its nesting.
        String deep = "{\"alg\":\"ES256\",\"kid\":\"" + kid + "\",\"typ\":\"sessionpolicy-machine+jws\",\"x\":[[[[[[[1]]]]]]]}";
        r = updater().offer(bytes(envelope("a", deep, payload)), NOW);
        assertEquals("envelope-malformed", r.code(), r.toString());
        assertTrue(r.message().contains("nesting-too-deep"), r.message());

        // In the payload, the limits decide between step 9 (envelope-malformed) and step 10 (unsupported-envelope):
        // the root, `format` and its value, `x` and its list are 5 values; 59 elements make 64.
        for (int n : new int[] {59, 60}) {
            StringBuilder p = new StringBuilder("{\"format\":\"sessionpolicy-envelope/2\",\"x\":[");
            for (int i = 0; i < n; i++) p.append(i == 0 ? "" : ",").append(i);
            p.append("]}");
            r = updater().offer(bytes(signedRaw(p.toString())), NOW);
            assertEquals(n == 59 ? "unsupported-envelope" : "envelope-malformed", r.code(), n + " elements: " + r);
        }
        // Six lists in `x` put the 1 at level 8; seven at level 9.
        for (int lists : new int[] {6, 7}) {
            String p = "{\"format\":\"sessionpolicy-envelope/2\",\"x\":" + "[".repeat(lists) + "1" + "]".repeat(lists) + "}";
            r = updater().offer(bytes(signedRaw(p)), NOW);
            assertEquals(lists == 6 ? "unsupported-envelope" : "envelope-malformed", r.code(), lists + " lists: " + r);
        }
        // A key at level 9 counts as deep as a value there.
        String keyDeep = "{\"format\":\"sessionpolicy-envelope/2\",\"x\":" + "[".repeat(6) + "{\"k\":1}" + "]".repeat(6) + "}";
        assertEquals("envelope-malformed", updater().offer(bytes(signedRaw(keyDeep)), NOW).code());
        // Restore reads with the same limits.
        assertEquals("envelope-malformed", updater().restore(bytes(envelope("a", many.toString(), payload))).code());
    }

    /** The JSON reader's two sets of limits: the machine document's stay 1 MiB, 100,000 values, 64 levels. */
    @Test
    void theJsonReadersLimits() throws Exception {
        JsonSyntax.Limits files = JsonSyntax.Limits.FILES;
        assertEquals(1 << 20, files.bytes);
        assertEquals(100_000, files.nodes);
        assertEquals(64, files.depth);
        JsonSyntax.Limits envelope = JsonSyntax.Limits.ENVELOPE;
        assertEquals(4 << 20, envelope.bytes);
        assertEquals(64, envelope.nodes);
        assertEquals(8, envelope.depth);
        assertEquals(MachineUpdater.MAX_ENVELOPE_BYTES, envelope.bytes);
        // Over 1 MiB: refused for a machine document, read within the envelope's limits.
        byte[] spread = ("[" + " ".repeat(1 << 20) + "1]").getBytes(StandardCharsets.UTF_8);
        assertEquals("input-too-large", assertThrows(SessionPolicyException.class, () -> JsonSyntax.parse(spread)).code());
        assertEquals("1", JsonSyntax.parse(spread, envelope).items.get(0).text);
        byte[] over4 = new byte[(4 << 20) + 1];
        Arrays.fill(over4, (byte) ' ');
        assertEquals("input-too-large", assertThrows(SessionPolicyException.class, () -> JsonSyntax.parse(over4, envelope)).code());
        // 64 values and 8 levels: read; one more of either: refused. 100 values and 9 levels: a machine document reads them.
        byte[] sixtyFour = ("[" + "0,".repeat(62) + "0]").getBytes(StandardCharsets.UTF_8);
        assertEquals(63, JsonSyntax.parse(sixtyFour, envelope).items.size());
        byte[] sixtyFive = ("[" + "0,".repeat(63) + "0]").getBytes(StandardCharsets.UTF_8);
        assertEquals("too-many-nodes", assertThrows(SessionPolicyException.class, () -> JsonSyntax.parse(sixtyFive, envelope)).code());
        assertEquals(64, JsonSyntax.parse(sixtyFive).items.size());
        byte[] eight = ("[".repeat(7) + "1" + "]".repeat(7)).getBytes(StandardCharsets.UTF_8);
        JsonSyntax.parse(eight, envelope);
        byte[] nine = ("[".repeat(8) + "1" + "]".repeat(8)).getBytes(StandardCharsets.UTF_8);
        assertEquals("nesting-too-deep", assertThrows(SessionPolicyException.class, () -> JsonSyntax.parse(nine, envelope)).code());
        JsonSyntax.parse(nine);
        byte[] sixtyFiveDeep = ("[".repeat(64) + "1" + "]".repeat(64)).getBytes(StandardCharsets.UTF_8);
        assertEquals("nesting-too-deep", assertThrows(SessionPolicyException.class, () -> JsonSyntax.parse(sixtyFiveDeep)).code());
    }

    @Test
    void theSegmentsMustBeStrictBase64url() throws Exception {
        String e = envelope(machine, 1);
        String[] parts = e.split("\\.");
        String h = parts[0];
        String p = parts[1];
        String s = parts[2];
        List<String> malformed = new ArrayList<>(Arrays.asList(
                "", " \n", "abc", h + "." + p, h + "." + p + "." + s + ".", h + "." + p + "." + s + "." + s,
                "." + p + "." + s, h + ".." + s,
                h + "=." + p + "." + s, h + "." + p + "." + s + "=", h + "." + p + "." + s + "==",
                h + "." + "+" + p.substring(1) + "." + s, h + "." + p.substring(0, 100) + "/" + p.substring(100) + "." + s,
                h + " ." + p + "." + s, h + "." + p + ".\n" + s, "\f" + e, e + "\u000b", "\u00a0" + e,
                h + "." + p + "." + s + "AAA", // 89 characters: 1 more than a multiple of 4
                h + "A." + p + "." + s.substring(0, 85) + "é"));
        // The unused low bits of the last character: the signature's 86 characters leave 4 bits unused.
        char last = s.charAt(85);
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        int v = alphabet.indexOf(last);
        malformed.add(h + "." + p + "." + s.substring(0, 85) + alphabet.charAt(v | 1));
        malformed.add(h + "." + p + "." + s.substring(0, 85) + alphabet.charAt(v | 8));
        // A 2-byte header: 3 characters, 2 bits unused.
        malformed.add(b64("{}").substring(0, 2) + "x." + p + "." + s);
        for (String m : malformed) assertEquals("envelope-malformed", refusal(m), m.length() > 80 ? m.substring(0, 80) : m);
        // The header's base64url of 3 characters with its unused bits zero is read (and is not JSON).
        assertEquals("e30", b64("{}"));
        assertEquals("envelope-malformed", refusal("e30." + p + "." + s));
    }

    @Test
    void theHeader() throws Exception {
        String payload = write(payloadOf(machine));
        String kid = key("a").id();
        String[][] cases = {
            {"not json", "envelope-malformed"},
            {"", "envelope-malformed"}, // an empty header segment
            {"  ", "envelope-malformed"},
            {"[]", "envelope-malformed"},
            {"\"ES256\"", "envelope-malformed"},
            {"{\"alg\":\"ES256\",\"kid\":\"" + kid + "\"}", "envelope-malformed"},
            {"{\"alg\":\"ES256\",\"kid\":\"" + kid + "\",\"typ\":\"sessionpolicy-machine+jws\",\"jku\":\"https://x\"}", "envelope-malformed"},
            {"{\"alg\":\"ES256\",\"kid\":\"" + kid + "\",\"typ\":\"sessionpolicy-machine+jws\",\"alg\":\"ES256\"}", "envelope-malformed"},
            {"{\"alg\":\"ES256\",\"kid\":\"" + kid + "\",\"typ\":null}", "envelope-malformed"},
            {"{\"alg\":\"ES256\",\"kid\":7,\"typ\":\"sessionpolicy-machine+jws\"}", "envelope-malformed"},
            {"{\"alg\":\"ES256\",\"kid\":\"" + kid + "\",\"typ\":\"sessionpolicy-machine+jws\",}", "envelope-malformed"},
            {"{\"alg\":\"ES256\",\"kid\":\"" + kid + "\",\"typ\":\"JWT\"}", "unsupported-envelope"},
            {"{\"alg\":\"none\",\"kid\":\"" + kid + "\",\"typ\":\"JWT\"}", "unsupported-envelope"},
            {"{\"alg\":\"none\",\"kid\":\"" + kid + "\",\"typ\":\"sessionpolicy-machine+jws\"}", "unsupported-algorithm"},
            {"{\"alg\":\"HS256\",\"kid\":\"" + kid + "\",\"typ\":\"sessionpolicy-machine+jws\"}", "unsupported-algorithm"},
            {"{\"alg\":\"ES384\",\"kid\":\"" + kid + "\",\"typ\":\"sessionpolicy-machine+jws\"}", "unsupported-algorithm"},
            {"{\"alg\":\"es256\",\"kid\":\"" + kid + "\",\"typ\":\"sessionpolicy-machine+jws\"}", "unsupported-algorithm"},
            {"{\"alg\":\"ES256\",\"kid\":\"" + kid.toUpperCase() + "\",\"typ\":\"sessionpolicy-machine+jws\"}", "unpinned-key"},
            {"{\"alg\":\"ES256\",\"kid\":\"" + key("c").id() + "\",\"typ\":\"sessionpolicy-machine+jws\"}", "unpinned-key"},
            // Members in another order and white space: not canonical, but read (the signature covers the bytes).
            {" {\"typ\" : \"sessionpolicy-machine+jws\", \"kid\":\"" + kid + "\",\n\"alg\":\"ES256\"}\n", null},
            {"\ufeff{\"alg\":\"ES256\",\"kid\":\"" + kid + "\",\"typ\":\"sessionpolicy-machine+jws\"}", null},
        };
        for (String[] c : cases) {
            String e = envelope("a", c[0], payload);
            if (c[1] == null) {
                assertEquals(UpdateResult.Kind.INSTALLED, updater().offer(bytes(e), NOW).kind(), c[0]);
            } else {
                assertEquals(c[1], refusal(e), c[0]);
            }
        }
        // Invalid UTF-8 in the header.
        byte[] bad = {'{', '"', 'a', (byte) 0xC3, '"', ':', '1', '}'};
        String signed = b64(bad) + "." + b64(payload);
        assertEquals("envelope-malformed", refusal(signed + "." + b64(sign("a", signed.getBytes(StandardCharsets.US_ASCII)))));
    }

    @Test
    void theSignature() throws Exception {
        String e = envelope(machine, 1);
        String unsigned = e.substring(0, e.lastIndexOf('.') + 1);
        assertEquals("signature-missing", refusal(unsigned));
        assertEquals("signature-missing", refusal(unsigned + "\n"));
        // alg none without a signature: the algorithm is refused first.
        String none = b64(header(key("a").id(), "none", "sessionpolicy-machine+jws")) + "." + b64(write(payloadOf(machine))) + ".";
        assertEquals("unsupported-algorithm", refusal(none));
        // An unknown key before the signature is looked at.
        String byC = envelope("c", header("c"), write(payloadOf(machine)));
        assertEquals("unpinned-key", refusal(byC));
        MachineUpdater withC = new MachineUpdater(POLICY, Collections.singletonList(key("c")));
        assertEquals(UpdateResult.Kind.INSTALLED, withC.offer(bytes(byC), NOW).kind());

        byte[] sig = Base64.getUrlDecoder().decode(e.substring(e.lastIndexOf('.') + 1));
        assertEquals(64, sig.length);
        // Signed by b but naming a: bad.
        String byBNamingA = envelope("b", header("a"), write(payloadOf(machine)));
        assertEquals("bad-signature", refusal(byBNamingA));
        // Wrong lengths, r or s out of range, a bit flipped, the DER form itself.
        assertEquals("bad-signature", refusal(withSignature(e, Arrays.copyOf(sig, 63))));
        assertEquals("bad-signature", refusal(withSignature(e, Arrays.copyOf(sig, 65))));
        assertEquals("bad-signature", refusal(withSignature(e, new byte[] {1})));
        assertEquals("bad-signature", refusal(withSignature(e, MachineUpdater.der(sig))));
        assertEquals("bad-signature", refusal(withSignature(e, concat(new byte[32], Arrays.copyOfRange(sig, 32, 64)))));
        assertEquals("bad-signature", refusal(withSignature(e, concat(Arrays.copyOf(sig, 32), new byte[32]))));
        assertEquals("bad-signature", refusal(withSignature(e, concat(Arrays.copyOf(sig, 32), fixed(ORDER)))));
        assertEquals("bad-signature", refusal(withSignature(e, concat(fixed(ORDER.add(BigInteger.ONE)), Arrays.copyOfRange(sig, 32, 64)))));
        byte[] flipped = sig.clone();
        flipped[10] ^= 1;
        assertEquals("bad-signature", refusal(withSignature(e, flipped)));
        // The signed bytes are exactly the two segments: a payload changed after signing is bad.
        String[] parts = e.split("\\.");
        Map<String, Object> p = payloadOf(machine);
        p.put("serial", 2L);
        assertEquals("bad-signature", refusal(parts[0] + "." + b64(write(p)) + "." + parts[2]));
        // (r, n - s) is the same signature's other form: ECDSA verifies it, and so does the spec (s from 1 to n - 1).
        BigInteger s = new BigInteger(1, Arrays.copyOfRange(sig, 32, 64));
        assertEquals(UpdateResult.Kind.INSTALLED,
                updater().offer(bytes(withSignature(e, concat(Arrays.copyOf(sig, 32), fixed(ORDER.subtract(s))))), NOW).kind());
    }

    @Test
    void derConversion() {
        byte[] raw = new byte[64];
        raw[31] = 1; // r = 1
        raw[32] = (byte) 0x80; // s has its high bit set
        byte[] der = MachineUpdater.der(raw);
        byte[] want = new byte[2 + 3 + 35];
        want[0] = 0x30;
        want[1] = 38;
        want[2] = 2;
        want[3] = 1;
        want[4] = 1;
        want[5] = 2;
        want[6] = 33;
        want[7] = 0;
        want[8] = (byte) 0x80;
        assertArrayEquals(want, der);
        byte[] small = new byte[64];
        small[1] = 0x7f;
        small[33] = 0x01;
        byte[] d2 = MachineUpdater.der(small);
        assertEquals(2 + 2 + 31 + 2 + 31, d2.length);
        assertEquals(31, d2[3]);
        assertEquals(0x7f, d2[4]);
    }

    @Test
    void thePayload() throws Exception {
        String[][] cases = {
            {"not json", "envelope-malformed"},
            {"[]", "envelope-malformed"},
            {"{}", "envelope-malformed"},
            {"{\"format\":1}", "envelope-malformed"},
            {"{\"format\":null}", "envelope-malformed"},
            {"{\"format\":\"sessionpolicy-envelope/2\"}", "unsupported-envelope"},
            {"{\"format\":\"sessionpolicy-machine/1\",\"x\":1}", "unsupported-envelope"},
            {"{\"format\":\"sessionpolicy-envelope/1\"}", "envelope-malformed"},
            {"{\"format\":\"sessionpolicy-envelope/1\",\"format\":\"sessionpolicy-envelope/1\"}", "envelope-malformed"},
        };
        for (String[] c : cases) assertEquals(c[1], refusal(signedRaw(c[0])), c[0]);

        Object[][] members = {
            {"serial", 0L}, {"serial", -1L}, {"serial", 9_007_199_254_740_992L}, {"serial", "7"}, {"serial", null}, {"serial", true},
            {"issued_at", -1L}, {"issued_at", 253_402_300_800_000L}, {"issued_at", String.valueOf(NOW)},
            {"expires_at", 253_402_300_800_000L}, {"expires_at", NOW - DAY}, {"expires_at", NOW - DAY - 1},
            {"policy", ""}, {"policy", 7L}, {"policy", null},
            {"digest", "sha256:" + "A".repeat(64)}, {"digest", "sha256:" + "a".repeat(63)}, {"digest", "sha256:" + "a".repeat(65)},
            {"digest", "SHA256:" + "a".repeat(64)}, {"digest", 1L},
            {"machine", null}, {"machine", 1L}, {"machine", Collections.emptyMap()},
        };
        for (Object[] m : members) {
            Map<String, Object> p = payloadOf(machine);
            p.put((String) m[0], m[1]);
            assertEquals("envelope-malformed", refusal(signed(p)), m[0] + " = " + m[1]);
        }
        for (String k : Envelopes.payload(machine, 1, 0, 1).keySet()) {
            if (k.equals("format")) continue;
            Map<String, Object> p = payloadOf(machine);
            p.remove(k);
            assertEquals("envelope-malformed", refusal(signed(p)), "without " + k);
        }
        Map<String, Object> extra = payloadOf(machine);
        extra.put("signature", "x");
        assertEquals("envelope-malformed", refusal(signed(extra)));
        // Integers are JSON numbers without a fraction or exponent.
        String text = write(payloadOf(machine));
        for (String number : new String[] {"7.0", "7e0", "0.7e1", "70E-1", "07", "+7", "18446744073709551623"}) {
            assertEquals("envelope-malformed", refusal(signedRaw(text.replace("\"serial\":7", "\"serial\":" + number))), number);
        }
        // The bounds themselves are read.
        Map<String, Object> edges = payload(machine, 9_007_199_254_740_991L, 0, 253_402_300_799_999L);
        MachineUpdater lax = new MachineUpdater(POLICY, Collections.singletonList(key("a")), Long.MAX_VALUE);
        assertEquals(UpdateResult.Kind.INSTALLED, lax.offer(bytes(signed(edges)), NOW).kind());
        assertEquals(9_007_199_254_740_991L, lax.current().serial());
        // White space and another member order: read.
        String spaced = text.replace("{\"digest\"", "{ \"digest\" ").replace(",\"serial\"", ",\n\t\"serial\"") + "\r\n";
        assertEquals(UpdateResult.Kind.INSTALLED, updater().offer(bytes(signedRaw(spaced)), NOW).kind());
    }

    /** Check 11: `-0` is 0 (a JSON integer), so `issued_at` -0 is the epoch and `serial` -0 is below 1. */
    @Test
    void minusZeroIsZero() throws Exception {
        String text = write(payload(machine, 7, 0, NOW + DAY));
        assertTrue(text.contains("\"issued_at\":0,"), text.substring(0, 200));
        UpdateResult r = updater().offer(bytes(signedRaw(text.replace("\"issued_at\":0,", "\"issued_at\":-0,"))), NOW);
        assertEquals(UpdateResult.Kind.INSTALLED, r.kind(), r.toString());
        assertEquals(0, r.machine().issuedAtMillis());
        assertTrue(text.endsWith("\"serial\":7}"), text.substring(text.length() - 40));
        assertEquals("envelope-malformed", refusal(signedRaw(text.replace("\"serial\":7}", "\"serial\":-0}"))));
        assertEquals("envelope-malformed", refusal(signedRaw(text.replace("\"issued_at\":0,", "\"issued_at\":-0.0,"))));
    }

    @Test
    void thePolicyAndTheMachine() throws Exception {
        Map<String, Object> p = payloadOf(machine);
        p.put("policy", "spendiq");
        assertEquals("wrong-policy", refusal(signed(p)));
        // The policy is checked before the times.
        p = payload(machine, 1, NOW - 10 * DAY, NOW - 9 * DAY);
        p.put("policy", "spendiq");
        assertEquals("wrong-policy", refusal(signed(p)));
        // A machine the reader refuses: the message names the document's own code.
        p = payloadOf(machine);
        p.put("machine", machine.replace("\"i360-salesforce\"", "\"other\""));
        MachineUpdater u = updater();
        UpdateResult r = u.offer(bytes(signed(p)), NOW);
        assertEquals("machine-refused", r.code());
        assertTrue(r.message().contains("digest-mismatch"), r.message());
        p.put("machine", "");
        r = u.offer(bytes(signed(p)), NOW);
        assertEquals("machine-refused", r.code());
        assertTrue(r.message().contains("empty-document"), r.message());
        p.put("machine", "{\"format\":\"sessionpolicy-machine/2\"}");
        r = u.offer(bytes(signed(p)), NOW);
        assertEquals("machine-refused", r.code());
        assertTrue(r.message().contains("unsupported-format"), r.message());
        // The times before the machine.
        p = payload(machine, 1, NOW - 10 * DAY, NOW - 9 * DAY);
        p.put("machine", "{}");
        assertEquals("expired", refusal(signed(p)));
        // The payload's digest and policy must be the machine's.
        p = payloadOf(machine);
        p.put("digest", PolicyMachine.fromDocument(newer).digest());
        assertEquals("machine-mismatch", refusal(signed(p)));
        String spendiq = Envelopes.machine("spendiq");
        p = payloadOf(spendiq);
        p.put("policy", POLICY);
        assertEquals("machine-mismatch", refusal(signed(p)));
        // A machine document with white space: its digest is of what was read.
        p = payloadOf(machine);
        p.put("machine", " " + machine.replace(",\"digest\":", ", \"digest\" : ") + "\n");
        assertEquals(UpdateResult.Kind.INSTALLED, updater().offer(bytes(signed(p)), NOW).kind());
    }

    @Test
    void theUpdaterKeepsItsLastGoodMachineAfterEveryRefusal() throws Exception {
        MachineUpdater u = updater();
        assertEquals(UpdateResult.Kind.INSTALLED, u.offer(bytes(envelope(machine, 10)), NOW).kind());
        SignedMachine held = u.current();
        String good = envelope(newer, 11);
        String[] parts = good.split("\\.");
        Map<String, Object> wrongPolicy = payloadOf(newer);
        wrongPolicy.put("policy", "spendiq");
        Map<String, Object> refusedMachine = payload(newer, 11, NOW - DAY, NOW + DAY);
        refusedMachine.put("machine", "{}");
        Map<String, Object> mismatch = payload(newer, 11, NOW - DAY, NOW + DAY);
        mismatch.put("digest", held.digest());
        Map<String, String> refusals = new LinkedHashMap<>();
        refusals.put("envelope-malformed", parts[0] + "." + parts[1]);
        refusals.put("unsupported-envelope", envelope("a", header(key("a").id(), "ES256", "JWT"), parts[1]));
        refusals.put("unsupported-algorithm", b64(header(key("a").id(), "none", "sessionpolicy-machine+jws")) + "." + parts[1] + ".");
        refusals.put("signature-missing", parts[0] + "." + parts[1] + ".");
        refusals.put("unpinned-key", envelope("c", header("c"), write(payload(newer, 11, NOW - DAY, NOW + DAY))));
        refusals.put("bad-signature", withSignature(good, new byte[64]));
        refusals.put("wrong-policy", signed(wrongPolicy));
        refusals.put("not-yet-valid", signed(payload(newer, 11, NOW + DAY, NOW + 2 * DAY)));
        refusals.put("expired", signed(payload(newer, 11, NOW - 2 * DAY, NOW - DAY)));
        refusals.put("machine-refused", signed(refusedMachine));
        refusals.put("machine-mismatch", signed(mismatch));
        refusals.put("rollback", envelope(newer, 9));
        for (Map.Entry<String, String> r : refusals.entrySet()) {
            assertEquals(r.getKey(), refusal(u, r.getValue()));
            assertSame(held, u.current(), r.getKey());
            assertEquals(r.getKey(), u.offer(bytes(r.getValue()), NOW).code());
        }
        byte[] big = new byte[MachineUpdater.MAX_ENVELOPE_BYTES + 1];
        assertEquals("envelope-too-large", u.offer(big, NOW).code());
        assertSame(held, u.current());
        // The same refusals when restoring (but the times), and the machine still held.
        for (Map.Entry<String, String> r : refusals.entrySet()) {
            UpdateResult result = u.restore(bytes(r.getValue()));
            if (r.getKey().equals("not-yet-valid") || r.getKey().equals("expired")) {
                assertEquals(UpdateResult.Kind.INSTALLED, result.kind(), r.getKey()); // serial 11 > 10, restored without time checks
                u = updater();
                assertEquals(UpdateResult.Kind.INSTALLED, u.offer(bytes(envelope(machine, 10)), NOW).kind());
                held = u.current();
                continue;
            }
            assertEquals(r.getKey(), result.code());
            assertSame(held, u.current(), r.getKey());
        }
        // And then a good one is still installed.
        assertEquals(UpdateResult.Kind.INSTALLED, u.offer(bytes(good), NOW).kind());
        assertNotEquals(held.digest(), u.current().digest());
    }

    // ---- building an updater ----

    @Test
    void anUpdaterNeedsAPinnedKey() throws Exception {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new MachineUpdater(POLICY, Collections.<TrustedKey>emptyList()));
        assertTrue(e.getMessage().contains("at least one"));
        assertThrows(IllegalArgumentException.class, () -> new MachineUpdater(POLICY, Collections.singletonList(key("a")), -1));
        assertThrows(NullPointerException.class, () -> new MachineUpdater(POLICY, Arrays.asList(key("a"), null)));
        // The list is copied: emptying it afterwards changes nothing.
        List<TrustedKey> keys = new ArrayList<>(Collections.singletonList(key("a")));
        MachineUpdater u = new MachineUpdater(POLICY, keys);
        keys.clear();
        assertEquals(UpdateResult.Kind.INSTALLED, u.offer(bytes(envelope(machine, 1)), NOW).kind());
        assertEquals(POLICY, u.policy());
    }

    // ---- keys ----

    static final String P384 = "-----BEGIN PUBLIC KEY-----\n"
            + "MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAElVG8ojNkh8TZ0YY6bS7825MojFahzG+k\n"
            + "u+or8/HoVFoOsZWeCUaVOmzAs0fauS2vjbrLX98ofM+lx8BV2McgqIJVMZSsSaAV\n"
            + "QpvMgcXyN9sB5MPsUGk69KXLAsWLhxPU\n"
            + "-----END PUBLIC KEY-----\n";
    static final String RSA = "-----BEGIN PUBLIC KEY-----\n"
            + "MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDUWNk82WEYp/f1PHSAbHaD5Sdr\n"
            + "YPykI85cPv4GZrjvGpIF4f1m1o572MvfME/fKjBegi/zrXyMaAzehCYfzDFqIzPJ\n"
            + "wrIVeTFpkbl9D0hFEkQqbD+e9wK3HnOTpUBvErl3H7dOhc3oFvxPiMfAcRVRSIC9\n"
            + "Ji/wA7Vd0H7G1Gi8TwIDAQAB\n"
            + "-----END PUBLIC KEY-----\n";
    static final String COMPRESSED = "-----BEGIN PUBLIC KEY-----\n"
            + "MDkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDIgACfC/s8xdREH7jbnfyFolxHEdouuW3\n"
            + "rGjsmVX8/Z++p8Y=\n"
            + "-----END PUBLIC KEY-----\n";
    static final String ED25519 = "-----BEGIN PUBLIC KEY-----\n"
            + "MCowBQYDK2VwAyEAc3Aq/qTerwZQJS9UlBIvK8OcjKWNtIEJkW/evR+M8I4=\n"
            + "-----END PUBLIC KEY-----\n";
    static final String SECP256K1 = "-----BEGIN PUBLIC KEY-----\n"
            + "MFYwEAYHKoZIzj0CAQYFK4EEAAoDQgAENLCnO9tZ8wIipXilLJTUPPVI0deR6+N8\n"
            + "HevXdC22uRZQjsGa2SaEPJ568kjgS/ALzRKpJ8D//tc2zLpDpupw5w==\n"
            + "-----END PUBLIC KEY-----\n";

    static String pemOf(byte[] der) {
        return "-----BEGIN PUBLIC KEY-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der) + "\n-----END PUBLIC KEY-----\n";
    }

    static String keyRefusal(String pem) {
        SessionPolicyException e = assertThrows(SessionPolicyException.class, () -> TrustedKey.fromPem(pem), pem);
        return e.code();
    }

    @Test
    void keysAndTheirIds() throws Exception {
        // openssl pkey -pubin -in NAME.pub.pem -outform DER | sha256sum
        assertEquals("a335190db6374be76966e8cbdcf2674efb5e74db3de85ced4bbd9b350ba325b4", key("a").id());
        assertEquals("c8dfccd7527b25b957366482b768bf9bf0ccc8665d81df5c6345ac06fec2685a", key("b").id());
        assertEquals("60cd2f956c878b32285f5ab9a0f1d0c928511dd48177f3e1daaa0786e8063880", key("c").id());
        String a = Envelopes.pem("a", "pub");
        assertEquals(key("a"), TrustedKey.fromPem(a.replace("\n", "\r\n")));
        assertEquals(key("a"), TrustedKey.fromPem("\n  " + a.trim()));
        byte[] der = Base64.getMimeDecoder().decode(a.replace("-----BEGIN PUBLIC KEY-----", "").replace("-----END PUBLIC KEY-----", ""));
        assertEquals(91, der.length);
        assertEquals(key("a"), TrustedKey.fromPem(pemOf(der)));
        String oneLine = "-----BEGIN PUBLIC KEY-----" + Base64.getEncoder().encodeToString(der) + "-----END PUBLIC KEY-----";
        assertEquals(key("a"), TrustedKey.fromPem(oneLine));
        // White space (as the Swift reader trims it, Foundation's whitespacesAndNewlines) around the block and inside it.
        assertEquals(key("a"), TrustedKey.fromPem("\t\f\u000b\u00a0\u2028" + a + "\u3000\u0085 "));
        assertEquals(key("a"), TrustedKey.fromPem(a.replace("\n", "\n\t \f")));
    }

    @Test
    void keysRefused() throws Exception {
        String a = Envelopes.pem("a", "pub");
        byte[] der = Base64.getMimeDecoder().decode(a.replace("-----BEGIN PUBLIC KEY-----", "").replace("-----END PUBLIC KEY-----", ""));
        byte[] offCurve = der.clone();
        offCurve[90] ^= 1;
        byte[] hybrid = der.clone();
        hybrid[26] = 0x06;
        byte[] trailing = Arrays.copyOf(der, 92);
        List<String> refused = Arrays.asList(P384, RSA, COMPRESSED, ED25519, SECP256K1, pemOf(offCurve), pemOf(hybrid), pemOf(trailing),
                pemOf(Arrays.copyOf(der, 90)), Envelopes.pem("a", "key"), "", "not a key", Base64.getEncoder().encodeToString(der),
                a.replace("PUBLIC KEY", "EC PUBLIC KEY"), a.replace("-----END PUBLIC KEY-----", ""), a.replace("M", "*"),
                a.replace("==", "="), a.replace("==", ""), a.replace("lg==", "lh=="), a + a, "text before\n" + a,
                a + "text after\n", a + "\n" + Envelopes.pem("b", "pub"), "\u0000" + a, a + "\u0001", a.replace("\n", "\n\u0000"),
                a.replace("\n", "\n\u200b"), a.replace("-----END", "=\n-----END"),
                "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEII8w/WdA7xGjrGbaJzR1e9aGzPpjL+HNXWINB0dJOqOAoAoGCCqGSM49\n-----END EC PRIVATE KEY-----\n");
        for (String pem : refused) assertEquals("invalid-key", keyRefusal(pem), pem);
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** {@code v} as 32 big-endian bytes. */
    static byte[] fixed(BigInteger v) {
        byte[] b = v.toByteArray();
        byte[] out = new byte[32];
        int n = Math.min(32, b.length);
        System.arraycopy(b, b.length - n, out, 32 - n, n);
        return out;
    }
}
