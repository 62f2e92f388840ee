"""Signed cache values (ARCBATT_CACHE_KEY): shared between holders of the key, refused otherwise."""
from __future__ import annotations

import warnings

import pytest

from cache import CacheCorruptionWarning, open_cache
from cache.signing import KEY_ENV


def _open(path, monkeypatch, key):
    if key is None:
        monkeypatch.delenv(KEY_ENV, raising=False)
    else:
        monkeypatch.setenv(KEY_ENV, key)
    return open_cache(f"disk:{path}", "fp")


def test_same_key_reads_what_it_signed(tmp_path, monkeypatch):
    cache = _open(tmp_path, monkeypatch, "k1")
    value = {"grid": [[1, 2], [3, 4]], "fit": 0.5, "raw": b"\x00", "none": None}
    cache.set("task", "a", value)
    cache.set("lease", "l", "owner", ttl=30)
    assert _open(tmp_path, monkeypatch, "k1").get("task", "a") == value
    assert cache.touch_if("lease", "l", "owner", 30)  # leases keep working when signed


@pytest.mark.parametrize("reader_key", ["k2", None])
def test_unsigned_or_other_key_values_are_misses_for_a_key_holder(tmp_path, monkeypatch, reader_key):
    _open(tmp_path, monkeypatch, reader_key).set("task", "a", {"planted": True})
    reader = _open(tmp_path, monkeypatch, "k1")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert reader.get("task", "a") is None
    assert any(issubclass(w.category, CacheCorruptionWarning) and "signature" in str(w.message) for w in caught)


def test_a_signed_value_replayed_under_another_key_is_refused(tmp_path, monkeypatch):
    cache = _open(tmp_path, monkeypatch, "k1")
    cache.set("task", "a", {"attempts": "of task a"})
    raw = cache.store.get(cache.stored_key("task", "a"))
    cache.store.set_many({cache.stored_key("task", "b"): raw}, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cache.get("task", "b") is None
    assert cache.get("task", "a") == {"attempts": "of task a"}
