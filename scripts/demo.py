#!/usr/bin/env python3
"""Plays a scripted banking call against a running Switchboard, step by step,
so a person watching /sessions/{id} sees each change arrive.

Usage: SWITCHBOARD_API_KEY=sb_... make demo   (optionally SWITCHBOARD_URL,
DEMO_PAUSE seconds between steps). Create the key on the start page as admin.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request

BASE = os.environ.get("SWITCHBOARD_URL", "http://127.0.0.1:3000").rstrip("/")
KEY = os.environ.get("SWITCHBOARD_API_KEY", "")
PAUSE = float(os.environ.get("DEMO_PAUSE", "3"))


def post(path, body, token):
    request = urllib.request.Request(
        BASE + path,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        sys.exit(f"{path}: HTTP {error.code}: {error.read().decode()}")
    except urllib.error.URLError as error:
        sys.exit(f"cannot reach {BASE}: {error.reason} (is `make run` serving?)")


def main():
    if not KEY:
        sys.exit("Set SWITCHBOARD_API_KEY to an API key (create one on the start page as admin).")
    session = post("/api/sessions", {"workflowId": "idv"}, KEY)
    sid, token = session["sessionId"], session["sessionToken"]
    print(f"Watch it live: {BASE}/sessions/{sid}")
    time.sleep(PAUSE * 2)
    steps = [
        ("check_balance", {"accountNumber": "12345678"}, "asks for the balance before ID&V"),
        ("perform_idv_check", {"accountNumber": "12345678", "sortCode": "12-34-56", "dateOfBirth": "1985-04-12"}, "verifies identity"),
        ("start_workflow", {"workflowId": "banking-master"}, "moves to Banking Master"),
        ("check_balance", {"accountNumber": "12345678"}, "asks for the balance again"),
    ]
    for name, arguments, what in steps:
        result = post(f"/api/sessions/{sid}/tool-calls", {"name": name, "arguments": arguments}, token)
        verdict = "allowed" if result["allowed"] else f"refused: {result['reason']}"
        print(f"- the agent {what} ({name}): {verdict}")
        time.sleep(PAUSE)
    print("Done. The session stays open until it idles out.")


if __name__ == "__main__":
    main()
