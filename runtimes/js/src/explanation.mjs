// The explanation of an evaluation (`PolicyMachine.explain`): each guard tried, in policy
// vocabulary (`StateMachine.wording`), and the facts it looked at (`StateMachine.facts`).

import { NO, YES, cleared, highestSeen, truth } from './conditions.mjs';
import { G } from './document.mjs';
import { TimeSpan, Timestamp } from './time.mjs';

/** A guard in policy vocabulary (`StateMachine.wording`'s sentence). */
export function describeGuard(g, rules) {
  const span = () => TimeSpan.format(g.n);
  switch (g.code) {
    case 0: return 'otherwise';
    case 1: return 'the device failed its integrity check';
    case 2: return `the clock went back more than ${span()} before the highest time seen`;
    case 3: return "the event names another user than the session's";
    case 4: return "the event comes from another device than the session's";
    case 5: return `more than ${span()} since the last IdP login`;
    case 6: return `more than ${span()} since the last activity`;
    case 7: return `more than ${span()} since the last online validation`;
    case 8: return 'the session records no auth mode';
    case 9: return 'the auth mode is password or pin';
    case 10: return 'the auth mode is not one of ' + g.modes.map((m) => '`' + m + '`').join(', ');
    case 11: return 'the device keystore is not hardware-backed';
    case 12: return 'the biometric path is locked until the next IdP login';
    case 13: return `the auth mode is \`${g.w}\``;
    case 14: return `this is failure ${g.n} or later on the ${g.w} path`;
    case 15: return 'the device is offline';
    case 16: return `the refresh failed with cause \`${g.w}\``;
    case 17: return 'the client reports unsynced items';
    case 18: return 'the app that created the session is not in `cross_app.apps`';
    case 19: return `rule \`${rules[g.n].name}\` needs a fact the event does not report`;
    case 20: return `rule \`${rules[g.n].name}\`: ${rules[g.n].text}`;
    default: {
      const sentence = describeGuard(g.trigger, rules);
      if (g.inner.code === G.always) return `${sentence}, and the new login passes every check`;
      return `${sentence}, and for the new login: ${describeGuard(g.inner, rules)}`;
    }
  }
}

/** The facts a guard looked at (`StateMachine.facts`). */
export function guardFacts(machine, g, s, e) {
  const highest = highestSeen(s);
  const now = highest !== null && highest > e.time ? highest : e.time;
  const sinceText = (t, what) => {
    if (t === null) return `no ${what} recorded`;
    const d = Math.trunc((now - t) / 1000);
    return d >= 0 ? `${TimeSpan.format(d)} since the ${what}` : `the ${what} is ${TimeSpan.format(-d)} in the future`;
  };
  const show = (v) => (v === null ? 'not reported' : '`' + v + '`');
  const named = (v) => (v === null ? 'none' : '`' + v + '`');
  switch (g.code) {
    case 0: return '';
    case 1: return `integrity ${show(e.device.integrity)}`;
    case 2: return `event time ${Timestamp.format(e.time)}, highest time seen ${highest === null ? 'none' : Timestamp.format(highest)}`;
    case 4: return `event device ${named(e.device.id)}, session device ${named(s.device)}`;
    case 3: return `event user ${named(e.user)}, session user ${named(s.user)}`;
    case 5: return sinceText(s.lastIdPLogin, 'last IdP login');
    case 6: return sinceText(s.lastActivity !== null ? s.lastActivity : s.lastIdPLogin, 'last activity');
    case 7: return sinceText(s.lastOnline !== null ? s.lastOnline : s.lastIdPLogin, 'last online validation');
    case 8:
    case 9:
    case 10:
    case 13: return `auth mode ${show(s.authMode)}`;
    case 11: return `keystore ${show(e.device.keystore)}`;
    case 12: return `locked: ${s.biometricLocked}, auth mode ${show(s.authMode)}`;
    case 14: {
      const f = s.failures;
      const n = g.w === 'biometric' ? f.biometric : g.w === 'offline_login' ? f.offlineLogin : f.idpLogin;
      return `this is failure ${typeof n === 'bigint' ? n + 1n : n + 1}`;
    }
    case 15: return `network ${show(e.network)}`;
    case 16: return `cause ${show(e.cause)}`;
    case 17: return `unsynced items: ${e.unsyncedItems === null ? 0 : e.unsyncedItems}`;
    case 18: return `app ${show(e.appID)}`;
    case 19:
    case 20: {
      const t = truth(machine._rules[g.n].condition, s, e, now);
      return t === YES ? 'holds' : t === NO ? 'does not hold' : `\`${t}\` is not reported`;
    }
    default: {
      const first = guardFacts(machine, g.trigger, s, e);
      if (!machine._holds(g.trigger, s, e, now, highest)) return first;
      const rest = guardFacts(machine, g.inner, cleared(highest, s.biometricLocked), e);
      return rest === '' ? first : `${first}; ${rest}`;
    }
  }
}
