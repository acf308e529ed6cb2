#!/bin/sh
# Real documents for bench/extraction.py, fetched from Debian packages into .bench-docs/ (not
# committed): licences from base-files, PDF manuals from a texlive documentation package, and
# an HTML manual. Needs apt-get and network access to a Debian mirror.
set -eu
out="$(dirname "$0")/../.bench-docs"
mkdir -p "$out" && cd "$out"
for name in GPL-3 Apache-2.0 GPL-2 LGPL-2.1 Artistic; do cp "/usr/share/common-licenses/$name" . 2>/dev/null || true; done
work=$(mktemp -d)
(cd "$work" && apt-get download texlive-latex-recommended-doc debian-reference-en >/dev/null)
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$work/x"; done
find "$work/x" -name 'listings.pdf' -exec cp {} . \;   # 63 pages: contents, running heads, keys with defaults
find "$work/x" -name 'l3pdfdict.pdf' -exec cp {} . \;  # dates and command names in the margin
find "$work/x" -path '*debian-reference*' -name 'ch02.en.html' -exec cp {} debian-reference-ch02.html \;
rm -rf "$work"
ls -l
