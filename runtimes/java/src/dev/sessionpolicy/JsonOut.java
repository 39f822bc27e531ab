package dev.sessionpolicy;

/**
 * Writes JSON exactly as the Swift engine writes outcomes and states ({@code JSONEncoder} with
 * sorted keys, Foundation's escapes): {@code \"}, {@code \\}, {@code \b}, {@code \f},
 * {@code \n}, {@code \r}, {@code \t}, other characters below U+0020 as a backslash, {@code u00} and two
 * lowercase hex digits; {@code /}, DEL and everything else as it is.
 */
final class JsonOut {
    private JsonOut() {}

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    static void string(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0, n = s.length(); i < n; i++) {
            char c = s.charAt(i);
            if (c >= 0x20 && c != '"' && c != '\\') {
                out.append(c);
                continue;
            }
            out.append('\\');
            switch (c) {
                case '"': out.append('"'); break;
                case '\\': out.append('\\'); break;
                case 0x08: out.append('b'); break;
                case 0x0C: out.append('f'); break;
                case 0x0A: out.append('n'); break;
                case 0x0D: out.append('r'); break;
                case 0x09: out.append('t'); break;
                default: out.append("u00").append(HEX[c >> 4]).append(HEX[c & 0xF]);
            }
        }
        out.append('"');
    }

    static void time(long millis, StringBuilder out) {
        out.append('"');
        Timestamp.format(millis, out);
        out.append('"');
    }

    /** A time span as the Swift engine writes it: {@code 1d12h}, {@code 5s}, {@code 0s} (no weeks). */
    static String span(long seconds) {
        if (seconds == 0) return "0s";
        StringBuilder sb = new StringBuilder();
        long rest = seconds;
        long[] sizes = {86_400, 3600, 60, 1};
        char[] units = {'d', 'h', 'm', 's'};
        for (int i = 0; i < 4; i++) {
            if (rest >= sizes[i]) {
                sb.append(rest / sizes[i]).append(units[i]);
                rest %= sizes[i];
            }
        }
        return sb.toString();
    }

    /** A session state, keys in byte order, absent values left out. */
    static void state(MachineState state, String user, String device, AuthMode authMode, long lastIdpLogin, long lastOnline,
            long lastActivity, long highestTime, long biometricFailures, long offlineLoginFailures, long idpLoginFailures,
            boolean readOnly, boolean biometricLocked, StringBuilder out) {
        out.append('{');
        if (authMode != null) {
            out.append("\"auth_mode\":");
            string(authMode.wireName(), out);
            out.append(',');
        }
        out.append("\"biometric_locked\":").append(biometricLocked);
        if (device != null) {
            out.append(",\"device\":");
            string(device, out);
        }
        out.append(",\"failures\":{\"biometric\":").append(biometricFailures).append(",\"idp_login\":").append(idpLoginFailures)
                .append(",\"offline_login\":").append(offlineLoginFailures).append('}');
        if (highestTime != MutableSessionState.NONE) {
            out.append(",\"highest_time\":");
            time(highestTime, out);
        }
        if (lastActivity != MutableSessionState.NONE) {
            out.append(",\"last_activity\":");
            time(lastActivity, out);
        }
        if (lastIdpLogin != MutableSessionState.NONE) {
            out.append(",\"last_idp_login\":");
            time(lastIdpLogin, out);
        }
        if (lastOnline != MutableSessionState.NONE) {
            out.append(",\"last_online\":");
            time(lastOnline, out);
        }
        out.append(",\"read_only\":").append(readOnly);
        out.append(",\"state\":");
        string(state.wireName(), out);
        if (user != null) {
            out.append(",\"user\":");
            string(user, out);
        }
        out.append('}');
    }
}
