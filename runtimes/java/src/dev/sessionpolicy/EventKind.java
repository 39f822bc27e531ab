package dev.sessionpolicy;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;

/** The kinds of events the machine reacts to. Each constant has the word the JSON forms use ({@link #wireName()}). */
public enum EventKind {
    LAUNCH("launch"),
    RESUME("resume"),
    BACKGROUND("background"),
    BIOMETRIC_SUCCEEDED("biometric_succeeded"),
    BIOMETRIC_FAILED("biometric_failed"),
    OFFLINE_LOGIN_FAILED("offline_login_failed"),
    IDP_LOGIN_SUCCEEDED("idp_login_succeeded"),
    IDP_LOGIN_FAILED("idp_login_failed"),
    TOKEN_REFRESHED("token_refreshed"),
    REFRESH_FAILED("refresh_failed"),
    ACCOUNT_DEACTIVATED("account_deactivated"),
    TOKENS_REVOKED("tokens_revoked"),
    LICENSE_REVOKED("license_revoked"),
    BIOMETRIC_ENROLLMENT_CHANGED("biometric_enrollment_changed"),
    LOGOUT("logout"),
    REGISTER("register"),
    DEVICE_SESSION_DETECTED("device_session_detected");

    private static final EventKind[] ALL = values();

    private final String wireName;

    EventKind(String wireName) {
        this.wireName = wireName;
    }

    /** The word as written in JSON (for example {@code "launch"}). */
    public @NonNull String wireName() {
        return wireName;
    }

    /** The constant written {@code word}, or {@code null} when there is none. */
    public static @Nullable EventKind fromWireName(@Nullable String word) {
        if (word == null) return null;
        for (EventKind v : ALL) {
            if (v.wireName.equals(word)) return v;
        }
        return null;
    }

    @Override
    public String toString() {
        return wireName;
    }

    /** True for the server signals, which skip the device checks. */
    public boolean isServerSignal() {
        return this == ACCOUNT_DEACTIVATED || this == TOKENS_REVOKED || this == LICENSE_REVOKED
                || this == BIOMETRIC_ENROLLMENT_CHANGED;
    }
}
