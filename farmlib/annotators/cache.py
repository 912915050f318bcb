"""An on-disk cache of judge replies, keyed by (annotator config, exact prompt).

SQLite, one row per prompt, committed as soon as the reply arrives: a rerun sends no request for
a prompt already answered, a crash mid-batch loses nothing that was answered, and nothing is paid
twice. The raw reply is stored (not just the parsed label) so a better parser can reread it. No
API key is ever part of a key or a row.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path


def cache_key(config: dict, messages: list[dict] | str) -> str:
    """sha256 of the annotator's answer-relevant config and the exact prompt."""
    blob = json.dumps({"config": config, "prompt": messages}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


class AnnotationCache:
    """Thread-safe get/put of ``{"reply": str, "prompt_tokens": int, "completion_tokens": int}``."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self._db.commit()

    def get(self, key: str) -> dict | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM replies WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value: dict) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?)", (key, json.dumps(value)))
            self._db.commit()

    def delete(self, keys: list[str]) -> int:
        """Forget the replies under ``keys``; returns how many were there."""
        with self._lock:
            n = sum(self._db.execute("DELETE FROM replies WHERE key = ?", (k,)).rowcount for k in keys)
            self._db.commit()
        return n

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
