package dev.sessionpolicy;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;
import java.time.Duration;
import java.util.List;

/**
 * The result of evaluating one event: the decision, why, what to tell the user, and the
 * session's new state, which the app stores in place of the old one. Immutable.
 */
public final class Outcome {
    private final Verdict verdict;
    private final SessionState state;

    Outcome(Verdict verdict, SessionState state) {
        this.verdict = verdict;
        this.state = state;
    }

    /** The decision; {@code null} for events that need nothing from the user. */
    public @Nullable Decision decision() {
        return verdict.decision;
    }

    /** Why, machine-readable. */
    public @NonNull String reason() {
        return verdict.reason;
    }

    /** Why, for people. */
    public @NonNull String message() {
        return verdict.message;
    }

    /** Notices for the user interface, in name order. */
    public @NonNull List<Notice> notices() {
        return verdict.notices();
    }

    /** The OAuth scope for an offline login. */
    public @Nullable Scope scope() {
        return verdict.scope;
    }

    /** For {@code idp_login}: the auth mode to use at the IdP. */
    public @Nullable AuthMode authMode() {
        return verdict.authMode;
    }

    /** How long the user sees the message before the client acts. */
    public @Nullable Duration noticeDelay() {
        return verdict.noticeDelay;
    }

    /** The id of the transition that decided; -1 for an event refused before any guard. */
    public int transition() {
        return verdict.transition;
    }

    /** The session's new state: store it in place of the old one. */
    public @NonNull SessionState state() {
        return state;
    }

    /** The outcome without its state. */
    public @NonNull Verdict verdict() {
        return verdict;
    }

    /**
     * The outcome as JSON, byte for byte as the Swift engine writes it: every member, absent
     * values as {@code null}, keys in byte order, no whitespace.
     */
    public @NonNull String toJson() {
        StringBuilder sb = new StringBuilder(640);
        verdict.writeHead(sb);
        state.writeJson(sb);
        sb.append(",\"transition\":").append(verdict.transition).append('}');
        return sb.toString();
    }

    @Override
    public String toString() {
        return toJson();
    }
}
