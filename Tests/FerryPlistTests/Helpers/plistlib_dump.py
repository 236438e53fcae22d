#!/usr/bin/env python3
"""Dumps property lists as Python's plistlib reads them, for cross-checking Ferry's reader in tests.

    plistlib_dump.py FILE...   prints one JSON line per file: {"file": …, "value": …} or {"file": …, "error": …}

Values: dates as {"$date": seconds since 2001}, data as {"$data": base64}, UIDs (and XML {CF$UID: n}) as
{"$uid": n}, reals as {"$real": x}, booleans and integers as themselves.
"""
import base64, datetime, json, plistlib, sys

REFERENCE = datetime.datetime(2001, 1, 1)


def convert(value, depth=0):
    if depth > 600:
        raise ValueError("too deep")
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return {"$real": value}
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return {"$data": base64.b64encode(value).decode()}
    if isinstance(value, datetime.datetime):
        naive = value.replace(tzinfo=None) if value.tzinfo is None else value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return {"$date": (naive - REFERENCE).total_seconds()}
    if isinstance(value, plistlib.UID):
        return {"$uid": value.data}
    if isinstance(value, dict):
        if list(value.keys()) == ["CF$UID"] and isinstance(value["CF$UID"], int):
            return {"$uid": value["CF$UID"]}
        return {str(k): convert(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [convert(v, depth + 1) for v in value]
    raise TypeError(type(value).__name__)


for path in sys.argv[1:]:
    try:
        with open(path, "rb") as handle:
            value = plistlib.load(handle)
        if value is None:
            raise ValueError("plistlib returned None (not a plist)")
        print(json.dumps({"file": path, "value": convert(value)}))
    except (Exception, RecursionError) as error:  # every failure is a result to compare, not a crash
        print(json.dumps({"file": path, "error": f"{type(error).__name__}: {error}"}))
