package dev.sessionpolicy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What a transition does when its guard holds, compiled at load: effects as a bit set, the
 * target as an int, and a small cache of the verdicts it has produced, so that evaluating
 * allocates nothing once a verdict has been seen.
 */
final class Action {
    /** The effects by name, in bit order (the order they apply in). */
    static final String[] EFFECTS = {"establish", "clear_session", "record_online", "record_activity", "count_biometric_failure",
        "count_offline_failure", "count_idp_failure", "reset_biometric_failures", "lock_biometric", "set_read_only",
        "adopt_behind_biometric"};
    static final int ESTABLISH = 1;
    static final int CLEAR_SESSION = 1 << 1;
    static final int RECORD_ONLINE = 1 << 2;
    static final int RECORD_ACTIVITY = 1 << 3;
    static final int COUNT_BIOMETRIC_FAILURE = 1 << 4;
    static final int COUNT_OFFLINE_FAILURE = 1 << 5;
    static final int COUNT_IDP_FAILURE = 1 << 6;
    static final int RESET_BIOMETRIC_FAILURES = 1 << 7;
    static final int LOCK_BIOMETRIC = 1 << 8;
    static final int SET_READ_ONLY = 1 << 9;
    static final int ADOPT_BEHIND_BIOMETRIC = 1 << 10;

    /** Targets besides a state's ordinal. */
    static final int RESTING = -1;
    static final int UNCHANGED = -2;

    /** Verdicts kept per transition; past this, further variants are made afresh. */
    private static final int CACHE_LIMIT = 64;

    final Decision decision;
    final String reason;
    final String message;
    final int target;
    final int effects;
    final int notices;
    final boolean namesScope;
    final boolean usesPreviousAuthMode;
    /** Seconds, or -1 for none. */
    final long noticeDelaySeconds;
    final Duration noticeDelay;
    private final AtomicReference<Verdict[]> cache = new AtomicReference<>(new Verdict[0]);

    Action(Decision decision, String reason, String message, int target, int effects, int notices, boolean namesScope,
            boolean usesPreviousAuthMode, long noticeDelaySeconds) {
        this.decision = decision;
        this.reason = reason;
        this.message = message;
        this.target = target;
        this.effects = effects;
        this.notices = notices;
        this.namesScope = namesScope;
        this.usesPreviousAuthMode = usesPreviousAuthMode;
        this.noticeDelaySeconds = noticeDelaySeconds;
        this.noticeDelay = noticeDelaySeconds < 0 ? null : Duration.ofSeconds(noticeDelaySeconds);
    }

    /** The verdict of transition {@code id} with these dynamic parts: from the cache, or made and cached. */
    Verdict verdict(int id, int noticeBits, Scope scope, AuthMode authMode) {
        Verdict[] seen = cache.get();
        for (Verdict v : seen) {
            if (v.noticeBits == noticeBits && v.scope == scope && v.authMode == authMode) return v;
        }
        Verdict v = new Verdict(decision, reason, message, noticeBits, scope, authMode, noticeDelay, noticeDelaySeconds, id);
        if (seen.length < CACHE_LIMIT) {
            Verdict[] more = java.util.Arrays.copyOf(seen, seen.length + 1);
            more[seen.length] = v;
            cache.compareAndSet(seen, more); // losing a race only loses a cache entry
        }
        return v;
    }

    /** The action as the machine document writes it. */
    Map<String, Object> canonical() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("decision", decision == null ? null : decision.wireName());
        m.put("reason", reason);
        m.put("message", message);
        m.put("target", target == RESTING ? "resting" : target == UNCHANGED ? "unchanged" : MachineState.values()[target].wireName());
        List<Object> fx = new ArrayList<>();
        for (int i = 0; i < EFFECTS.length; i++) {
            if ((effects & (1 << i)) != 0) fx.add(EFFECTS[i]);
        }
        m.put("effects", fx);
        List<Object> ns = new ArrayList<>();
        for (Notice n : Notice.values()) {
            if ((notices & n.bit()) != 0) ns.add(n.wireName());
        }
        m.put("notices", ns);
        m.put("names_scope", namesScope);
        m.put("uses_previous_auth_mode", usesPreviousAuthMode);
        m.put("notice_delay_seconds", noticeDelaySeconds < 0 ? null : (Object) noticeDelaySeconds);
        return m;
    }
}
