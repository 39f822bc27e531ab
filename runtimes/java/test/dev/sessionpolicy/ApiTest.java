package dev.sessionpolicy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** The public API: building inputs in code, evaluating, the in-place form, times, refusals. */
class ApiTest {
    static PolicyMachine load(String policy) throws Exception {
        return PolicyMachine.fromDocument(Vectors.machine(policy));
    }

    static final Timestamp T0 = Timestamp.parse("2026-03-01T09:00:00Z");

    static Timestamp at(long seconds) {
        return Timestamp.ofEpochMilli(T0.epochMilli() + seconds * 1000);
    }

    static Event.Builder event(EventKind kind, long seconds) {
        return Event.builder(kind, at(seconds)).user("alice").deviceId("phone-1").keystore(Keystore.HARDWARE).integrity(Integrity.OK);
    }

    @Test
    void aSessionFromSignInToExpiry() throws Exception {
        PolicyMachine spendiq = load("spendiq");
        assertEquals("spendiq", spendiq.name());
        assertFalse(spendiq.revealsDetectionRefusal());
        SessionState s = SessionState.signedOut();

        Outcome o = spendiq.evaluate(s, event(EventKind.LAUNCH, 0).network(Network.ONLINE).build());
        assertEquals(Decision.IDP_LOGIN, o.decision());
        assertEquals("no_session", o.reason());

        o = spendiq.evaluate(o.state(), event(EventKind.IDP_LOGIN_SUCCEEDED, 1).network(Network.ONLINE).authMode(AuthMode.NONE).build());
        assertEquals(Decision.ALLOW, o.decision());
        assertEquals(MachineState.ACTIVE, o.state().state());
        assertEquals("alice", o.state().user());
        assertEquals(at(1), o.state().lastIdpLogin());

        o = spendiq.evaluate(o.state(), event(EventKind.BACKGROUND, 60).build());
        assertNull(o.decision());
        assertEquals(MachineState.SUSPENDED, o.state().state());

        // Seven days after the sign-in exactly: still within the offline window.
        o = spendiq.evaluate(o.state(), event(EventKind.LAUNCH, 1 + 7 * 86_400).network(Network.OFFLINE).build());
        assertEquals(Decision.ALLOW, o.decision(), o.toJson());
        assertEquals(Scope.NO_AUTH_OFFLINE, o.scope());

        // One second more past the offline window: no longer.
        o = spendiq.evaluate(o.state(), event(EventKind.LAUNCH, 1 + 7 * 86_400 + 1).network(Network.OFFLINE).build());
        assertTrue(o.decision() == Decision.IDP_LOGIN || o.decision() == Decision.WIPE, o.toJson());
        assertTrue(o.notices().contains(Notice.NETWORK_REQUIRED));
    }

    @Test
    void anIncompleteEventBuiltInCodeFailsClosed() throws Exception {
        PolicyMachine spendiq = load("spendiq");
        SessionState active = SessionState.builder().state(MachineState.ACTIVE).user("alice").device("phone-1").authMode(AuthMode.NONE)
                .lastIdpLogin(T0).highestTime(T0).build();
        Outcome o = spendiq.evaluate(active, event(EventKind.LAUNCH, 10).build()); // no network
        assertEquals(Decision.IDP_LOGIN, o.decision());
        assertEquals("invalid_event", o.reason());
        assertEquals("the event is incomplete: `launch` needs `network`", o.message());
        assertEquals(-1, o.transition());
        assertEquals(AuthMode.NONE, o.authMode());
        assertEquals(MachineState.AWAITING_IDP, o.state().state());
        assertEquals(T0, o.state().highestTime()); // the time of an invalid event is not trusted

        o = spendiq.evaluate(active, event(EventKind.LAUNCH, 10).network(Network.OFFLINE).attribute("license", "none").build());
        assertEquals("the event is incomplete: attribute `license` is not declared by the policy", o.message());
        assertEquals(Collections.singletonList(Notice.NETWORK_REQUIRED), o.notices());

        PolicyMachine marketsharp = load("i360-marketsharp");
        o = marketsharp.evaluate(active, event(EventKind.LAUNCH, 10).network(Network.ONLINE).attribute("license", "maybe").build());
        assertEquals("invalid_event", o.reason());
        assertTrue(o.message().contains("cannot be `maybe`"), o.message());
    }

    @Test
    void theInPlaceFormDecidesTheSameAndSharesVerdicts() throws Exception {
        PolicyMachine m = load("kobil-signed-jwt-hardware");
        SessionState start = SessionState.builder().state(MachineState.SUSPENDED).user("alice").device("phone-1")
                .authMode(AuthMode.BIOMETRIC).lastIdpLogin(at(-86_400)).lastOnline(at(-3600)).lastActivity(at(-60)).highestTime(at(-60))
                .build();
        Event launch = event(EventKind.LAUNCH, 0).network(Network.OFFLINE).build();
        Outcome o = m.evaluate(start, launch);
        assertEquals(Decision.REQUIRE_BIOMETRIC, o.decision());
        assertEquals(Scope.BIO_AUTH_GRANT_SE, o.scope());

        MutableSessionState held = new MutableSessionState(start);
        Verdict v1 = m.evaluate(held, launch);
        assertEquals(o.state(), held.toState());
        assertEquals(o.state().toJson(), held.toJson());
        held.set(start);
        Verdict v2 = m.evaluate(held, launch);
        assertSame(v1, v2); // no new verdict for a decision seen before
        assertEquals(o.transition(), v1.transition());
    }

