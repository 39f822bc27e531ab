package dev.sessionpolicy;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The decision of one evaluation without the new state: what the in-place
 * {@link PolicyMachine#evaluate(MutableSessionState, Event)} returns (an {@link Outcome} less
 * its state). Immutable; verdicts are shared between evaluations.
 */
public final class Verdict {
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static final List<Notice>[] NOTICE_LISTS = new List[1 << Notice.values().length];
    private static final Notice[] NOTICES = Notice.values();

    static {
        for (int mask = 0; mask < NOTICE_LISTS.length; mask++) {
            List<Notice> list = new ArrayList<>();
            for (Notice n : Notice.values()) {
                if ((mask & n.bit()) != 0) list.add(n);
            }
            NOTICE_LISTS[mask] = Collections.unmodifiableList(list);
        }
    }

    final Decision decision;
    final String reason;
    final String message;
    final int noticeBits;
    final Scope scope;
    final AuthMode authMode;
    final Duration noticeDelay;
    final long noticeDelaySeconds;
    final int transition;

    Verdict(Decision decision, String reason, String message, int noticeBits, Scope scope, AuthMode authMode, Duration noticeDelay,
            long noticeDelaySeconds, int transition) {
        this.decision = decision;
        this.reason = reason;
        this.message = message;
        this.noticeBits = noticeBits;
        this.scope = scope;
        this.authMode = authMode;
        this.noticeDelay = noticeDelay;
        this.noticeDelaySeconds = noticeDelaySeconds;
        this.transition = transition;
    }

    /** The decision; {@code null} for events that need nothing from the user ({@code background}, {@code token_refreshed}). */
    public @Nullable Decision decision() {
        return decision;
    }

    /** Why, machine-readable ({@code offline_window_exceeded}, ...). An open set: policies name their own. */
    public @NonNull String reason() {
        return reason;
    }

    /** Why, for people. */
    public @NonNull String message() {
        return message;
    }

    /** Notices for the user interface, in name order. */
    public @NonNull List<Notice> notices() {
        return NOTICE_LISTS[noticeBits];
    }

    /** Whether {@code notice} is among {@link #notices()}. */
    public boolean has(@NonNull Notice notice) {
        return (noticeBits & notice.bit()) != 0;
    }

    /** The OAuth scope for an offline login ({@code allow}/{@code require_biometric} on the offline path). */
    public @Nullable Scope scope() {
        return scope;
    }

    /** For {@code idp_login}: the auth mode to use at the IdP (the one used last time). */
    public @Nullable AuthMode authMode() {
        return authMode;
    }

    /** How long the user sees the message before the client acts. */
    public @Nullable Duration noticeDelay() {
        return noticeDelay;
    }

    /** The id of the transition that decided; -1 for an event refused before any guard ({@code invalid_event}). */
    public int transition() {
        return transition;
    }

    /** Writes the outcome members before {@code state}, with a trailing {@code "state":}. */
    void writeHead(StringBuilder sb) {
        sb.append("{\"auth_mode\":");
        if (authMode == null) sb.append("null");
        else JsonOut.string(authMode.wireName(), sb);
        sb.append(",\"decision\":");
        if (decision == null) sb.append("null");
        else JsonOut.string(decision.wireName(), sb);
        sb.append(",\"message\":");
        JsonOut.string(message, sb);
        sb.append(",\"notice_delay\":");
        if (noticeDelaySeconds < 0) sb.append("null");
        else JsonOut.string(JsonOut.span(noticeDelaySeconds), sb);
        sb.append(",\"notices\":[");
        boolean first = true;
        for (Notice n : NOTICES) {
            if ((noticeBits & n.bit()) == 0) continue;
            if (!first) sb.append(',');
            first = false;
            JsonOut.string(n.wireName(), sb);
        }
        sb.append("],\"reason\":");
        JsonOut.string(reason, sb);
        sb.append(",\"scope\":");
        if (scope == null) sb.append("null");
        else JsonOut.string(scope.wireName(), sb);
        sb.append(",\"state\":");
    }

    @Override
    public String toString() {
        return "Verdict(" + decision + ", " + reason + ", transition " + transition + ")";
    }
}
