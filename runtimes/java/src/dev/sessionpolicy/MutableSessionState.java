package dev.sessionpolicy;

import androidx.annotation.NonNull;

/**
 * A session state the caller keeps and the machine updates in place: what
 * {@link PolicyMachine#evaluate(MutableSessionState, Event)} takes, the allocation-free form of
 * evaluation (as Swift's {@code evaluate(&state, event)}). Not thread-safe: one holder per
 * session, used by one thread at a time. Copy it in and out with {@link #set(SessionState)} and
 * {@link #toState()}.
 */
public final class MutableSessionState {
    /** Internal marker of an absent time. Every real time is within years 0001 to 9999. */
    static final long NONE = Long.MIN_VALUE;

    MachineState state = MachineState.SIGNED_OUT;
    String user;
    String device;
    AuthMode authMode;
    long lastIdpLogin = NONE;
    long lastOnline = NONE;
    long lastActivity = NONE;
    long highestTime = NONE;
    long biometricFailures;
    long offlineLoginFailures;
    long idpLoginFailures;
    boolean readOnly;
    boolean biometricLocked;

    /** A holder of a signed-out session with nothing known. */
    public MutableSessionState() {}

    /** A holder starting at {@code state}. */
    public MutableSessionState(@NonNull SessionState state) {
        set(state);
    }

    /** Replaces the held state with {@code s}. Allocates nothing. */
    public void set(@NonNull SessionState s) {
        state = s.state;
        user = s.user;
        device = s.device;
        authMode = s.authMode;
        lastIdpLogin = s.lastIdpLogin;
        lastOnline = s.lastOnline;
        lastActivity = s.lastActivity;
        highestTime = s.highestTime;
        biometricFailures = s.biometricFailures;
        offlineLoginFailures = s.offlineLoginFailures;
        idpLoginFailures = s.idpLoginFailures;
        readOnly = s.readOnly;
        biometricLocked = s.biometricLocked;
    }

    /** The held state as an immutable value. */
    public @NonNull SessionState toState() {
        return new SessionState(this);
    }

    /** The machine state held. */
    public @NonNull MachineState state() {
        return state;
    }

    /** The held state as JSON, byte for byte as the Swift engine writes it. */
    public @NonNull String toJson() {
        StringBuilder sb = new StringBuilder(320);
        JsonOut.state(state, user, device, authMode, lastIdpLogin, lastOnline, lastActivity, highestTime, biometricFailures,
                offlineLoginFailures, idpLoginFailures, readOnly, biometricLocked, sb);
        return sb.toString();
    }

    /**
     * Clears the session as a wipe does: signed out, keeping only {@code highestTime} and the
     * device's {@code biometricLocked}.
     */
    void clearKeepingHighest() {
        long h = highestTime;
        state = MachineState.SIGNED_OUT;
        user = null;
        device = null;
        authMode = null;
        lastIdpLogin = NONE;
        lastOnline = NONE;
        lastActivity = NONE;
        biometricFailures = 0;
        offlineLoginFailures = 0;
        idpLoginFailures = 0;
        readOnly = false;
        highestTime = h;
    }

    @Override
    public String toString() {
        return toJson();
    }
}
