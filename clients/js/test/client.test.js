// Unit tests of the plugin client against a scripted Switchboard on
// node:http: `node --test clients/js/test/` (no dependencies).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import { join, Plugin, SseParser } from '../switchboard.js';

/**
 * A scripted server: `streams` answers the n-th plugin-events request
 * (req, res, n); tool results, registrations and joins are recorded.
 */
async function fakeSwitchboard(streams) {
  const seen = { streams: [], results: [], registrations: [], joins: [] };
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const url = new URL(req.url, 'http://x');
    if (url.pathname.endsWith('/plugin-events')) {
      seen.streams.push({ headers: req.headers, search: url.search });
      return streams(req, res, seen.streams.length);
    }
    const json = body ? JSON.parse(body) : null;
    const answer = (status, value) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (url.pathname === '/api/plugins/join') {
      seen.joins.push(json);
      return json.code === 'GOODCODE'
        ? answer(200, { sessionId: 's1', pluginToken: 'pt_abc' })
        : answer(404, { error: 'join_code_not_found', message: 'No such join code.' });
    }
    if (url.pathname.endsWith('/tool-results')) {
      // The client answers at one URL per session, the call's id in the body.
      const { callId, ...rest } = json;
      seen.results.push({ callId, body: rest, auth: req.headers.authorization });
      return answer(200, { accepted: true, callId });
    }
    if (url.pathname.endsWith('/register-tools')) {
      seen.registrations.push(json);
      return answer(201, { success: true, registeredTools: json.availableTools.map((t) => t.name) });
    }
    answer(404, { NotFound: req.url });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const baseUrl = `http://127.0.0.1:${server.address().port}`;
  const close = () => {
    server.closeAllConnections();
    server.close();
  };
  return { baseUrl, seen, close };
}

/** Starts an event stream response. */
function open(res) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
}

