// Preloaded into the conformance runner (`node --import ./with_token.mjs`): the suite's
// client has no option for an Authorization header, and every endpoint of
// computer-control but /health requires one (PROTOCOL §8). This installs a global undici
// dispatcher — used by Node's fetch and by undici's own request(), the two HTTP clients
// of the suite — that adds `Authorization: Bearer $CC_TOKEN` to requests for the
// server's origin ($CC_MCP_URL) and changes nothing else.
import { Agent, setGlobalDispatcher } from 'undici';

const token = process.env.CC_TOKEN;
const origin = new URL(process.env.CC_MCP_URL).origin;
if (!token) throw new Error('CC_TOKEN is not set');

function withAuthorization(headers) {
  const value = `Bearer ${token}`;
  if (headers == null) return { authorization: value };
  if (Array.isArray(headers)) {
    for (let i = 0; i < headers.length; i += 2) {
      if (String(headers[i]).toLowerCase() === 'authorization') return headers;
    }
    return [...headers, 'authorization', value];
  }
  if (typeof headers[Symbol.iterator] === 'function') {
    const out = {};
    for (const [k, v] of headers) out[k] = v;
    return withAuthorization(out);
  }
  const present = Object.keys(headers).some((k) => k.toLowerCase() === 'authorization');
  return present ? headers : { ...headers, authorization: value };
}

setGlobalDispatcher(
  new Agent().compose((dispatch) => (opts, handler) => {
    const target = opts.origin ? new URL(String(opts.origin)).origin : null;
    if (target === origin) opts = { ...opts, headers: withAuthorization(opts.headers) };
    return dispatch(opts, handler);
  }),
);
