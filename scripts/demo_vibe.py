#!/usr/bin/env python3
"""Plays the Todo Assistant demo against a running Switchboard, step by step,
so a person watching /sessions/{id} sees each agent switch and refusal:
Hominio greets → the user asks to add a todo → createTodo is refused for
Hominio → switchAgent Oliver → createTodo is allowed → toggleTodo of a todo
that is not there runs and fails ({"success": false, "error"}) → switchAgent
Rajesh → createTodo is refused again.

Usage: SWITCHBOARD_API_KEY=sb_... make demo-vibe   (optionally SWITCHBOARD_URL,
DEMO_PAUSE seconds between steps). Create the key on the start page as admin.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from demo import BASE, KEY, PAUSE, post  # noqa: E402  (same client as `make demo`)


def main():
    if not KEY:
        sys.exit("Set SWITCHBOARD_API_KEY to an API key (create one on the start page as admin).")
    session = post("/api/sessions", {"vibeId": "todos"}, KEY)
    sid, token = session["sessionId"], session["sessionToken"]
    print(f"Watch it live: {BASE}/sessions/{sid}")
    time.sleep(PAUSE * 2)
    steps = [
        ("createTodo", {"todoText": "Buy milk"}, "Hominio tries to add the user's todo"),
        ("switchAgent", {"agentName": "Oliver"}, "Hominio hands the user to Oliver"),
        ("createTodo", {"todoText": "Buy milk", "tags": "shopping"}, "Oliver adds the todo"),
        ("toggleTodo", {"todoText": "bread"}, "Oliver looks for a todo that is not there"),
        ("switchAgent", {"agentName": "Rajesh"}, "Oliver hands the user to Rajesh for a support question"),
        ("createTodo", {"todoText": "Call the plumber"}, "Rajesh tries to add a todo"),
    ]
    for name, arguments, what in steps:
        result = post(f"/api/sessions/{sid}/tool-calls", {"name": name, "arguments": arguments}, token)
        if not result["allowed"]:
            verdict = f"refused: {result['reason']}"
        elif result.get("status") == "failed":
            verdict = f"ran and failed — {result['result'].get('error', '')}"
        elif name == "switchAgent":
            stage = json.loads(result["result"]["result"])
            verdict = f"allowed — {stage['toolResultText']} (tools now: {', '.join(result.get('tools') or [])})"
        else:
            verdict = f"allowed — {result['result'].get('message', '')}"
        print(f"- {what} ({name}): {verdict}")
        time.sleep(PAUSE)
    print("Done. The session stays open until it idles out.")


if __name__ == "__main__":
    main()
