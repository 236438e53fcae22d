#!/usr/bin/env python3
"""Writes the bundle benchmark's input: an NDJSON file of CloudKit records and a directory of asset files.

Usage: make_bundle_input.py DIR [--records N] [--assets N] [--asset-kib K]

The records follow the Cars Trucks Buses shape (seeds.md §1): vehicles in per-type zones, notes in their
parent's zone with DELETE_SELF references, some vehicles with a photo asset. Asset bytes are random
(photos do not compress). Deterministic for given arguments.
"""
import argparse, json, os, random

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--records", type=int, default=600_000)
    parser.add_argument("--assets", type=int, default=1_400)
    parser.add_argument("--asset-kib", type=int, default=256)
    args = parser.parse_args()
    rng = random.Random(42)
    os.makedirs(os.path.join(args.dir, "assets"), exist_ok=True)
    photos = []
    for i in range(args.assets):
        name = f"photo-{i:05d}.jpg"
        with open(os.path.join(args.dir, "assets", name), "wb") as f:
            f.write(rng.randbytes(args.asset_kib * 1024 + rng.randrange(1024)))
        photos.append(name)
    words = ["oil", "tyres", "service", "brake", "winch", "seat", "door", "mirror", "ünïcødé", "✓", "lift", "plate"]
    with open(os.path.join(args.dir, "records.ndjson"), "w") as out:
        vehicles = max(1, args.records // 4)
        types = ["Car", "Truck", "Bus"]
        for i in range(vehicles):
            t = types[i % 3]
            name = f"{t}.{i:08X}-0000-4000-8000-{rng.getrandbits(48):012X}"
            fields = {
                "name": {"value": f"{t} {i}", "type": "STRING"},
                "added": {"value": 1479340800000 + i * 1000, "type": "TIMESTAMP"},
                "lastUpdate": {"value": 1479340900000 + i * 1000, "type": "TIMESTAMP"},
                "mileage": {"value": rng.randrange(10**6), "type": "INT64"},
                "rating": {"value": rng.random() * 5, "type": "DOUBLE"},
            }
            if i < len(photos):
                fields["photo"] = {"value": {"path": photos[i]}, "type": "ASSET"}
            zone = {"zoneName": f"{t}Zone", "ownerRecordName": "__defaultOwner__"}
            out.write(json.dumps({"recordName": name, "recordType": t, "zoneID": zone, "fields": fields}, ensure_ascii=False) + "\n")
            for n in range(3):
                text = " ".join(rng.choice(words) for _ in range(12 + rng.randrange(20)))
                note = {"recordName": f"Note.{i:08X}-{n:04X}-4000-8000-{rng.getrandbits(48):012X}", "recordType": "Note", "zoneID": zone,
                        "fields": {"text": {"value": text, "type": "STRING"},
                                   "added": {"value": 1479341000000 + i * 1000 + n, "type": "TIMESTAMP"},
                                   "parent": {"value": {"recordName": name, "action": "DELETE_SELF"}, "type": "REFERENCE"},
                                   "tags": {"value": ["a", "b"], "type": "STRING_LIST"}}}
                out.write(json.dumps(note, ensure_ascii=False) + "\n")

if __name__ == "__main__":
    main()
