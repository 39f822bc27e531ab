// Errors: `SessionPolicyError` and the located diagnostics every reader refuses input with
// (code, message, help, path, line, column), as Swift's `Diagnostic`.

/**
 * A refusal: the document, state or event cannot be read as it is. `diagnostics` lists the
 * problems, first found first; `code` is the first one's code (`digest-mismatch`, ...).
 */
export class SessionPolicyError extends Error {
  constructor(diagnostics) {
    const first = diagnostics[0];
    super(first ? `${first.code}: ${first.message}` : 'the input is not valid');
    this.name = 'SessionPolicyError';
    /** @type {Array<{severity: string, code: string, message: string, help?: string, path?: string, line?: number, column?: number}>} */
    this.diagnostics = diagnostics;
  }

  /** The code of the first diagnostic. */
  get code() {
    return this.diagnostics.length > 0 ? this.diagnostics[0].code : 'invalid-value';
  }
}

/** A diagnostic object; `at` is a node or a `{line, column}`; `path` names the key. */
function diagnostic(code, message, at, help, path) {
  const d = { severity: 'error', code, message };
  if (help !== undefined && help !== null) d.help = help;
  if (path !== undefined && path !== null && path !== '') d.path = path;
  if (at) {
    d.line = at.line;
    d.column = at.column;
  }
  return d;
}

function refuse(code, message, at, help, path) {
  return new SessionPolicyError([diagnostic(code, message, at, help, path)]);
}

export { diagnostic, refuse };
