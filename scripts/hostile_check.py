"""Issue 33's hostile findings, replayed from outside against a running server.

Usage: python3 scripts/hostile_check.py http://127.0.0.1:3000 ADMIN_PASSWORD
(a throwaway server: it locks the teacher out from this address for 15
minutes and fills one MCP credential).
"""
import json, sys, threading, urllib.request, urllib.parse, http.cookiejar, io, tarfile, time, concurrent.futures as cf

BASE = sys.argv[1]
ADMIN_PW = sys.argv[2]
jar = http.cookiejar.CookieJar()
opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k): return None
bare = urllib.request.build_opener(NoRedirect)

def req(method, path, body=None, headers=None, op=None, raw=None):
    h = dict(headers or {})
    data = raw
    if body is not None:
        data = json.dumps(body).encode(); h.setdefault("Content-Type", "application/json")
    r = urllib.request.Request(BASE + path, data=data, method=method, headers=h)
    try:
        with (op or opener).open(r, timeout=60) as res:
            return res.status, res.read(), dict(res.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read(), dict(e.headers)

def rpc(name, form, op=None):
    data = urllib.parse.urlencode(form, doseq=True).encode()
    return req("POST", "/rpc/" + name, headers={"Origin": BASE, "Content-Type": "application/x-www-form-urlencoded"}, raw=data, op=op)

print("sign in as admin:", rpc("login", {"email": "admin@example.com", "password": ADMIN_PW})[0])
def key(scopes):
    s, b, _ = rpc("create_api_key", {"name": "outside-" + "-".join(scopes), "scopes[]": scopes})
    return json.loads(b)["secret"] if s == 200 else sys.exit(f"key: {s} {b[:200]}")
full = key(["sessions", "workflows:write"])
vibes = key(["vibes:read", "vibes:write"])
auth = lambda k: {"Authorization": "Bearer " + k}

def open_session():
    s, b, _ = req("POST", "/api/sessions", {"workflowId": "idv"}, auth(full))
    return json.loads(b)

# 1. 400 PATCHes adding 32 checks each
s = open_session(); sid, tok = s["sessionId"], s["sessionToken"]
codes = {}
for i in range(400):
    checks = {f"c{i:03}_{j:02}": True for j in range(32)}
    c, b, _ = req("PATCH", f"/api/sessions/{sid}/state", {"checks": checks}, auth(tok))
    codes[c] = codes.get(c, 0) + 1
    last = b
print("1. 400 PATCHes x 32 new checks:", codes, "last answer", len(last), "bytes:", last[:160])

# 2. plugin registration 240 tools x 16 KB
tools = [{"name": f"t{i}", "description": "d" * 1000, "parameters": {"type": "object", "properties": {f"p{p}": {"type": "string", "description": "x" * 1000} for p in range(15)}}} for i in range(240)]
c, b, _ = req("POST", f"/api/sessions/{sid}/register-tools", {"pluginType": "custom", "pluginVersion": "1", "availableTools": tools}, auth(tok))
print("2. register 240 x 16 KB:", c, b[:200])
c, b, _ = req("GET", f"/api/sessions/{sid}/metadata", None, auth(tok))
print("   metadata:", c, len(b), "bytes")

# 3. vibes key empties check_balance's requires via an import
c, b, _ = req("GET", "/api/manifests?format=tar", None, auth(vibes))
src = tarfile.open(fileobj=io.BytesIO(b))
out = io.BytesIO(); dst = tarfile.open(fileobj=out, mode="w")
changed = False
for m in src.getmembers():
    data = src.extractfile(m).read() if m.isfile() else None
    if m.name.endswith("check_balance/config.json"):
        cfg = json.loads(data); cfg["requires"] = []; data = json.dumps(cfg).encode(); changed = True
    if data is not None:
        m.size = len(data); dst.addfile(m, io.BytesIO(data))
    else:
        dst.addfile(m)
if not changed:
    cfg = {"id": "check_balance", "name": "Check balance", "description": "Gives the balance of the verified account.",
           "category": "banking", "parameters": {"type": "object", "properties": {"accountNumber": {"type": "string"}}, "required": ["accountNumber"]},
           "requires": []}
    data = json.dumps(cfg).encode(); ti = tarfile.TarInfo("TOOLS/banking/check_balance/config.json"); ti.size = len(data)
    dst.addfile(ti, io.BytesIO(data)); changed = "added"
dst.close()
c, b, _ = req("POST", "/api/manifests", None, {**auth(vibes), "Content-Type": "application/x-tar"}, raw=out.getvalue())
print("3. import emptying check_balance.requires with vibes:write (changed:", changed, "):", c, b[:160])
s2 = open_session()
c, b, _ = req("POST", f"/api/sessions/{s2['sessionId']}/tool-calls", {"name": "check_balance", "arguments": {"accountNumber": "12345678"}}, auth(s2["sessionToken"]))
print("   check_balance without identity:", c, json.loads(b).get("allowed"), json.loads(b).get("reason"))

# 4. signed-out pages
for p in ["/agents", "/workflows", "/workflows/idv", "/playground", "/lessons", "/bindings", "/sessions"]:
    c, _, h = req("GET", p, op=bare)
    print(f"4. signed out {p}: {c} {h.get('Location') or h.get('location')}")

# 5. 40 concurrent wrong passwords
def wrong(_):
    op = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    return rpc("login", {"email": "teacher@example.com", "password": "wrong-password"}, op=op)[0]
with cf.ThreadPoolExecutor(40) as ex:
    res = list(ex.map(wrong, range(40)))
print("5. 40 concurrent wrong passwords:", {c: res.count(c) for c in set(res)})

# 6. MCP initialize x 600 with one key
init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "o", "version": "1"}}}
res = {}
for i in range(600):
    c, _, _ = req("POST", "/mcp", init, {**auth(full), "Accept": "application/json, text/event-stream"})
    res[c] = res.get(c, 0) + 1
print("6. 600 MCP initialize:", res)

# 7. plugin token patching state
c, b, _ = req("PATCH", f"/api/sessions/{s2['sessionId']}/state", {"checks": {"identity_verified": True}}, auth(s2["pluginToken"]))
print("7. plugin token PATCH state:", c, b[:160])
