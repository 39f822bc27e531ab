package dev.sessionpolicy;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;

/** The machine states a session can be in. Each constant has the word the JSON forms use ({@link #wireName()}). */
public enum MachineState {
    SIGNED_OUT("signed_out"),
    ACTIVE("active"),
    SUSPENDED("suspended"),
    AWAITING_BIOMETRIC("awaiting_biometric"),
    AWAITING_IDP("awaiting_idp"),
    READ_ONLY("read_only");

    private static final MachineState[] ALL = values();

    private final String wireName;

    MachineState(String wireName) {
        this.wireName = wireName;
    }

    /** The word as written in JSON (for example {@code "signed_out"}). */
    public @NonNull String wireName() {
        return wireName;
    }

    /** The constant written {@code word}, or {@code null} when there is none. */
    public static @Nullable MachineState fromWireName(@Nullable String word) {
        if (word == null) return null;
        for (MachineState v : ALL) {
            if (v.wireName.equals(word)) return v;
        }
        return null;
    }

    @Override
    public String toString() {
        return wireName;
    }

    /** True for states where a session (credentials, user data) exists on the device. */
    public boolean hasSession() {
        return this != SIGNED_OUT;
    }
}
