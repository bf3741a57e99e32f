// Error messages: the text of anything thrown, for the page and the worker alike.

/** An `Error`'s message, a thrown string, or the value as JSON (else as text). */
export function errMsg(e) {
  if (e instanceof Error) return e.message;
  if (typeof e === 'string') return e;
  try {
    return JSON.stringify(e);
  } catch {
    return String(e);
  }
}
