"""Issue 13, item 23: the API key appears nowhere a user or an attacker can read it.

A scripted OpenAI-compatible server echoes the key in error bodies of every length (so it
straddles any cut), inside successful completions and in redirects, and the key is also in
``--base-url`` (``http://user:KEY@host``). After ``stef eval`` with a store and an LLM cache,
the key is in none of stdout, stderr, the output, the store or the cache.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from hostile import run_stef
from llm_server import LLMServer, Reply, completion

KEY = "sk-leak-0123456789abcdefghij"  # 28 characters, as in the issue


def _replies(port_url: str) -> list[Reply]:
    replies = []
    for k in range(0, 330, 11):  # the key at every offset around the 300-character cut
        replies.append(Reply(status=400, body={"error": {"message": "x" * k + KEY + " y"}}))
    for i in range(6):
        replies.append(
            completion(
                {"verdict": "correct", "confidence": 0.9,
                 "rationale": f"Counts users (your key is {KEY}).", "issues": [KEY]},
                model=f"m-{i}",
            )
        )  # fmt: skip
    replies.append(
        Reply(status=307, body=f"moved, use {KEY}", headers={"Location": f"{port_url}?k={KEY}"})
    )
    replies.append(Reply(status=200, body=f"not json but {KEY}"))
    return replies


def test_the_key_appears_nowhere(tmp_path):
    with LLMServer() as server:
        replies = _replies(server.base_url)
        server.enqueue(*replies)
        n = len(replies)
        src = tmp_path / "in.jsonl"
        src.write_text(
            "".join(
                json.dumps(
                    {"id": f"r{i}", "question": f"How many users are in city {i}?",
                     "sql": f"SELECT COUNT(*) FROM users WHERE city = 'c{i}'"}
                ) + "\n"
                for i in range(n)
            )
        )  # fmt: skip
        url = server.base_url.replace("http://", f"http://bot:{KEY}@")
        run = run_stef(
            ["eval", str(src), "-o", "out.jsonl", "--store", "s.db", "--no-progress",
             "--judge", "openai", "--base-url", url, "--model", "m", "--api-key", KEY,
             "--cache", str(tmp_path / "cache.sqlite"), "--concurrency", "1",
             "--max-retries", "0"],
            tmp_path,
        )  # fmt: skip
        requests = server.chat_requests
    assert run.code == 0, run.stderr[-3000:]
    out = (tmp_path / "out.jsonl").read_text()
    statuses = [json.loads(line)["status"] for line in out.splitlines()]
    assert len(statuses) == n
    assert statuses.count("ok") == 6
    assert set(statuses) == {"ok", "judge_failed"}
    assert "[redacted]" in out
    for where, text in (("stdout", run.stdout), ("stderr", run.stderr), ("output", out)):
        assert KEY not in text, where
        assert KEY[:20] not in text, where  # no cut-off piece of it either
    files = [p for p in tmp_path.iterdir() if p.name.startswith(("s.db", "cache.sqlite"))]
    assert any(p.name == "s.db" for p in files) and any(p.name == "cache.sqlite" for p in files)
    for path in files:
        data = path.read_bytes()
        assert KEY.encode() not in data, path.name
        assert KEY[:20].encode() not in data, path.name
    # the key still authenticates (a Bearer header, never Basic from the URL)
    assert all(r.headers["Authorization"] == f"Bearer {KEY}" for r in requests)
