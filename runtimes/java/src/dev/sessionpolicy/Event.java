package dev.sessionpolicy;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Something that happened to a session, with its time and context. Immutable.
 *
 * <p>Read one with {@link #fromJson(String)} (the strict reader: an event missing a fact its
 * kind needs, such as {@code launch} without {@code network}, is refused with
 * {@code missing-key}), or build one with {@link #builder(EventKind, Timestamp)}. Unreported
 * device facts are treated fail-closed: an unknown keystore is not hardware; an unknown
 * integrity is not known to be compromised.
 */
public final class Event {
    final EventKind kind;
    final long time;
    final Network network;
    final String user;
    final String deviceId;
    final Keystore keystore;
    final Integrity integrity;
    final AuthMode authMode;
    final RefreshFailureCause cause;
    final boolean hasUnsyncedItems;
    final long unsyncedItems;
    final String appId;
    /** Attribute names and values, in the order given. */
    final String[] attributeNames;
    final String[] attributeValues;

    private Event(Builder b) {
        kind = b.kind;
        time = b.time;
        network = b.network;
        user = b.user;
        deviceId = b.deviceId;
        keystore = b.keystore;
        integrity = b.integrity;
        authMode = b.authMode;
        cause = b.cause;
        hasUnsyncedItems = b.hasUnsyncedItems;
        unsyncedItems = b.unsyncedItems;
        appId = b.appId;
        attributeNames = b.names.toArray(new String[0]);
        attributeValues = b.values.toArray(new String[0]);
    }

    /** A builder for an event of {@code kind} at {@code time}, with no context. */
    public static @NonNull Builder builder(@NonNull EventKind kind, @NonNull Timestamp time) {
        return new Builder(Objects.requireNonNull(kind, "kind"), Objects.requireNonNull(time, "time").epochMilli());
    }

    /**
     * Reads an event document ({@code {"type":"launch","time":"...","network":"offline",...}})
     * strictly, with the Swift engine's refusals and codes.
     *
     * @throws SessionPolicyException for an event that is not valid
     */
    public static @NonNull Event fromJson(@NonNull String json) throws SessionPolicyException {
        return fromJson(json.getBytes(StandardCharsets.UTF_8));
    }

    /** Reads an event document from UTF-8 bytes; see {@link #fromJson(String)}. */
    public static @NonNull Event fromJson(@NonNull byte[] json) throws SessionPolicyException {
        return InputReader.readEvent(json);
    }

    public @NonNull EventKind kind() {
        return kind;
    }

    /** When it happened (the device's clock for client events). */
    public @NonNull Timestamp time() {
        return Timestamp.ofEpochMilli(time);
    }

    public @Nullable Network network() {
        return network;
    }

    /** The user the event is about (for {@code idp_login_succeeded}: who signed in). */
    public @Nullable String user() {
        return user;
    }

    /** The id of the device the event comes from. */
    public @Nullable String deviceId() {
        return deviceId;
    }

    public @Nullable Keystore keystore() {
        return keystore;
    }

    public @Nullable Integrity integrity() {
        return integrity;
    }

    /** The auth mode used, for {@code idp_login_succeeded}. */
    public @Nullable AuthMode authMode() {
        return authMode;
    }

    /** Why a refresh failed, for {@code refresh_failed}. */
    public @Nullable RefreshFailureCause cause() {
        return cause;
    }

    /** Items not yet synced to the server, reported with {@code logout}. */
    public @Nullable Long unsyncedItems() {
        return hasUnsyncedItems ? unsyncedItems : null;
    }

    /** For {@code device_session_detected}: the app that created the device session. */
    public @Nullable String appId() {
        return appId;
    }

    /** The attributes reported, by name, in the order given. */
    public @NonNull Map<String, String> attributes() {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < attributeNames.length; i++) m.put(attributeNames[i], attributeValues[i]);
        return Collections.unmodifiableMap(m);
    }

    /** The value of attribute {@code name} (names compared scalar by scalar, as every runtime compares them), or null. */
    String attribute(String name) {
        for (int i = 0; i < attributeNames.length; i++) {
            if (Text.same(attributeNames[i], name)) return attributeValues[i];
        }
        return null;
    }

    /** The event as JSON: keys sorted, absent values left out (the shape of the conformance vectors). */
    public @NonNull String toJson() {
        StringBuilder sb = new StringBuilder(200);
        sb.append('{');
        boolean first = true;
        if (appId != null) {
            first = key("app_id", first, sb);
            JsonOut.string(appId, sb);
        }
        if (attributeNames.length > 0) {
            first = key("attributes", first, sb);
            sb.append('{');
            Integer[] order = new Integer[attributeNames.length];
            for (int i = 0; i < order.length; i++) order[i] = i;
            java.util.Arrays.sort(order, (x, y) -> Canonical.compareUtf8(attributeNames[x], attributeNames[y]));
            for (int i = 0; i < order.length; i++) {
                if (i > 0) sb.append(',');
                JsonOut.string(attributeNames[order[i]], sb);
                sb.append(':');
                JsonOut.string(attributeValues[order[i]], sb);
            }
            sb.append('}');
        }
        if (authMode != null) {
            first = key("auth_mode", first, sb);
            JsonOut.string(authMode.wireName(), sb);
        }
        if (cause != null) {
            first = key("cause", first, sb);
            JsonOut.string(cause.wireName(), sb);
        }
        if (deviceId != null || keystore != null || integrity != null) {
            first = key("device", first, sb);
            sb.append('{');
            boolean f = true;
            if (deviceId != null) {
                f = key("id", f, sb);
                JsonOut.string(deviceId, sb);
            }
            if (integrity != null) {
                f = key("integrity", f, sb);
                JsonOut.string(integrity.wireName(), sb);
            }
            if (keystore != null) {
                key("keystore", f, sb);
                JsonOut.string(keystore.wireName(), sb);
            }
            sb.append('}');
        }
        if (network != null) {
            first = key("network", first, sb);
            JsonOut.string(network.wireName(), sb);
        }
        first = key("time", first, sb);
        JsonOut.time(time, sb);
        key("type", first, sb);
        JsonOut.string(kind.wireName(), sb);
        if (hasUnsyncedItems) {
            key("unsynced_items", false, sb);
            sb.append(unsyncedItems);
        }
        if (user != null) {
            key("user", false, sb);
            JsonOut.string(user, sb);
        }
        sb.append('}');
        return sb.toString();
    }

    private static boolean key(String k, boolean first, StringBuilder sb) {
        if (!first) sb.append(',');
        sb.append('"').append(k).append("\":");
        return false;
    }

    @Override
    public String toString() {
        return toJson();
    }

    /** Builds an {@link Event}. */
    public static final class Builder {
        final EventKind kind;
        final long time;
        Network network;
        String user;
        String deviceId;
        Keystore keystore;
        Integrity integrity;
        AuthMode authMode;
        RefreshFailureCause cause;
        boolean hasUnsyncedItems;
        long unsyncedItems;
        String appId;
        final List<String> names = new ArrayList<>();
        final List<String> values = new ArrayList<>();

        Builder(EventKind kind, long time) {
            this.kind = kind;
            this.time = time;
        }

        public @NonNull Builder network(@Nullable Network v) {
            network = v;
            return this;
        }

        public @NonNull Builder user(@Nullable String v) {
            user = v;
            return this;
        }

        public @NonNull Builder deviceId(@Nullable String v) {
            deviceId = v;
            return this;
        }

        public @NonNull Builder keystore(@Nullable Keystore v) {
            keystore = v;
            return this;
        }

        public @NonNull Builder integrity(@Nullable Integrity v) {
            integrity = v;
            return this;
        }

        public @NonNull Builder authMode(@Nullable AuthMode v) {
            authMode = v;
            return this;
        }

        public @NonNull Builder cause(@Nullable RefreshFailureCause v) {
            cause = v;
            return this;
        }

        /** Items not yet synced; {@code null} for not reported. Never negative. */
        public @NonNull Builder unsyncedItems(@Nullable Long v) {
            if (v != null && v < 0) throw new IllegalArgumentException("unsynced_items cannot be negative");
            hasUnsyncedItems = v != null;
            unsyncedItems = v == null ? 0 : v;
            return this;
        }

        public @NonNull Builder appId(@Nullable String v) {
            appId = v;
            return this;
        }

        /** Adds (or replaces) attribute {@code name}, a value as text ({@code "revoked"}, {@code "2.4.0"}). */
        public @NonNull Builder attribute(@NonNull String name, @NonNull String value) {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(value, "value");
            for (int i = 0; i < names.size(); i++) {
                if (Text.same(names.get(i), name)) {
                    values.set(i, value);
                    return this;
                }
            }
            names.add(name);
            values.add(value);
            return this;
        }

        public @NonNull Event build() {
            return new Event(this);
        }
    }
}
