// The public API, as any frontend calls it: JSON in, JSON or an RFC 9457
// problem document out. Nothing here knows the decoding rules.

const listeners = [];

/** Call `listener({method, path, status, body})` after every request (status 0: no answer). */
export function onCall(listener) {
  listeners.push(listener);
}

function notify(entry) {
  for (const listener of listeners) listener(entry);
}

/** An HTTP error answered with a problem document (or something else). */
export class ApiError extends Error {
  /**
   * @param {number} status HTTP status (0 when the request did not reach the service)
   * @param {object|null} problem the parsed application/problem+json body, if any
   * @param {string} message one line for people
   */
  constructor(status, problem, message) {
    super(message);
    this.status = status;
    this.problem = problem;
  }

  /** The problem's field errors: [{pointer, detail}] (empty when it has none). */
  get fieldErrors() {
    return (this.problem && Array.isArray(this.problem.errors)) ? this.problem.errors : [];
  }
}

/**
 * POST a JSON body given as text (so a custom model's numbers reach the
 * service as the decimals the user wrote, SPEC section 1) or GET when body is
 * undefined. Resolves to the parsed JSON; rejects with ApiError.
 * @param {string} path e.g. "/v1/step"
 * @param {string} [body] JSON text
 * @param {{raw?: boolean, signal?: AbortSignal}} [options] raw: resolve to {text, data} (the exact bytes as
 *   text, and parsed); signal: abort the request (it then rejects with ApiError status 0)
 */
export async function call(path, body, { raw = false, signal = undefined } = {}) {
  const init = body === undefined
    ? { method: "GET", headers: { Accept: "application/json" }, signal }
    : { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" }, body, signal };
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    notify({ method: init.method, path, status: 0, body });
    throw new ApiError(0, null, `The service did not answer ${path}: ${error.message}`);
  }
  notify({ method: init.method, path, status: response.status, body });
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch (error) {
    data = null;
  }
  if (!response.ok) {
    const detail = data && data.detail ? data.detail : `${response.status} ${response.statusText}`;
    throw new ApiError(response.status, data, `${path}: ${detail}`);
  }
  return raw ? { text, data } : data;
}

/** JSON text of a value (a state the service returned, sent back unchanged). */
export const json = (value) => JSON.stringify(value);

export const draft = (stateText) => call("/v1/draft", stateText);
export const step = (stateText) => call("/v1/step", stateText);
/** `proposal`: {tokens} (one chain), or {chains} in mode tree (SPEC 11). */
export const verify = (stateText, proposal) => call("/v1/verify", `{"state": ${stateText}, "proposal": ${json(proposal)}}`);
export const runs = (configText, options) => call("/v1/runs", `{"config": ${configText}}`, options);
export const models = () => call("/v1/models");
export const grade = (traceText) => call("/v1/grade", traceText);
export const analysis = (bodyText, options) => call("/v1/analysis", bodyText, options);
/** `count` (1-4096) draws of `seed`'s stream from `position` (SPEC 2): {draws: [{position, u, hex}]}. */
export const draws = (seed, position, count) => call(`/v1/draws?seed=${seed}&position=${position}&count=${count}`);
