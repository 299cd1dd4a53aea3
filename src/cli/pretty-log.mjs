// The terminal's log (pino's transport worker loads this file, so it is plain JavaScript):
// pino-pretty with each request on one line, "GET /history 200 3.1 ms req-1", instead of its
// default of the request and answer objects printed key by key (12 lines a request). Other lines
// keep their fields, on the same line; an error's stack still prints below it.
import pretty from 'pino-pretty';

/** The request's part of a line: method, URL, status, time and id, as the object has them. */
function requestPart(log) {
  const req = log.req && typeof log.req === 'object' ? log.req : null;
  const res = log.res && typeof log.res === 'object' ? log.res : null;
  const parts = [];
  if (req && req.method) parts.push(`${req.method} ${req.url ?? ''}`);
  if (res && res.statusCode !== undefined) parts.push(String(res.statusCode));
  if (typeof log.responseTime === 'number') parts.push(`${log.responseTime.toFixed(1)} ms`);
  if (log.reqId) parts.push(String(log.reqId));
  return parts.join(' ');
}

export default function prettyLog(opts) {
  return pretty({
    ...opts,
    singleLine: true,
    ignore: 'hostname,req,res,responseTime,reqId',
    messageFormat: (log, messageKey) => {
      const msg = log[messageKey] ?? '';
      const req = requestPart(log);
      if (!req) return msg;
      return msg === 'request completed' ? req : `${msg} · ${req}`;
    },
  });
}
