// The peer of Switchboard's session event stream for `make bench-sessions`:
// a plain `node:http` server-sent-events relay, the few lines a Node team
// would write, run on the same machine in the same run as the server and
// timed by the same probe (benches/sessions.rs).
//
// GET  /events   answers `text/event-stream` and sends a `snapshot` frame at
//                once (the probe connects, then waits for it, as it does with
//                Switchboard); the response is kept open.
// POST /publish  the body is one SSE frame (the probe sends the exact bytes
//                Switchboard sent for its `workflow_update`); it is written,
//                as it is, to every open response, then 204.
//
// Usage: node sse_relay.mjs
// Prints one JSON line, {"port"}, once it listens on a free loopback port.

import http from "node:http";

const SNAPSHOT = Buffer.from(
  'id: 0\nevent: snapshot\ndata: {"type":"snapshot","data":{}}\n\n',
);
const open = new Set();

const server = http.createServer({ noDelay: true }, (req, res) => {
  if (req.method === "GET" && req.url.startsWith("/events")) {
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
    });
    res.write(SNAPSHOT);
    open.add(res);
    res.on("close", () => open.delete(res));
  } else if (req.method === "POST" && req.url === "/publish") {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const frame = Buffer.concat(chunks);
      for (const watcher of open) watcher.write(frame);
      res.writeHead(204).end();
    });
  } else {
    res.writeHead(404).end();
  }
});

server.listen(0, "127.0.0.1", () => {
  console.log(JSON.stringify({ port: server.address().port }));
});