/** One SSE frame. */
function frame(id, event, data) {
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A relayed call's data. */
function request(callId, name, args, timeoutMs = 10_000) {
  return { callId, name, arguments: args, deadline: new Date(Date.now() + timeoutMs).toISOString(), timeoutMs };
}

/** Resolves once `check()` is true (polling), or fails after 3 s. */
async function until(check, what) {
  const end = Date.now() + 3000;
  while (!check()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const fast = { backoff: { initialMs: 10, maxMs: 40 } };

test('SSE is parsed across chunk boundaries, CRLF split included', () => {
  const parser = new SseParser();
  const text = '\uFEFF: hello\r\nid: 41\r\nevent: tool-call-request\r\ndata: {"a":\r\ndata: 1}\r\n\r\nid: 42\nevent: x\ndata: two\n\n';
  const events = [];
  // Every cut, one character at a time.
  for (const ch of text) events.push(...parser.push(ch));
  assert.deepEqual(events, [
    { event: 'tool-call-request', data: '{"a":\n1}', id: '41' },
    { event: 'x', data: 'two', id: '42' },
  ]);
  assert.equal(parser.lastEventId, '42');
  const other = new SseParser();
  assert.deepEqual(other.push('data: a\r'), []);
  assert.deepEqual(other.push('\ndata: b\r\r'), [{ event: 'message', data: 'a\nb', id: '' }]);
  assert.deepEqual(other.push('retry: 250\nid\n\n'), []);
  assert.equal(other.retry, 250);
  assert.equal(other.lastEventId, '');
});

test('SSE cut anywhere gives the events of the whole text, a long line included', () => {
  // A registration's update is one line of up to 1 MB; the rest mixes
  // every line ending, comments, ids and multi-line data.
  const long = JSON.stringify({ added: Array.from({ length: 2000 }, (_, i) => ({ name: `t_${i}`, d: 'x'.repeat(i % 97) })) });
  const text = `: hi\r\nid: 1\revent: a\ndata: ${long}\r\n\r\ndata: x\r\ndata: y\r\rid: 2\nevent: b\ndata:z\n\n`;
  const whole = new SseParser().push(text);
  assert.equal(whole.length, 3);
  assert.equal(whole[0].data, long);
  assert.deepEqual(whole.slice(1), [
    { event: 'message', data: 'x\ny', id: '1' },
    { event: 'b', data: 'z', id: '2' },
  ]);
  // A fixed seed: the same cuts every run, many of them on a CR or LF.
  let seed = 40;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let round = 0; round < 200; round++) {
    const parser = new SseParser();
    const events = [];
    for (let at = 0; at < text.length; ) {
      const size = round % 2 ? Math.ceil(next() * 40) : Math.ceil(next() * 70_000);
      events.push(...parser.push(text.slice(at, at + size)));
      // An empty piece (a decoder holding half a character) changes nothing.
      events.push(...parser.push(''));
      at += size;
    }
    assert.deepEqual(events, whole, `round ${round}`);
  }
});

test('a tool update nobody listens for is not read', async (t) => {
  const sb = await fakeSwitchboard((req, res) => {
    open(res);
    res.write('event: tool-availability-update\ndata: {not json\n\n');
    res.write(frame(2, 'tool-call-request', request('1', 'echo', { a: 1 })));
  });
  t.after(sb.close);
  const plugin = new Plugin({ sessionId: 's1', pluginToken: 'pt_x', baseUrl: sb.baseUrl, ...fast });
  const problems = [];
  plugin.onError((e) => problems.push(e.message));
  plugin.onCall((call) => call.arguments);
  await until(() => sb.seen.results.length === 1, 'the answer');
  plugin.close();
  assert.deepEqual(problems, []);
  assert.deepEqual(sb.seen.results[0].body, { result: { a: 1 } });
});

test('an unreadable tool update is reported to whoever listens for it', async (t) => {
  const sb = await fakeSwitchboard((req, res) => {
    open(res);
    res.write('event: tool-availability-update\ndata: {not json\n\n');
    res.write(frame(2, 'tool-availability-update', { type: 'tools-removed', removed: ['a'] }));
  });
  t.after(sb.close);
  const plugin = new Plugin({ sessionId: 's1', pluginToken: 'pt_x', baseUrl: sb.baseUrl, ...fast });
  const problems = [];
  const updates = [];
  plugin.onError((e) => problems.push(e.message));
  plugin.onToolsChanged((u) => updates.push(u.removed[0]));
  await until(() => updates.length === 1, 'the readable update');
  plugin.close();
  assert.deepEqual(problems, ['an unreadable tool-availability-update event']);
});

test('a dropped stream is reconnected with Last-Event-ID, the token in the header', async (t) => {
  const sb = await fakeSwitchboard((req, res, n) => {
    open(res);
    if (n === 1) {
      res.write(frame(5, 'tool-availability-update', { type: 'tools-updated', removed: ['a'] }));
      setTimeout(() => res.destroy(), 20);
    } else {
      res.write(frame(9, 'tool-availability-update', { type: 'tools-removed', removed: ['b'] }));
    }
  });
  t.after(sb.close);
  const plugin = new Plugin({ sessionId: 's1', pluginToken: 'pt_x', baseUrl: sb.baseUrl, ...fast });
  const updates = [];
  const statuses = [];
  plugin.onStatus((s) => statuses.push(s));
  plugin.onToolsChanged((u) => updates.push(u.removed[0]));
  await until(() => updates.length === 2, 'two updates');
  plugin.close();
  assert.deepEqual(updates, ['a', 'b']);
  assert.equal(sb.seen.streams.length, 2);
  assert.equal(sb.seen.streams[0].headers['last-event-id'], undefined);
  assert.equal(sb.seen.streams[1].headers['last-event-id'], '5');
  for (const s of sb.seen.streams) {
    assert.equal(s.headers.authorization, 'Bearer pt_x');
    assert.equal(s.search, '', 'no token in the URL');
  }
  assert.equal(plugin.lastEventId, '9');
  assert.deepEqual(statuses.slice(0, 4), ['connecting', 'live', 'reconnecting', 'live']);
  assert.equal(statuses.at(-1), 'closed');
});

test('a call re-offered after a reconnect is not run twice', async (t) => {
  let release;
  const gate = new Promise((r) => (release = r));
  const sb = await fakeSwitchboard((req, res, n) => {
    open(res);
    // The server offers every waiting call on each new stream.
    res.write(frame(n * 10, 'tool-call-request', request('7', 'addNote', { text: 'hi' })));
    if (n === 1) setTimeout(() => res.destroy(), 20);
    if (n === 2) setTimeout(release, 20);
  });
  t.after(sb.close);
  const plugin = new Plugin({ sessionId: 's1', pluginToken: 'pt_x', baseUrl: sb.baseUrl, ...fast });
  const runs = [];
  plugin.onCall(async (call) => {
    runs.push(call.callId);
    await gate;
    return { notes: 1, text: call.arguments.text };
  });
  await until(() => sb.seen.results.length === 1, 'the answer');
  // A third stream re-offers it again after it was answered.
  plugin.close();
  assert.equal(sb.seen.streams.length >= 2, true);
  assert.deepEqual(runs, ['7']);
  assert.deepEqual(sb.seen.results, [{ callId: '7', body: { result: { notes: 1, text: 'hi' } }, auth: 'Bearer pt_x' }]);
});

test('a handler that throws is answered with {"error"}; undefined with {}', async (t) => {
  const sb = await fakeSwitchboard((req, res) => {
    open(res);
    res.write(frame(1, 'tool-call-request', request('1', 'broken', {})));
    res.write(frame(2, 'tool-call-request', request('2', 'quiet', {})));
  });
  t.after(sb.close);
  const plugin = new Plugin({ sessionId: 's1', pluginToken: 'pt_x', baseUrl: sb.baseUrl, ...fast });
  plugin.onCall((call) => {
    if (call.name === 'broken') throw new Error('there is no table yet');
  });
  await until(() => sb.seen.results.length === 2, 'two answers');
  plugin.close();
  const byId = Object.fromEntries(sb.seen.results.map((r) => [r.callId, r.body]));
  assert.deepEqual(byId['1'], { error: 'there is no table yet' });
  assert.deepEqual(byId['2'], { result: {} });
});

test('a call past its deadline is not started', async (t) => {
  const sb = await fakeSwitchboard((req, res) => {
    open(res);
    res.write(frame(1, 'tool-call-request', request('1', 'late', {}, 0)));
    const old = { callId: '2', name: 'late', arguments: {}, deadline: new Date(Date.now() - 1000).toISOString() };
    res.write(frame(2, 'tool-call-request', old));
    res.write(frame(3, 'tool-call-request', request('3', 'fresh', {}, 5000)));
  });
  t.after(sb.close);
  const plugin = new Plugin({ sessionId: 's1', pluginToken: 'pt_x', baseUrl: sb.baseUrl, ...fast });
  const runs = [];
  plugin.onCall((call) => {
    runs.push(call.callId);
    assert.ok(call.timeoutMs > 0 && call.timeoutMs <= 5000);
    assert.ok(call.deadline.getTime() > Date.now());
    return 'ok';
  });
  await until(() => sb.seen.results.length === 1, 'the fresh answer');
  plugin.close();
  assert.deepEqual(runs, ['3']);
  assert.deepEqual(sb.seen.results[0].body, { result: 'ok' });
});

test('join exchanges a code for a plugin; a wrong code is a readable error', async (t) => {
  const sb = await fakeSwitchboard((req, res) => open(res));
  t.after(sb.close);
  const plugin = await join(' GOODCODE ', { baseUrl: `${sb.baseUrl}/`, ...fast });
  assert.equal(plugin.sessionId, 's1');
  assert.equal(plugin.pluginToken, 'pt_abc');
  assert.equal(plugin.baseUrl, sb.baseUrl);
  assert.deepEqual(sb.seen.joins, [{ code: 'GOODCODE' }]);
  const answer = await plugin.registerTools([{ name: 'addNote', description: 'Adds a note.', parameters: { type: 'object' } }]);
  assert.deepEqual(answer.registeredTools, ['addNote']);
  assert.equal(sb.seen.registrations[0].pluginType, 'custom');
  await assert.rejects(join('WRONG', { baseUrl: sb.baseUrl }), (e) => e.status === 404 && /No such join code/.test(e.message));
});

test('a refused credential closes the plugin instead of retrying', async (t) => {
  const sb = await fakeSwitchboard((req, res) => {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end('{"Unauthorized":null}');
  });
  t.after(sb.close);
  const plugin = new Plugin({ sessionId: 's1', pluginToken: 'pt_bad', baseUrl: sb.baseUrl, ...fast });
  const closed = new Promise((resolve) => plugin.onStatus((s, e) => s === 'closed' && resolve(e)));
  plugin.onCall(() => 1);
  const error = await closed;
  assert.equal(error.status, 401);
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(sb.seen.streams.length, 1);
});
