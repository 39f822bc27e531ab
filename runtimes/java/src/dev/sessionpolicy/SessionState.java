package dev.sessionpolicy;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * The state of one user's session on one device: a small immutable value the app stores
 * (encrypted) and passes to every evaluation. Absent values mean "not known".
 *
 * <p>Read it with {@link #fromJson(String)}, the strict reader (the same refusals as the Swift
 * engine), write it with {@link #toJson()} (the same bytes), or build one with {@link #builder()}.
 */
public final class SessionState {
    private static final SessionState SIGNED_OUT = new Builder().build();

    final MachineState state;
    final String user;
    final String device;
    final AuthMode authMode;
    // Milliseconds since the epoch, MutableSessionState.NONE when absent.
    final long lastIdpLogin;
    final long lastOnline;
    final long lastActivity;
    final long highestTime;
    final long biometricFailures;
    final long offlineLoginFailures;
    final long idpLoginFailures;
    final boolean readOnly;
    final boolean biometricLocked;

    SessionState(MutableSessionState s) {
        this.state = s.state;
        this.user = s.user;
        this.device = s.device;
        this.authMode = s.authMode;
        this.lastIdpLogin = s.lastIdpLogin;
        this.lastOnline = s.lastOnline;
        this.lastActivity = s.lastActivity;
        this.highestTime = s.highestTime;
        this.biometricFailures = s.biometricFailures;
        this.offlineLoginFailures = s.offlineLoginFailures;
        this.idpLoginFailures = s.idpLoginFailures;
        this.readOnly = s.readOnly;
        this.biometricLocked = s.biometricLocked;
    }

    /** A signed-out session with nothing known: the state of a fresh install. */
    public static @NonNull SessionState signedOut() {
        return SIGNED_OUT;
    }

    /** A builder for a state, starting signed out with nothing known. */
    public static @NonNull Builder builder() {
        return new Builder();
    }

    /** A builder starting from this state. */
    public @NonNull Builder toBuilder() {
        Builder b = new Builder();
        b.s.set(this);
        return b;
    }

    /**
     * Reads a session state document ({@code {"state":"active","user":"alice",...}}) strictly:
     * strict JSON, no unknown or repeated keys, names without surrounding spaces, RFC 3339
     * times, counts not negative.
     *
     * @throws SessionPolicyException with the Swift engine's diagnostic codes
     */
    public static @NonNull SessionState fromJson(@NonNull String json) throws SessionPolicyException {
        return fromJson(json.getBytes(StandardCharsets.UTF_8));
    }

    /** Reads a session state document from UTF-8 bytes; see {@link #fromJson(String)}. */
    public static @NonNull SessionState fromJson(@NonNull byte[] json) throws SessionPolicyException {
        return InputReader.readState(json);
    }

    /** The machine state. */
    public @NonNull MachineState state() {
        return state;
    }

    /** The signed-in user. */
    public @Nullable String user() {
        return user;
    }

    /** The device id the session is bound to. */
    public @Nullable String device() {
        return device;
    }

    /** The auth mode of the last IdP login. */
    public @Nullable AuthMode authMode() {
        return authMode;
    }

    /** When the user last completed a full IdP login. */
    public @Nullable Timestamp lastIdpLogin() {
        return time(lastIdpLogin);
    }

    /** When the server last validated the session. */
    public @Nullable Timestamp lastOnline() {
        return time(lastOnline);
    }

    /** When the user was last active. */
    public @Nullable Timestamp lastActivity() {
        return time(lastActivity);
    }

    /** The highest event time seen: the clock never goes back past it. */
    public @Nullable Timestamp highestTime() {
        return time(highestTime);
    }

    /** Consecutive failed biometric prompts. */
    public long biometricFailures() {
        return biometricFailures;
    }

    /** Consecutive failed offline logins. */
    public long offlineLoginFailures() {
        return offlineLoginFailures;
    }

    /** Consecutive failed IdP logins. */
    public long idpLoginFailures() {
        return idpLoginFailures;
    }

    /** Signed in without new data (license revoked). */
    public boolean readOnly() {
        return readOnly;
    }

    /**
     * The device's biometric path is closed until the next IdP login (enrollment changed): set
     * also while signed out, kept by a wipe or a sign-out and by an adopted device session.
     */
    public boolean biometricLocked() {
        return biometricLocked;
    }

    /** The state as JSON, byte for byte as the Swift engine writes it (absent values left out). */
    public @NonNull String toJson() {
        StringBuilder sb = new StringBuilder(320);
        writeJson(sb);
        return sb.toString();
    }

    void writeJson(StringBuilder sb) {
        JsonOut.state(state, user, device, authMode, lastIdpLogin, lastOnline, lastActivity, highestTime, biometricFailures,
                offlineLoginFailures, idpLoginFailures, readOnly, biometricLocked, sb);
    }

    private static Timestamp time(long millis) {
        return millis == MutableSessionState.NONE ? null : Timestamp.ofEpochMilli(millis);
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) return true;
        if (!(o instanceof SessionState)) return false;
        SessionState x = (SessionState) o;
        return state == x.state && Objects.equals(user, x.user) && Objects.equals(device, x.device) && authMode == x.authMode
                && lastIdpLogin == x.lastIdpLogin && lastOnline == x.lastOnline && lastActivity == x.lastActivity
                && highestTime == x.highestTime && biometricFailures == x.biometricFailures
                && offlineLoginFailures == x.offlineLoginFailures && idpLoginFailures == x.idpLoginFailures
                && readOnly == x.readOnly && biometricLocked == x.biometricLocked;
    }

    @Override
    public int hashCode() {
        return Objects.hash(state, user, device, authMode, lastIdpLogin, lastOnline, lastActivity, highestTime, biometricFailures,
                offlineLoginFailures, idpLoginFailures, readOnly, biometricLocked);
    }

    /** The JSON form. */
    @Override
    public String toString() {
        return toJson();
    }

    /** Builds a {@link SessionState}. Not thread-safe; {@link #build()} returns an immutable value. */
    public static final class Builder {
        final MutableSessionState s = new MutableSessionState();

        Builder() {}

        /** The machine state (default {@code signed_out}). */
        public @NonNull Builder state(@NonNull MachineState v) {
            s.state = Objects.requireNonNull(v, "state");
            return this;
        }

        public @NonNull Builder user(@Nullable String v) {
            s.user = v;
            return this;
        }

        public @NonNull Builder device(@Nullable String v) {
            s.device = v;
            return this;
        }

        public @NonNull Builder authMode(@Nullable AuthMode v) {
            s.authMode = v;
            return this;
        }

        public @NonNull Builder lastIdpLogin(@Nullable Timestamp v) {
            s.lastIdpLogin = millis(v);
            return this;
        }

        public @NonNull Builder lastOnline(@Nullable Timestamp v) {
            s.lastOnline = millis(v);
            return this;
        }

        public @NonNull Builder lastActivity(@Nullable Timestamp v) {
            s.lastActivity = millis(v);
            return this;
        }

        public @NonNull Builder highestTime(@Nullable Timestamp v) {
            s.highestTime = millis(v);
            return this;
        }

        /** The failure counters; none may be negative. */
        public @NonNull Builder failures(long biometric, long offlineLogin, long idpLogin) {
            if (biometric < 0 || offlineLogin < 0 || idpLogin < 0) throw new IllegalArgumentException("a failure count cannot be negative");
            s.biometricFailures = biometric;
            s.offlineLoginFailures = offlineLogin;
            s.idpLoginFailures = idpLogin;
            return this;
        }

        public @NonNull Builder readOnly(boolean v) {
            s.readOnly = v;
            return this;
        }

        public @NonNull Builder biometricLocked(boolean v) {
            s.biometricLocked = v;
            return this;
        }

        public @NonNull SessionState build() {
            return new SessionState(s);
        }

        private static long millis(Timestamp t) {
            return t == null ? MutableSessionState.NONE : t.epochMilli();
        }
    }
}
