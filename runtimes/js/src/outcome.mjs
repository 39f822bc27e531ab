// `Outcome`: the decision, reason, message, notices and new state of one evaluation.

import { quote } from './text.mjs';
import { TimeSpan } from './time.mjs';
import { NOTICE_JSON, NOTICE_LISTS } from './vocabulary.mjs';

/**
 * The result of evaluating one event: the decision (`allow`, `require_biometric`, `idp_login`,
 * `wipe`, or null), why, what to tell the user, and the session's new state.
 */
export class Outcome {
  constructor() {
    /** @type {string|null} */
    this.decision = null;
    this.reason = '';
    this.message = '';
    /** @type {ReadonlyArray<string>} */
    this.notices = NOTICE_LISTS[0];
    /** @type {string|null} */
    this.scope = null;
    /** @type {string|null} */
    this.authMode = null;
    /** @type {number|bigint|null} seconds */
    this.noticeDelay = null;
    this.transition = -1;
    /** @type {SessionState} */
    this.state = null;
    this._notices = 0;
  }

  /** The JSON text Swift writes for this outcome, byte for byte. */
  toJSONString() {
    return (
      '{"auth_mode":' + (this.authMode === null ? 'null' : quote(this.authMode)) +
      ',"decision":' + (this.decision === null ? 'null' : quote(this.decision)) +
      ',"message":' + quote(this.message) +
      ',"notice_delay":' + (this.noticeDelay === null ? 'null' : '"' + TimeSpan.format(this.noticeDelay) + '"') +
      ',"notices":' + noticesJSON(this) +
      ',"reason":' + quote(this.reason) +
      ',"scope":' + (this.scope === null ? 'null' : quote(this.scope)) +
      ',"state":' + this.state.toJSONString() +
      ',"transition":' + this.transition + '}'
    );
  }

  /** The JSON value of this outcome, members in Swift's order: `JSON.stringify` writes Swift's bytes. */
  toJSON() {
    return {
      auth_mode: this.authMode,
      decision: this.decision,
      message: this.message,
      notice_delay: this.noticeDelay === null ? null : TimeSpan.format(this.noticeDelay),
      notices: [...this.notices],
      reason: this.reason,
      scope: this.scope,
      state: this.state.toJSON(),
      transition: this.transition,
    };
  }
}

function noticesJSON(o) {
  // `notices` is the shared list of the outcome's bits unless a caller replaced it.
  if (o.notices === NOTICE_LISTS[o._notices]) return NOTICE_JSON[o._notices];
  return '[' + o.notices.map(quote).join(',') + ']';
}
