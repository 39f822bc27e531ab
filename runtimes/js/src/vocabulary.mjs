// The vocabulary: states, events, decisions, the closed sets of facts' words, effects,
// notices and the facts each event kind needs. Held against spec/vocabulary.json by
// test/vocabulary.test.mjs.

import { quote } from './text.mjs';

/** The machine states, in the engine's order. */
export const STATES = Object.freeze(['signed_out', 'active', 'suspended', 'awaiting_biometric', 'awaiting_idp', 'read_only']);
/** The event kinds, in the engine's order. */
export const EVENTS = Object.freeze([
  'launch', 'resume', 'background', 'biometric_succeeded', 'biometric_failed', 'offline_login_failed',
  'idp_login_succeeded', 'idp_login_failed', 'token_refreshed', 'refresh_failed', 'account_deactivated',
  'tokens_revoked', 'license_revoked', 'biometric_enrollment_changed', 'logout', 'register', 'device_session_detected',
]);
const DECISIONS = ['allow', 'require_biometric', 'idp_login', 'wipe'];
const AUTH_MODES = ['none', 'biometric', 'password', 'pin'];
const NETWORKS = ['online', 'offline'];
const KEYSTORES = ['hardware', 'software', 'none'];
const INTEGRITIES = ['ok', 'compromised'];
const CAUSES = ['network', 'invalid_token'];
const SCOPES = ['no_auth_offline', 'bio_auth_offline', 'no_auth_grant', 'bio_auth_grant', 'bio_auth_grant_SE'];
const FAILURE_PATHS = ['biometric', 'offline_login', 'idp_login'];
const SWITCHES = ['different_user', 'different_device'];
const COMPARISONS = ['==', '!=', '<', '<=', '>', '>='];

const STATE_INDEX = Object.create(null);
STATES.forEach((s, i) => (STATE_INDEX[s] = i));
const EVENT_INDEX = Object.create(null);
EVENTS.forEach((e, i) => (EVENT_INDEX[e] = i));

/** The word of `list` equal to `text` (the interned constant), or undefined. */
function word(list, text) {
  for (let i = 0; i < list.length; i++) if (list[i] === text) return list[i];
  return undefined;
}

/** The effects, in bit order (docs/machine-format.md). */
const EFFECTS = [
  'establish', 'clear_session', 'record_online', 'record_activity', 'count_biometric_failure', 'count_offline_failure',
  'count_idp_failure', 'reset_biometric_failures', 'lock_biometric', 'set_read_only', 'adopt_behind_biometric',
];
const FX_ESTABLISH = 1 << 0;
const FX_CLEAR = 1 << 1;
const FX_RECORD_ONLINE = 1 << 2;
const FX_RECORD_ACTIVITY = 1 << 3;
const FX_COUNT_BIOMETRIC = 1 << 4;
const FX_COUNT_OFFLINE = 1 << 5;
const FX_COUNT_IDP = 1 << 6;
const FX_RESET_BIOMETRIC = 1 << 7;
const FX_LOCK_BIOMETRIC = 1 << 8;
const FX_SET_READ_ONLY = 1 << 9;
const FX_ADOPT = 1 << 10;

/** The notices with their bits, in name order (how they are written). */
const NOTICES = [
  ['network_required', 1],
  ['read_only', 8],
  ['retry_later', 16],
  ['suggest_auth_mode_change', 2],
  ['unsynced_data', 4],
];
const N_NETWORK_REQUIRED = 1;
const N_READ_ONLY = 8;
/** The sorted names of every set of notices, by its bits: shared, frozen lists. */
const NOTICE_LISTS = Array.from({ length: 32 }, (_, mask) =>
  Object.freeze(NOTICES.filter(([, bit]) => mask & bit).map(([name]) => name)),
);
const NOTICE_JSON = NOTICE_LISTS.map((list) => '[' + list.map(quote).join(',') + ']');

/** The built-in reasons' messages that the engine itself writes. */
const MESSAGE_UNEXPECTED_EVENT = "this event is not expected in the session's current state: sign in again";

/** The facts an event kind must carry, in reporting order: [key, field]. */
const REQUIRED_FACTS = Object.create(null);
REQUIRED_FACTS.launch = [['network', 'network']];
REQUIRED_FACTS.resume = [['network', 'network']];
REQUIRED_FACTS.register = [['network', 'network']];
REQUIRED_FACTS.idp_login_succeeded = [['auth_mode', 'authMode'], ['user', 'user']];
REQUIRED_FACTS.device_session_detected = [['app_id', 'appID'], ['user', 'user']];
REQUIRED_FACTS.refresh_failed = [['cause', 'cause']];
const NO_FACTS = [];

export { AUTH_MODES, CAUSES, COMPARISONS, DECISIONS, EFFECTS, EVENT_INDEX, FAILURE_PATHS, FX_ADOPT, FX_CLEAR, FX_COUNT_BIOMETRIC, FX_COUNT_IDP, FX_COUNT_OFFLINE, FX_ESTABLISH, FX_LOCK_BIOMETRIC, FX_RECORD_ACTIVITY, FX_RECORD_ONLINE, FX_RESET_BIOMETRIC, FX_SET_READ_ONLY, INTEGRITIES, KEYSTORES, MESSAGE_UNEXPECTED_EVENT, NETWORKS, NOTICES, NOTICE_JSON, NOTICE_LISTS, NO_FACTS, N_NETWORK_REQUIRED, N_READ_ONLY, REQUIRED_FACTS, SCOPES, STATE_INDEX, SWITCHES, word };