    @Test
    void namesAreComparedScalarByScalar() throws Exception {
        // "é" precomposed and as e + combining accent are two users, as in every runtime
        // (docs/machine-format.md, "String equality"): no Unicode normalization.
        PolicyMachine m = load("kobil-offline-token");
        SessionState s = SessionState.builder().state(MachineState.SUSPENDED).user("ren\u00e9").device("phone-1").authMode(AuthMode.NONE)
                .lastIdpLogin(T0).lastOnline(T0).lastActivity(T0).highestTime(T0).build();
        Outcome same = m.evaluate(s, event(EventKind.LAUNCH, 60).user("ren\u00e9").network(Network.OFFLINE).build());
        assertEquals(Decision.ALLOW, same.decision(), same.toJson());
        Outcome decomposed = m.evaluate(s, event(EventKind.LAUNCH, 60).user("rene\u0301").network(Network.OFFLINE).build());
        assertEquals("different_user", decomposed.reason(), decomposed.toJson());
        Outcome other = m.evaluate(s, event(EventKind.LAUNCH, 60).user("rene").network(Network.OFFLINE).build());
        assertEquals("different_user", other.reason(), other.toJson());
    }

    @Test
    void evaluationIsThreadSafe() throws Exception {
        PolicyMachine m = load("cross-app-device-sso");
        List<String> lines = Vectors.lines("cross-app-device-sso");
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                results.add(pool.submit(() -> {
                    int failures = 0;
                    for (String line : lines) {
                        if (ConformanceTest.check(m, line) != null) failures++;
                    }
                    return failures;
                }));
            }
            for (Future<Integer> f : results) assertEquals(0, f.get());
        } finally {
            pool.shutdown();
        }
    }

    @Test
    void timesReadAndWriteAsInSwift() {
        assertEquals("2026-03-01T07:30:00.250Z", Timestamp.parse("2026-03-01T09:30:00.250+02:00").toString());
        assertEquals("2026-03-01T09:30:00.200Z", Timestamp.parse("2026-03-01t09:30:00.2z").toString());
        assertEquals("2026-03-01T09:30:00.999Z", Timestamp.parse("2026-03-01 09:30:00.999999Z").toString());
        assertEquals("2026-03-01T00:00:00Z", Timestamp.parse("2026-03-01").toString());
        assertEquals("0001-01-01T00:00:00Z", Timestamp.ofEpochMilli(Timestamp.EARLIEST_MILLIS).toString());
        assertEquals("1969-12-31T23:59:59.999Z", Timestamp.ofEpochMilli(-1).toString());
        for (String bad : new String[] {"2026-02-29T00:00:00Z", "2026-03-01T24:00:00Z", "2026-03-01T09:30:60Z", "2026-03-01T09:30:00",
            "0000-01-01T00:00:00Z", "2026-03-01T09:30:00.Z", "2026-03-01T09:30:00+0200", "2026-03-01T09:30Z", "+2026-03-01", "yesterday"}) {
            assertNull(Timestamp.tryParse(bad), bad);
        }
        assertThrows(IllegalArgumentException.class, () -> Timestamp.ofEpochMilli(Timestamp.LATEST_MILLIS + 1));
    }

    static String eventRefusal(String json) {
        return assertThrows(SessionPolicyException.class, () -> Event.fromJson(json)).code();
    }

    static String stateRefusal(String json) {
        return assertThrows(SessionPolicyException.class, () -> SessionState.fromJson(json)).code();
    }

    @Test
    void theStrictReadersRefuseAsSwiftDoes() throws Exception {
        String t = "\"time\":\"2026-03-01T09:00:00Z\"";
        assertEquals("missing-key", eventRefusal("{\"type\":\"launch\"," + t + "}"));
        assertEquals("missing-key", eventRefusal("{\"type\":\"launch\"}"));
        assertEquals("unknown-key", eventRefusal("{\"type\":\"launch\"," + t + ",\"netwrok\":\"online\"}"));
        assertEquals("invalid-value", eventRefusal("{\"type\":\"launch\"," + t + ",\"network\":\"wifi\"}"));
        assertEquals("invalid-value", eventRefusal("{\"type\":\"launch\"," + t + ",\"network\":\"online\",\"user\":\" alice\"}"));
        assertEquals("wrong-type", eventRefusal("{\"type\":\"launch\"," + t + ",\"network\":null}"));
        assertEquals("invalid-value", eventRefusal("{\"type\":\"logout\"," + t + ",\"unsynced_items\":-1}"));
        assertEquals("wrong-type", eventRefusal("{\"type\":\"logout\"," + t + ",\"unsynced_items\":1.5}"));
        assertEquals("wrong-type", eventRefusal("{\"type\":\"logout\"," + t + ",\"unsynced_items\":\"2\"}"));
        assertEquals("wrong-type", eventRefusal("{\"type\":\"logout\"," + t + ",\"attributes\":[]}"));
        assertEquals("invalid-time", eventRefusal("{\"type\":\"logout\",\"time\":\"+3d\"}"));
        assertEquals("duplicate-key", eventRefusal("{\"type\":\"logout\",\"type\":\"logout\"," + t + "}"));
        assertEquals("duplicate-key", eventRefusal("{\"type\":\"logout\"," + t + ",\"attributes\":{\"caf\u00e9\":\"a\",\"caf\\u00e9\":\"b\"}}"));
        // Two spellings of one text are two keys (no normalization).
        assertEquals(2, Event.fromJson("{\"type\":\"logout\"," + t + ",\"attributes\":{\"caf\u00e9\":\"a\",\"cafe\u0301\":\"b\"}}").attributes().size());
        assertEquals("invalid-json", eventRefusal("{\"type\":\"logout\"," + t + ",}"));
        assertEquals("invalid-json", eventRefusal("{\"type\":\"logout\"," + t + ",\"user\":\"\\ud800\"}"));
        assertEquals("empty-document", eventRefusal(""));
        assertEquals("wrong-type", eventRefusal("\"launch\""));
        // A number or boolean where a name is expected is refused, as in Swift; an attribute's
        // value is read as its text.
        assertEquals("wrong-type", eventRefusal("{\"type\":\"logout\"," + t + ",\"user\":7}"));
        assertEquals("wrong-type", eventRefusal("{\"type\":\"logout\"," + t + ",\"app_id\":false}"));
        Event e = Event.fromJson("{\"type\":\"logout\"," + t + ",\"user\":\"7\",\"attributes\":{\"flag\":true}}");
        assertEquals("7", e.user());
        assertEquals("true", e.attributes().get("flag"));

        assertEquals("missing-key", stateRefusal("{}"));
        assertEquals("invalid-value", stateRefusal("{\"state\":\"flying\"}"));
        assertEquals("invalid-value", stateRefusal("{\"state\":\"active\",\"failures\":{\"biometric\":-1}}"));
        assertEquals("wrong-type", stateRefusal("{\"state\":\"active\",\"read_only\":\"false\"}"));
        assertEquals("unknown-key", stateRefusal("{\"state\":\"active\",\"failures\":{\"face\":1}}"));
        assertEquals("invalid-time", stateRefusal("{\"state\":\"active\",\"highest_time\":\"2026-13-01T00:00:00Z\"}"));
        SessionState s = SessionState.fromJson("{\"state\":\"active\",\"last_online\":\"2026-03-01T09:00:00.5+01:00\"}");
        assertEquals("{\"biometric_locked\":false,\"failures\":{\"biometric\":0,\"idp_login\":0,\"offline_login\":0},"
                + "\"last_online\":\"2026-03-01T08:00:00.500Z\",\"read_only\":false,\"state\":\"active\"}", s.toJson());
    }

    @Test
    void outcomesWriteNoticeDelaysAndEscapesAsSwift() throws Exception {
        PolicyMachine marketsharp = load("i360-marketsharp");
        SessionState active = SessionState.builder().state(MachineState.ACTIVE).user("tech\n\"1\"").device("phone-3")
                .authMode(AuthMode.NONE).lastIdpLogin(T0).lastOnline(T0).lastActivity(T0).highestTime(T0).build();
        Outcome o = marketsharp.evaluate(active, Event.builder(EventKind.TOKEN_REFRESHED, at(5)).attribute("license", "revoked").build());
        assertEquals("license_revoked", o.reason(), o.toJson());
        assertEquals(Duration.ofSeconds(5), o.noticeDelay());
        assertTrue(o.toJson().contains("\"notice_delay\":\"5s\""), o.toJson());
        // The rule reads an attribute the event does not report: it fails closed.
        o = marketsharp.evaluate(active, Event.builder(EventKind.TOKEN_REFRESHED, at(5)).build());
        assertEquals("rule_fact_missing", o.reason(), o.toJson());
        assertEquals(Decision.IDP_LOGIN, o.decision());
        // Control characters and quotes in names are escaped as Foundation escapes them.
        assertTrue(o.toJson().contains("\"user\":\"tech\\n\\\"1\\\"\""), o.toJson());
        assertEquals("1d12h", JsonOut.span(129_600));
        assertEquals("0s", JsonOut.span(0));
        assertEquals("1d1s", JsonOut.span(86_401));
        assertEquals("14d", JsonOut.span(14 * 86_400));
    }
}
