package dev.sessionpolicy;

import androidx.annotation.NonNull;

/**
 * A machine that arrived in a verified envelope ({@code sessionpolicy-envelope/1},
 * docs/envelope.md): the machine, what the envelope says of it (policy, serial, validity,
 * digest, signing key), and the envelope's bytes, which the app stores to restore the machine at
 * the next start ({@link MachineUpdater#restore(byte[])}). Immutable.
 */
public final class SignedMachine {
    private final PolicyMachine machine;
    private final String policy;
    private final long serial;
    private final long issuedAtMillis;
    private final long expiresAtMillis;
    private final String digest;
    private final String keyId;
    private final byte[] envelope;

    SignedMachine(PolicyMachine machine, String policy, long serial, long issuedAtMillis, long expiresAtMillis, String digest,
            String keyId, byte[] envelope) {
        this.machine = machine;
        this.policy = policy;
        this.serial = serial;
        this.issuedAtMillis = issuedAtMillis;
        this.expiresAtMillis = expiresAtMillis;
        this.digest = digest;
        this.keyId = keyId;
        this.envelope = envelope;
    }

    /** The machine to decide with. */
    public @NonNull PolicyMachine machine() {
        return machine;
    }

    /** The policy's name (the envelope's {@code policy}, which is the machine's name). */
    public @NonNull String policy() {
        return policy;
    }

    /** The envelope's serial: a later machine of the policy has a larger one. */
    public long serial() {
        return serial;
    }

    /** When the envelope was signed, in milliseconds since the Unix epoch. */
    public long issuedAtMillis() {
        return issuedAtMillis;
    }

    /** The end of the envelope's validity, in milliseconds since the Unix epoch. */
    public long expiresAtMillis() {
        return expiresAtMillis;
    }

    /** The machine's digest ({@code sha256:} and 64 lowercase hex digits). */
    public @NonNull String digest() {
        return digest;
    }

    /** The id of the pinned key that verified the envelope. */
    public @NonNull String keyId() {
        return keyId;
    }

    /**
     * The envelope to store (a copy): its bytes exactly as they were given to the updater, the
     * white space that may surround it included. Give it to {@link MachineUpdater#restore(byte[])}
     * at the next start.
     */
    public @NonNull byte[] envelope() {
        return envelope.clone();
    }

    @Override
    public String toString() {
        return "SignedMachine(" + policy + " serial " + serial + ", " + digest + ", key " + keyId + ")";
    }
}
