#!/usr/bin/env python3
"""Writes data/wordfreq/<lang>.txt: the words at least as common as
Zipf 4.0 (one in 100,000 words) in each language the analyzer stems,
most common first, under `@<zipf × 10>` lines.

Source: the `small_<lang>.msgpack.gz` lists of the wordfreq package
(https://github.com/rspeer/wordfreq, data CC BY-SA 4.0). Usage:

    pip download --no-deps wordfreq==3.1.1
    pip install msgpack
    python3 data/wordfreq/generate.py wordfreq-3.1.1-py3-none-any.whl
"""
import gzip
import io
import os
import sys
import zipfile

import msgpack

LANGS = ["en", "fr", "de", "es", "pt", "it", "nl", "sv", "da", "nb",
         "fi", "hu", "ro", "ru", "tr", "el", "ar"]
MIN_ZIPF_X10 = 40

here = os.path.dirname(os.path.abspath(__file__))
wheel = zipfile.ZipFile(sys.argv[1])
for lang in LANGS:
    raw = wheel.read(f"wordfreq/data/small_{lang}.msgpack.gz")
    packed = msgpack.load(gzip.open(io.BytesIO(raw)), raw=False)
    header, buckets = packed[0], packed[1:]
    assert header == {"format": "cB", "version": 1}, header
    out = []
    last = None
    for i, words in enumerate(buckets):
        # bucket i holds words of frequency 10^(-i/100): Zipf 9 - i/100
        zipf_x10 = (900 - i) // 10
        if zipf_x10 < MIN_ZIPF_X10:
            break
        words = [w for w in words if w and not any(c.isspace() for c in w)]
        if not words:
            continue
        if zipf_x10 != last:
            out.append(f"@{zipf_x10}")
            last = zipf_x10
        out.extend(words)
    name = "no" if lang == "nb" else lang
    with open(os.path.join(here, f"{name}.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    print(lang, len(out))
